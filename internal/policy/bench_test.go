package policy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/route"
)

// BenchmarkEvaluate measures one decision against 10, 1,000 and 10,000
// grants, each on its own action. With rule indexing on the action id the
// time should barely grow with the number of grants.
func BenchmarkEvaluate(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("grants=%d", n), func(b *testing.B) {
			var g strings.Builder
			for i := range n {
				fmt.Fprintf(&g, "  - {principal: \"operator://u%d\", actions: [{action: \"kind%d:verb%d\"}]}\n", i, i%50, i)
			}
			s := mustLoad(b, nil, oneGrant(g.String()))
			in := input(fmt.Sprintf("kind%d:verb%d", 7%50, 7), "operator://u7")
			if o := route.Combine(s.Evaluate(context.Background(), in).Findings); o.Route != route.Accept {
				b.Fatalf("setup: %s %v", o.Route, o.HardBlockers)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				s.Evaluate(ctx, in)
			}
		})
	}
}
