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

// benchAction stands in for a catalog view: Rego reads it as input.action.
type benchAction struct {
	ToolID      string            `json:"tool_id"`
	ActionID    string            `json:"action_id"`
	RiskLevel   int               `json:"risk_level"`
	Mutates     []string          `json:"mutates"`
	Requires    []string          `json:"requires"`
	Annotations map[string]string `json:"annotations"`
	Rules       []map[string]any  `json:"rules"`
}

// BenchmarkEvaluateWithAction is BenchmarkEvaluate's 10 grants with an
// action view in the input, as every catalogued call has: its conversion
// for Rego is done once per view and Set.
func BenchmarkEvaluateWithAction(b *testing.B) {
	var g strings.Builder
	for i := range 10 {
		fmt.Fprintf(&g, "  - {principal: \"operator://u%d\", actions: [{action: \"kind%d:verb%d\"}]}\n", i, i, i)
	}
	s := mustLoad(b, nil, oneGrant(g.String()))
	in := input("kind7:verb7", "operator://u7")
	rules := make([]map[string]any, 8)
	for i := range rules {
		rules[i] = map[string]any{"kind": "regex", "argument": fmt.Sprintf("/arg%d", i), "patterns": []string{"^[a-z]+$", "^x"}}
	}
	in.Action = &benchAction{ToolID: "kind7.verb7", ActionID: "kind7:verb7", RiskLevel: 2, Mutates: []string{"orders:*"},
		Requires: []string{"network:api.example.com"}, Annotations: map[string]string{"title": "Verb seven"}, Rules: rules}
	if o := route.Combine(s.Evaluate(context.Background(), in).Findings); o.Route != route.Accept {
		b.Fatalf("setup: %s %v", o.Route, o.HardBlockers)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s.Evaluate(ctx, in)
	}
}
