package gate

import (
	"context"
	"os"
	"testing"
)

// BenchmarkDecide measures the in-process decision from a decoded event:
// normalisation, schema validation, every contract rule, combination and
// the envelope. Decoding and encoding JSON are measured by the server's
// benchmark.
func BenchmarkDecide(b *testing.B) {
	for _, name := range []string{"send_email_ask", "send_refund_accept", "search_docs_accept"} {
		raw, err := os.ReadFile("../../examples/events/" + name + ".json")
		if err != nil {
			b.Fatal(err)
		}
		doc := decode(b, raw)
		e := New()
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d := e.Decide(context.Background(), Request{Event: doc}); d.DecisionID == "" {
					b.Fatal("no decision")
				}
			}
		})
	}
}
