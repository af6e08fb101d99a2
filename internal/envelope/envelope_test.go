package envelope_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/envelope"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
)

// The reference's published response for send_email: the fields an AANA
// client reads must match it.
func TestReferenceResponseExample(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/aana-response-example.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	ev := `{"tool_name":"send_email","tool_category":"write","authorization_state":"user_claimed","evidence_refs":["draft_id:123"],"risk_domain":"customer_support","proposed_arguments":{"to":"customer@example.com"},"recommended_route":"accept"}`
	dec := json.NewDecoder(bytes.NewReader([]byte(ev)))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	d := gate.New(gate.WithClock(func() time.Time { return now })).Decide(context.Background(), gate.Request{Event: doc})
	body, err := json.Marshal(envelope.From(d))
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

// The envelope presents what the decision holds and decides nothing: the
// gate's own outcome becomes candidate_gate and aana_route, the final one
// gate_decision, and execution_allowed is the decision's execute, shadow
// included.
func TestFromPresentsTheDecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		d      gate.Decision
		reason string
	}{
		{"shadowed refusal", gate.Decision{Route: route.Refuse, HardBlockers: []string{"runtime_refusal"}, Execute: true, Shadow: true,
			Gate: route.Outcome{Route: route.Accept, HardBlockers: []string{}}}, "shadow_mode_observe_only"},
		{"accept", gate.Decision{Route: route.Accept, HardBlockers: []string{}, Execute: true,
			Gate: route.Outcome{Route: route.Accept, HardBlockers: []string{}}}, "gate_passed"},
		{"runtime asks", gate.Decision{Route: route.Ask, HardBlockers: []string{},
			Gate: route.Outcome{Route: route.Accept, HardBlockers: []string{}}}, "route_not_accept"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.d.EvidenceIntegrity = &contract.Integrity{}
			a := envelope.From(&tc.d)
			pass := tc.d.Route == route.Accept
			if a.RecommendedAction != tc.d.Route || a.AANARoute != tc.d.Gate.Route || a.CandidateGate != "pass" ||
				(a.GateDecision == "pass") != pass || a.ExecutionPolicy.AANAAllowsExecution != pass {
				t.Errorf("recommended_action %s aana_route %s candidate_gate %s gate_decision %s", a.RecommendedAction, a.AANARoute, a.CandidateGate, a.GateDecision)
			}
			if p := a.ExecutionPolicy; a.Execute != tc.d.Execute || p.ExecutionAllowed != tc.d.Execute || p.Reason != tc.reason {
				t.Errorf("execute %v execution_allowed %v reason %s", a.Execute, p.ExecutionAllowed, p.Reason)
			}
		})
	}
}

// An approval is presented next to the route, with the evidence ref a
// runtime appends as the contract writes refs; without one the answer has
// no approval key at all.
func TestApprovalBlock(t *testing.T) {
	t.Parallel()
	d := gate.Decision{Route: route.Ask, HardBlockers: []string{}, EvidenceIntegrity: &contract.Integrity{},
		Approval: &gate.PendingApproval{
			ID: "0193a5b4-7c3e-7a1b-8f00-000000000001", Status: "pending",
			ExpiresAt: time.Date(2026, 11, 24, 5, 10, 0, 0, time.UTC), Digest: "sha256:ab", URL: "/ui/approvals/0193a5b4-7c3e-7a1b-8f00-000000000001",
			EvidenceRef: route.EvidenceRef{SourceID: route.ApprovalRefPrefix + "0193a5b4-7c3e-7a1b-8f00-000000000001", Kind: "approval",
				TrustTier: "runtime", RedactionStatus: "public", Freshness: route.Freshness{Status: "fresh"}, Provenance: "gated", GatedVerified: true},
		}}
	body, err := json.Marshal(envelope.From(&d))
	if err != nil {
		t.Fatal(err)
	}
	const want = `"route":"ask","approval":{"id":"0193a5b4-7c3e-7a1b-8f00-000000000001","status":"pending","expires_at":"2026-11-24T05:10:00Z",` +
		`"digest":"sha256:ab","url":"/ui/approvals/0193a5b4-7c3e-7a1b-8f00-000000000001",` +
		`"evidence_ref":{"source_id":"gated-approval:0193a5b4-7c3e-7a1b-8f00-000000000001","kind":"approval","trust_tier":"runtime",` +
		`"redaction_status":"public","freshness":{"status":"fresh"},"provenance":"gated"}},"execute":false`
	if !bytes.Contains(body, []byte(want)) {
		t.Errorf("answer %s\nlacks %s", body, want)
	}
	d.Approval = nil
	if body, _ := json.Marshal(envelope.From(&d)); bytes.Contains(body, []byte(`"approval"`)) {
		t.Errorf("an answer without an approval names one: %s", body)
	}
}
