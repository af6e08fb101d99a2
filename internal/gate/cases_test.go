package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/route"
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
				if d.Execute != (c.ExpectedRoute == "accept") || (d.GateDecision == "pass") != d.Execute {
					t.Errorf("execute = %v, gate_decision = %s for route %s", d.Execute, d.GateDecision, d.Route)
				}
			})
		}
	}
}

// The reference's published response for send_email: the fields an AANA
// client reads must match it.
func TestReferenceResponseExample(t *testing.T) {
	raw, err := os.ReadFile("testdata/aana-response-example.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	ev := `{"tool_name":"send_email","tool_category":"write","authorization_state":"user_claimed","evidence_refs":["draft_id:123"],"risk_domain":"customer_support","proposed_arguments":{"to":"customer@example.com"},"recommended_route":"accept"}`
	d := New(WithClock(func() time.Time { return fixedNow })).Decide(context.Background(), Request{Event: decode(t, []byte(ev))})
	body, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"contract_version", "tool_name", "tool_category", "authorization_state", "risk_domain",
		"gate_decision", "recommended_action", "candidate_gate", "aana_route", "runtime_recommended_route",
		"aix", "hard_blockers", "reasons", "evidence_ref_count", "evidence_integrity", "authorization_report", "route"} {
		g, _ := json.Marshal(got[k])
		w, _ := json.Marshal(want[k])
		if !bytes.Equal(g, w) {
			t.Errorf("%s:\n got  %s\n want %s", k, g, w)
		}
	}
	for _, k := range []string{"route", "gate_decision", "hard_blockers", "candidate_gate", "aix_score"} {
		g, _ := json.Marshal(got["architecture_decision"].(map[string]any)[k])
		w, _ := json.Marshal(want["architecture_decision"].(map[string]any)[k])
		if !bytes.Equal(g, w) {
			t.Errorf("architecture_decision.%s: got %s want %s", k, g, w)
		}
	}
	ep, wp := got["execution_policy"].(map[string]any), want["execution_policy"].(map[string]any)
	for _, k := range []string{"mode", "aana_allows_execution", "execution_allowed", "fail_closed", "reason", "required_route", "route_table", "observed"} {
		g, _ := json.Marshal(ep[k])
		w, _ := json.Marshal(wp[k])
		if !bytes.Equal(g, w) {
			t.Errorf("execution_policy.%s:\n got  %s\n want %s", k, g, w)
		}
	}
	if d.Route != route.Ask {
		t.Fatalf("route %s", d.Route)
	}
}
