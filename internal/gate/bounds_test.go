package gate

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/route"
)

// numbersTool is a catalogued tool whose input schema checks a list of
// numbers with every numeric keyword: the most arithmetic an argument
// schema can ask of the validator per byte of event.
const numbersTool = `---
name: Numbers
id: test.numbers
description: takes a list of amounts
version: 1.0.0
inputs:
  type: object
  properties:
    n: { type: array, items: { type: number, minimum: -500, maximum: 500, multipleOf: 0.01 } }
outputs: { type: object }
---
`

func numbersEngine(tb testing.TB) *Engine {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "numbers"), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "numbers", "TOOL.md"), []byte(numbersTool), 0o644); err != nil {
		tb.Fatal(err)
	}
	c, err := catalog.Load([]string{dir})
	if err != nil {
		tb.Fatal(err)
	}
	return New(WithClock(func() time.Time { return fixedNow }),
		WithCatalog(func() *catalog.Catalog { return c }, UnknownDefer, catalog.ArgumentsEnforce))
}

// numbersEvent is an event for numbersTool with count copies of literal.
func numbersEvent(literal string, count int) string {
	return `{"tool_name":"test.numbers","tool_category":"public_read","authorization_state":"none","evidence_refs":[],` +
		`"risk_domain":"research","proposed_arguments":{"n":[` + strings.TrimSuffix(strings.Repeat(literal+",", count), ",") +
		`]},"recommended_route":"accept"}`
}

// An amount of 1e-999999 is above exclusiveMinimum 0 and below maximum
// 500, so the refund used to be accepted, for a number the tool would read
// as 0 (or fail on) and whose validation cost tens of milliseconds.
func TestWildNumberNeverAccepted(t *testing.T) {
	t.Parallel()
	e := catalogEngine(t, UnknownDefer)
	for _, amount := range []string{"1e-999999", "20.5e-999999", "1e401"} {
		ev := strings.Replace(confirmedRefund, `"amount":20.5`, `"amount":`+amount, 1)
		d := e.Decide(context.Background(), Request{Event: decode(t, []byte(ev))})
		if d.Route != route.Refuse || d.Execute || len(d.HardBlockers) != 1 || d.HardBlockers[0] != "argument_number_out_of_range" {
			t.Errorf("amount %s: route %s blockers %v", amount, d.Route, d.HardBlockers)
		}
		if len(d.Findings) != 1 || !strings.Contains(d.Findings[0].Message, "$.proposed_arguments.amount") ||
			strings.Contains(d.Findings[0].Message, amount) {
			t.Errorf("amount %s: findings %+v", amount, d.Findings)
		}
	}
	// The same refund with an ordinary amount is accepted.
	if d := e.Decide(context.Background(), Request{Event: decode(t, []byte(confirmedRefund))}); d.Route != route.Accept {
		t.Fatalf("ordinary refund: route %s blockers %v", d.Route, d.HardBlockers)
	}
}

const confirmedRefund = `{"tool_name":"issue_refund","tool_category":"write","authorization_state":"confirmed",
	"evidence_refs":[{"source_id":"approval.1","kind":"approval","trust_tier":"verified","redaction_status":"redacted","freshness":{"status":"fresh"},"provenance":"connector","retrieved_at":"2026-11-20T11:00:00Z"}],
	"risk_domain":"commerce","proposed_arguments":{"payment_id":"p-1","reason":"goodwill","amount":20.5},"recommended_route":"accept"}`

// Wild numbers are refused before the schema validator sees them: deciding
// on a list of them allocates a few kilobytes, where validating them used
// to allocate megabytes per number (and cost tens of milliseconds each).
func TestWildNumbersCostNoArithmetic(t *testing.T) {
	e := numbersEngine(t)
	doc := decode(t, []byte(numbersEvent("1e999999", 20)))
	d := e.Decide(context.Background(), Request{Event: doc})
	if d.Route != route.Refuse || len(d.HardBlockers) != 1 || d.HardBlockers[0] != "argument_number_out_of_range" {
		t.Fatalf("route %s blockers %v", d.Route, d.HardBlockers)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	e.Decide(context.Background(), Request{Event: doc})
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("one decision allocated %d bytes", n)
	}
}

// Arguments that fail the input schema are validated once: the errors in
// the answer are the ones behind the finding, in warn mode too.
func TestArgumentErrorsFromTheOneValidation(t *testing.T) {
	t.Parallel()
	c := exampleCatalog(t)
	for _, mode := range []catalog.ArgumentMode{catalog.ArgumentsEnforce, catalog.ArgumentsWarn} {
		e := New(WithClock(func() time.Time { return fixedNow }),
			WithCatalog(func() *catalog.Catalog { return c }, UnknownDefer, mode))
		ev := strings.Replace(confirmedRefund, `"amount":20.5`, `"amount":900`, 1)
		d := e.Decide(context.Background(), Request{Event: decode(t, []byte(ev))})
		if len(d.ArgumentErrors) != 1 || d.ArgumentErrors[0].Path != "/amount" {
			t.Errorf("%s: argument errors %+v", mode, d.ArgumentErrors)
		}
		want := route.Refuse
		if mode == catalog.ArgumentsWarn {
			want = route.Accept
		}
		if d.Route != want {
			t.Errorf("%s: route %s blockers %v", mode, d.Route, d.HardBlockers)
		}
	}
}

// BenchmarkDecideNumbers decides events full of numbers against a schema
// that checks each with minimum, maximum and multipleOf: ordinary numbers,
// numbers at the bounds (the most expensive gated still validates) and
// numbers beyond them (refused unvalidated); each in a 64 KiB body (more
// values than are validated) and at catalog.MaxArgumentValues (the most
// that are). Figures in docs/security-notes/input.md.
func BenchmarkDecideNumbers(b *testing.B) {
	e := numbersEngine(b)
	for _, bc := range []struct{ name, literal string }{
		{"ordinary", "1.25"},
		{"bound_1e400", "1e400"},
		{"bound_1e-400", "1e-400"},
		{"bound_40_digits_e-400", "1.234567890123456789012345678901234567891e-361"},
		{"wild_1e999999", "1e999999"},
	} {
		fill := (64<<10 - len(numbersEvent(bc.literal, 0))) / (len(bc.literal) + 1)
		for _, size := range []struct {
			name  string
			count int
		}{{"64KiB", fill}, {"max_values", catalog.MaxArgumentValues - 2}} { // less the arguments object and the list
			doc := decode(b, []byte(numbersEvent(bc.literal, size.count)))
			b.Run(bc.name+"/"+size.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					e.Decide(context.Background(), Request{Event: doc})
				}
			})
		}
	}
}
