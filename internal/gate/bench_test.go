package gate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/gatedhq/gated/internal/envelope"
	"github.com/gatedhq/gated/internal/gate"
)

// BenchmarkDecide measures the in-process decision from a decoded event:
// normalisation, schema validation, every contract rule, combination and
// the envelope (envelope.From). Decoding and encoding JSON are measured by
// the server's benchmark.
func BenchmarkDecide(b *testing.B) {
	for _, name := range []string{"send_email_ask", "send_refund_accept", "search_docs_accept"} {
		raw, err := os.ReadFile("../../examples/events/" + name + ".json")
		if err != nil {
			b.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			b.Fatal(err)
		}
		e := gate.New()
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if a := envelope.From(e.Decide(context.Background(), gate.Request{Event: doc})); a.DecisionID == "" {
					b.Fatal("no decision")
				}
			}
		})
	}
}
