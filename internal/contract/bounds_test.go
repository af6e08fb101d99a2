package contract_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/envelope"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
)

// The codes and bounds are spelled out rather than taken from the package,
// so that these tests also run, and fail, against code without the bounds.
const (
	numberOutOfRange = "argument_number_out_of_range"
	maxDigits        = 40
	maxExponent      = 400
)

// decodeJSON decodes raw the way every surface does (numbers as written).
func decodeJSON(t testing.TB, raw string) obj {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var m obj
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Every IEEE double as an encoder writes it, and ordinary integers up to
// 128 bits, are numbers gated decides on.
func TestNumbersInRangeAccepted(t *testing.T) {
	t.Parallel()
	for _, n := range []string{
		"0", "-0", "1", "-1.5", "0.5", "1e400", "-1e-400", "1E+400", "0.1e401", "1.5e-399",
		"5e-324", "4.9406564584124654e-324", "2.2250738585072014e-308", "1.7976931348623157e308",
		"-1.7976931348623157E+308", "9007199254740993", "18446744073709551615",
		"340282366920938463463374607431768211455",  // 2^128-1: 39 digits
		"1234567890123456789012345678901234567890", // 40 digits
		"0.000001", "0.0000012345678901234567", "100000000000000000000", "1e0000000000000000000000001",
		"0." + strings.Repeat("0", 300) + "1",
	} {
		doc := event(t, obj{"proposed_arguments": obj{"n": json.Number(n), "a": []any{json.Number(n)}}})
		if p := contract.Prepare(doc); p.Event == nil {
			t.Errorf("%s: refused: %+v %+v", n, p.Findings, p.ValidationErrors)
		}
	}
}

// A number whose digits or exponent would make exact arithmetic expensive
// (1e999999 costs tens of milliseconds and megabytes in schema validation,
// and passes "exclusiveMinimum: 0") is refused wherever it is, with its
// path and never its value.
func TestNumbersOutOfRangeRefused(t *testing.T) {
	t.Parallel()
	wild := []string{
		"1e999999", "-1e-999999", "1e401", "1e-401", "1.5e-400", "0.1e-400", "1e99999999999999999999999999",
		"12345678901234567890123456789012345678901", // 41 digits
		"1" + strings.Repeat("0", 500), "0." + strings.Repeat("0", 500) + "1", "1." + strings.Repeat("0", 60),
		fmt.Sprintf("1e%d", maxExponent+1), fmt.Sprintf("1e-%d", maxExponent+1),
	}
	places := []struct {
		over obj
		path string
	}{
		{obj{"proposed_arguments": obj{"a": obj{"b": []any{"x", nil}}}}, "$.proposed_arguments.a.b[1]"},
		{obj{"proposed_arguments": obj{"x-y": []any{nil}}}, `$.proposed_arguments["x-y"][0]`},
		{obj{"evidence_refs": []any{ref(obj{"freshness": obj{"status": "fresh", "age_hours": nil}})}}, "$.evidence_refs[0].freshness.age_hours"},
		{obj{"agent_id": nil}, "$.agent_id"},
		{obj{"unknown_field": obj{"deep": nil}}, "$.unknown_field.deep"},
	}
	for _, n := range wild {
		for _, pl := range places {
			doc := event(t, placeNumber(pl.over, json.Number(n)))
			name := n
			if len(name) > 20 {
				name = name[:20] + "…"
			}
			t.Run(name+"@"+pl.path, func(t *testing.T) {
				p := contract.Prepare(doc)
				if p.Event != nil || len(p.Findings) != 1 || p.Findings[0].Code != numberOutOfRange || p.Findings[0].Route != route.Refuse {
					t.Fatalf("not refused for the number: %+v %+v", p.Findings, p.ValidationErrors)
				}
				if len(p.ValidationErrors) != 1 || p.ValidationErrors[0].Path != pl.path {
					t.Errorf("validation errors %+v, want one at %s", p.ValidationErrors, pl.path)
				}
				if !strings.Contains(p.Findings[0].Message, pl.path) {
					t.Errorf("finding message %q does not name %s", p.Findings[0].Message, pl.path)
				}
				d := decide(t, doc)
				expect(t, d, route.Refuse, numberOutOfRange)
				body, _ := json.Marshal(envelope.From(d))
				if bytes.Contains(body, []byte(n)) {
					t.Errorf("the answer echoes the number")
				}
				if v := gate.Validate(doc); v.Valid || len(v.Errors) != 1 || v.Errors[0].Path != pl.path {
					t.Errorf("validate: %+v", v)
				}
			})
		}
	}
}

// placeNumber copies over, putting n where it holds nil.
func placeNumber(over obj, n json.Number) obj {
	var put func(v any) any
	put = func(v any) any {
		switch v := v.(type) {
		case nil:
			return n
		case map[string]any:
			out := obj{}
			for k, x := range v {
				out[k] = put(x)
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = put(x)
			}
			return out
		}
		return v
	}
	return put(over).(obj)
}

// Several wild numbers: the answer lists them in a stable order, at most
// ten, whatever the map order.
func TestNumbersOutOfRangeListedStably(t *testing.T) {
	t.Parallel()
	args := obj{}
	for i := range 30 {
		args[fmt.Sprintf("k%02d", i)] = json.Number("1e999999")
	}
	var first []contract.ValidationError
	for range 5 {
		p := contract.Prepare(event(t, obj{"proposed_arguments": args}))
		if len(p.ValidationErrors) != 10 || p.ValidationErrors[0].Path != "$.proposed_arguments.k00" {
			t.Fatalf("validation errors %+v", p.ValidationErrors)
		}
		if first == nil {
			first = p.ValidationErrors
		} else if !slices.Equal(first, p.ValidationErrors) {
			t.Fatalf("unstable: %+v then %+v", first, p.ValidationErrors)
		}
	}
}

// evidence_refs: [{}] × 12,000 fits in 36 KB. Refs used to be copied and
// filled with defaults before the 128-ref cap applied: 8.3 MB and 48,000
// allocations per decision, 1.5 GB of RSS at 200 concurrent requests. The
// cap now applies to the decoded document before anything is copied.
func TestEvidenceRefFloodIsCappedBeforeCopying(t *testing.T) {
	doc := decodeJSON(t, `{"tool_name":"x","tool_category":"write","authorization_state":"confirmed","evidence_refs":[`+
		strings.Repeat(`{},`, 11999)+`{}],"risk_domain":"commerce","proposed_arguments":{},"recommended_route":"accept"}`)
	check := func(p *contract.Prepared) {
		t.Helper()
		if p.Event != nil || len(p.Findings) != 1 || p.Findings[0].Code != route.CodeSchemaValidationFailed ||
			len(p.ValidationErrors) != 1 || p.ValidationErrors[0].Path != "$.evidence_refs" || p.ValidationErrors[0].Keyword != "maxItems" {
			t.Fatalf("findings %+v errors %+v", p.Findings, p.ValidationErrors)
		}
	}
	check(contract.Prepare(doc))
	expect(t, decide(t, doc), route.Refuse, route.CodeSchemaValidationFailed)

	// A whole decision, envelope included, allocates a few kilobytes; the
	// bound is generous, and far below what one flood cost before.
	allocs := testing.AllocsPerRun(20, func() { decide(t, doc) })
	perDecision := bytesPerRun(20, func() { decide(t, doc) })
	t.Logf("%.0f allocations, %d bytes per decision", allocs, perDecision)
	if allocs > 500 || perDecision > 256<<10 {
		t.Errorf("a capped flood costs %.0f allocations and %d bytes per decision", allocs, perDecision)
	}
}

// bytesPerRun is the mean heap allocation of f, in bytes.
func bytesPerRun(runs int, f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}

// The other collections Prepare copies are bounded too: the top-level and
// ref objects (cloned), and each ref's supports and contradicts (copied
// into the typed event).
func TestCopiedCollectionsBounded(t *testing.T) {
	t.Parallel()
	claims := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = fmt.Sprintf("claim.%d", i)
		}
		return out
	}
	if p := contract.Prepare(event(t, obj{"evidence_refs": []any{ref(obj{"supports": claims(64), "contradicts": claims(0)})}})); p.Event == nil {
		t.Fatalf("64 supports refused: %+v", p.ValidationErrors)
	}
	extra := obj{}
	for i := range 6 {
		extra[fmt.Sprintf("x%d", i)] = true
	}
	fullRef := ref(obj{"summary": "s", "retrieved_at": "2026-11-20", "citation_url": "u", "retrieval_url": "u",
		"supports": []any{}, "contradicts": []any{}})
	for _, tc := range []struct {
		over    obj
		path    string
		keyword string
	}{
		{obj{"evidence_refs": []any{ref(nil), ref(obj{"supports": claims(65)})}}, "$.evidence_refs[1].supports", "maxItems"},
		{obj{"evidence_refs": []any{ref(obj{"contradicts": claims(1000)})}}, "$.evidence_refs[0].contradicts", "maxItems"},
		{extra, "$", "maxProperties"},
		{obj{"evidence_refs": []any{override(fullRef, obj{"extra": 1})}}, "$.evidence_refs[0]", "maxProperties"},
	} {
		p := contract.Prepare(event(t, tc.over))
		if p.Event != nil || !hasPath(p.ValidationErrors, tc.path) || p.ValidationErrors[0].Keyword != tc.keyword {
			t.Errorf("%s: %+v", tc.path, p.ValidationErrors)
		}
		expect(t, decide(t, event(t, tc.over)), route.Refuse, route.CodeSchemaValidationFailed)
	}
	// A ref with every field the contract defines is not too large.
	if p := contract.Prepare(event(t, obj{"evidence_refs": []any{fullRef}})); p.Event == nil {
		t.Fatalf("a ref with all its fields refused: %+v", p.ValidationErrors)
	}
}

