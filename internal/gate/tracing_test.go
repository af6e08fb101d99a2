package gate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/tracing"
)

// exampleEvent is examples/events/<name>.json, decoded as the server does
// (numbers exact).
func exampleEvent(t testing.TB, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("../../examples/events/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// A stage that panics still ends its span, and the decision span says
// gated failed, as the refusal does.
func TestTracedPanicEndsSpansAndMarksTheDecision(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	e := gate.New(gate.WithTracing(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))),
		gate.WithCatalog(func() *catalog.Catalog { panic("catalog snapshot corrupted") }, gate.UnknownAllow, catalog.ArgumentsEnforce))
	d := e.Decide(context.Background(), gate.Request{Event: exampleEvent(t, "search_docs_accept")})
	if d.Route != route.Refuse {
		t.Fatalf("route %v, want refuse", d.Route)
	}
	if started, ended := len(sr.Started()), len(sr.Ended()); started != ended {
		t.Fatalf("%d spans started, %d ended", started, ended)
	}
	var decision, cat sdktrace.ReadOnlySpan
	for _, s := range sr.Ended() {
		switch s.Name() {
		case tracing.SpanDecision:
			decision = s
		case tracing.SpanCatalog:
			cat = s
		}
	}
	if decision == nil || cat == nil {
		t.Fatal("the decision or catalog span is missing")
	}
	if decision.Status().Code != codes.Error {
		t.Errorf("decision span status %v, want an error", decision.Status())
	}
	for _, kv := range decision.Attributes() {
		if kv.Key == tracing.Route && kv.Value.AsString() != "refuse" {
			t.Errorf("decision span route %s", kv.Value.AsString())
		}
	}
}

// The no-op provider leaves the engine untraced: deciding costs no
// allocation more than with no tracing at all.
func TestNoopTracingAllocatesNothing(t *testing.T) {
	ev := exampleEvent(t, "send_email_ask")
	plain, noopTraced := gate.New(), gate.New(gate.WithTracing(noop.NewTracerProvider()))
	decide := func(e *gate.Engine) func() {
		return func() { e.Decide(context.Background(), gate.Request{Event: ev}) }
	}
	if a, b := fewestAllocs(decide(plain)), fewestAllocs(decide(noopTraced)); b > a {
		t.Fatalf("%v allocations per decision with the no-op provider, %v without tracing", b, a)
	}
}

// fewestAllocs is the smallest allocation count of one call over many: under
// the race detector sync.Pool drops a quarter of what is put back, at random,
// so a mean over runs differs between two identical engines.
func fewestAllocs(f func()) float64 {
	fewest := testing.AllocsPerRun(1, f)
	for range 200 {
		fewest = min(fewest, testing.AllocsPerRun(1, f))
	}
	return fewest
}
