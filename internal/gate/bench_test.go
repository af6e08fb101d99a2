package gate_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/envelope"
	"github.com/gatedhq/gated/internal/gate"
)

// BenchmarkDecide measures the in-process decision from a decoded event:
// normalisation, schema validation, every contract rule, combination and
// the envelope (envelope.From). Decoding and encoding JSON are measured by
// the server's benchmark.
func BenchmarkDecide(b *testing.B) {
	for _, name := range []string{"send_email_ask", "send_refund_accept", "search_docs_accept"} {
		doc := exampleEvent(b, name)
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

// BenchmarkDecideScreened is BenchmarkDecide with the audit record built,
// so every screening of the decision path is in it: the request's evidence
// checked for secrets, and each recorded field screened. The recorder
// discards the record: the sink's cost is measured by the audit benchmarks.
func BenchmarkDecideScreened(b *testing.B) {
	for _, name := range []string{"send_email_ask", "send_refund_accept", "search_docs_accept"} {
		doc := exampleEvent(b, name)
		e := gate.New(gate.WithAudit(discard{}, audit.NewRedactor([]byte("bench-key")), "bench"))
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if a := envelope.From(e.Decide(context.Background(), gate.Request{Event: doc, TokenName: "bench-token"})); a.DecisionID == "" {
					b.Fatal("no decision")
				}
			}
		})
	}
}

// discard is an audit recorder that keeps nothing.
type discard struct{}

func (discard) Record(context.Context, *audit.Record) (audit.Result, error) {
	return audit.Result{Status: audit.StatusWritten}, nil
}
func (discard) Close(context.Context) error       { return nil }
func (discard) Ready() bool                       { return true }
func (discard) Stored(*audit.Record) audit.Result { return audit.Result{Status: audit.StatusWritten} }

// BenchmarkDecideScreenedFresh is BenchmarkDecideScreened on the refund
// event with evidence ids and summaries no decision sent before, so no
// screening is remembered (redact.HasSecret's cache of clean strings): the
// cost of screening text gated has not seen.
func BenchmarkDecideScreenedFresh(b *testing.B) {
	doc := exampleEvent(b, "send_refund_accept")
	refs := doc["evidence_refs"].([]any)
	e := gate.New(gate.WithAudit(discard{}, audit.NewRedactor([]byte("bench-key")), "bench"))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for _, r := range refs {
			n++
			ref := r.(map[string]any)
			ref["source_id"] = "ticket.T-" + strconv.Itoa(n)
			ref["summary"] = "Reviewed by the support lead, case " + strconv.Itoa(n) + "."
		}
		if a := envelope.From(e.Decide(context.Background(), gate.Request{Event: doc, TokenName: "bench-token"})); a.DecisionID == "" {
			b.Fatal("no decision")
		}
	}
}
