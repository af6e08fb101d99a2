package envelope_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/envelope"
	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
)

// BenchmarkAnswer encodes the answer to the HTTP harness's event on its
// full path (examples/catalog and policy): "append" is AppendJSON, what
// every answer is written with, "reflect" encoding/json, which wrote them
// before.
func BenchmarkAnswer(b *testing.B) {
	cat, err := catalog.Load([]string{"../../examples/catalog"})
	if err != nil {
		b.Fatal(err)
	}
	pol, err := policy.Load([]string{"../../examples/policy"}, cat)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := os.ReadFile("../../bench/cmd/benchhttp/event.json")
	if err != nil {
		b.Fatal(err)
	}
	ev, err := eventcodec.Decode(raw, eventcodec.DefaultMaxDepth)
	if err != nil {
		b.Fatal(err)
	}
	e := gate.New(gate.WithClock(func() time.Time { return time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) }),
		gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce),
		gate.WithPolicy(func() *policy.Set { return pol }, policy.NewLimiter()))
	a := envelope.From(e.Decide(context.Background(), gate.Request{Event: ev, Principals: []string{"bot://support-agent"}}))
	if a.Action == nil || a.Policy == nil {
		b.Fatal("the answer has no action or policy block")
	}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			if buf, err = a.AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("reflect", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			out, err := json.Marshal(a)
			if err != nil {
				b.Fatal(err)
			}
			n = len(out)
		}
		b.SetBytes(int64(n))
	})
}