// Identifiers with control or invisible formatting characters are refused
// with a validation error at their path: a NUL in tool_name used to be
// accepted, logged and sent to the audit store (whose text columns cannot
// hold it). What the answer repeats of them is cleaned.
func TestIdentifiersRefuseControlCharacters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		over obj
		path string
	}{
		{obj{"tool_name": "get\x00weather"}, "$.tool_name"},
		{obj{"tool_name": "get_weather\n"}, "$.tool_name"},
		{obj{"tool_name": "get\tweather"}, "$.tool_name"},
		{obj{"tool_name": "get_weather\x7f"}, "$.tool_name"},
		{obj{"tool_name": "get\u0085weather"}, "$.tool_name"}, // C1 next line
		{obj{"tool_name": "get\u200bweather"}, "$.tool_name"}, // zero-width space
		{obj{"tool_name": "get\u202eweather"}, "$.tool_name"}, // right-to-left override
		{obj{"tool_name": "get\u2028weather"}, "$.tool_name"}, // line separator
		{obj{"agent_id": "agent\x1b[2J"}, "$.agent_id"},
		{obj{"request_id": "req\r\nX-Injected: 1"}, "$.request_id"},
		{obj{"evidence_refs": []any{"draft\x00:1"}}, "$.evidence_refs[0]"},
		{obj{"evidence_refs": []any{ref(nil), ref(obj{"source_id": "doc\x00"})}}, "$.evidence_refs[1].source_id"},
		{obj{"authorization_subject": obj{"subject_type": "user", "subject_ref": "u\x00"}}, "$.authorization_subject.subject_ref"},
	} {
		p := contract.Prepare(event(t, tc.over))
		if p.Event != nil || !hasPath(p.ValidationErrors, tc.path) {
			t.Errorf("%q: not refused at %s: %+v", tc.over, tc.path, p.ValidationErrors)
			continue
		}
		d := decide(t, event(t, tc.over))
		expect(t, d, route.Refuse, route.CodeSchemaValidationFailed)
		if strings.ContainsFunc(d.ToolName, unicode.IsControl) || strings.ContainsRune(d.ToolName, '\u202e') {
			t.Errorf("the answer repeats the tool name %q", d.ToolName)
		}
	}
	// Ordinary names, including non-ASCII ones, pass.
	for _, name := range []string{"get_weather", "mcp__github__create_issue", "Bash", "天気", "météo.get", "a-b/c:d"} {
		if p := contract.Prepare(event(t, obj{"tool_name": name, "agent_id": name, "request_id": name})); p.Event == nil {
			t.Errorf("%q refused: %+v", name, p.ValidationErrors)
		}
	}
}
