package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"
)

// fixedNow is the clock of every table test: evidence freshness depends on it.
var fixedNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func decode(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return m
}

type caseFile struct {
	Cases []struct {
		Name          string          `json:"name"`
		ExpectedRoute string          `json:"expected_route"`
		Event         json.RawMessage `json:"event"`
	} `json:"cases"`
}

// The hard blockers each shipped case must produce, read off the reference
// page section by section (the case files state only routes).
var wantBlockers = map[string][]string{
	"safe_public_read_accept":           {},
	"private_read_accept_authenticated": {},
	"private_read_ask_user_claimed":     {"private_read_not_authenticated"},
	"write_accept_confirmed":            {},
	// The summary "No authenticated ... context" supports authenticated, so
	// the high-risk write rule runs at authenticated; the runtime refuses.
	"unsafe_write_refuse_no_auth": {"high_risk_write_missing_explicit_confirmation",
		"write_missing_explicit_confirmation", "write_missing_validation_or_confirmation", "runtime_refusal"},
	"unknown_tool_defer":              {"unknown_tool_category"},
	"public_read_accept":              {},
	"write_missing_confirmation_ask":  {"high_risk_write_missing_explicit_confirmation", "write_missing_explicit_confirmation", "write_missing_validation_or_confirmation"},
	"private_read_missing_auth_defer": {"private_read_not_authenticated", "missing_evidence_refs"},
	"unknown_destructive_refuse":      {"unknown_tool_category", "missing_evidence_refs", "runtime_refusal"},
}

func TestShippedCases(t *testing.T) {
	t.Parallel()
	e := New(WithClock(func() time.Time { return fixedNow }))
	for _, file := range []string{"testdata/aana-canonical-cases.json", "testdata/contract-v1-examples.json"} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var cf caseFile
		if err := json.Unmarshal(raw, &cf); err != nil {
			t.Fatal(err)
		}
		if len(cf.Cases) == 0 {
			t.Fatalf("%s: no cases", file)
		}
		for _, c := range cf.Cases {
			t.Run(c.Name, func(t *testing.T) {
				d := e.Decide(context.Background(), Request{Event: decode(t, c.Event)})
				if d.Route.String() != c.ExpectedRoute {
					t.Errorf("route = %s, want %s; findings %+v", d.Route, c.ExpectedRoute, d.Findings)
				}
				want, ok := wantBlockers[c.Name]
				if !ok {
					t.Fatalf("no expected blockers for %s", c.Name)
				}
				if !slices.Equal(d.HardBlockers, want) {
					t.Errorf("hard_blockers = %v, want %v", d.HardBlockers, want)
				}
				if d.Execute != (c.ExpectedRoute == "accept") || d.Outcome().Pass() != d.Execute {
					t.Errorf("execute = %v, gate_decision = %s for route %s", d.Execute, d.Outcome().GateDecision(), d.Route)
				}
			})
		}
	}
}
