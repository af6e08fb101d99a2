package contract_test

import (
	"testing"

	"github.com/gatedhq/gated/internal/route"
)

// Section 2: which state each ref supports. The event declares none on a
// private read, so the effective state is exactly the supported one.
func TestEvidenceSupport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ref  obj
		want route.AuthState
	}{
		{"nothing", ref(nil), route.AuthNone},
		{"user_message", ref(obj{"kind": "user_message"}), route.AuthUserClaimed},
		{"trust user_claimed", ref(obj{"trust_tier": "user_claimed"}), route.AuthUserClaimed},
		{"text user claimed", ref(obj{"summary": "The User Claimed the account"}), route.AuthUserClaimed},
		{"auth_event", ref(obj{"kind": "auth_event"}), route.AuthAuthenticated},
		{"summary authenticated", ref(obj{"summary": "Session AUTHENTICATED via SSO"}), route.AuthAuthenticated},
		{"source_id authenticated", ref(obj{"source_id": "session.authenticated"}), route.AuthAuthenticated},
		{"tool_result validated", ref(obj{"kind": "tool_result", "summary": "request validated"}), route.AuthValidated},
		{"tool_result ownership", ref(obj{"kind": "tool_result", "summary": "ownership of the account"}), route.AuthValidated},
		{"tool_result eligible", ref(obj{"kind": "tool_result", "summary": "customer is eligible"}), route.AuthValidated},
		{"tool_result policy validation", ref(obj{"kind": "tool_result", "summary": "passed policy validation"}), route.AuthValidated},
		{"tool_result verified target", ref(obj{"kind": "tool_result", "summary": "verified target address book"}), route.AuthValidated},
		{"tool_result in source_id", ref(obj{"kind": "tool_result", "source_id": "eligible.check"}), route.AuthValidated},
		{"tool_result plain", ref(obj{"kind": "tool_result", "summary": "lookup done"}), route.AuthNone},
		{"other with ownership", ref(obj{"summary": "ownership"}), route.AuthNone},
		{"policy validated", ref(obj{"kind": "policy", "summary": "validated by policy"}), route.AuthValidated},
		{"policy allowed", ref(obj{"kind": "policy", "summary": "refunds allowed"}), route.AuthValidated},
		{"policy eligible", ref(obj{"kind": "policy", "summary": "eligible for refund"}), route.AuthValidated},
		{"policy ownership", ref(obj{"kind": "policy", "summary": "ownership rules"}), route.AuthNone},
		{"other allowed", ref(obj{"summary": "allowed"}), route.AuthNone},
		{"approval", ref(obj{"kind": "approval"}), route.AuthConfirmed},
		{"text confirmed", ref(obj{"summary": "customer confirmed the change"}), route.AuthConfirmed},
		{"text explicitly confirm", ref(obj{"summary": "did explicitly confirm it"}), route.AuthConfirmed},
		{"text user-confirmed", ref(obj{"source_id": "user-confirmed.42"}), route.AuthConfirmed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(t, event(t, obj{"tool_name": "get_statement", "tool_category": "private_read",
				"recommended_route": "ask", "evidence_refs": []any{tt.ref}}))
			r := d.AuthorizationReport
			if r.EvidenceSupportedState != tt.want || r.EffectiveState != tt.want || r.Downgraded {
				t.Errorf("report = %+v, want supported and effective %s", r, tt.want)
			}
			if (len(r.Support) > 0) != (tt.want > route.AuthNone) {
				t.Errorf("support list = %+v", r.Support)
			}
		})
	}
}

// The strongest supported state wins, whatever the order of the refs.
func TestStrongestSupportWins(t *testing.T) {
	t.Parallel()
	refs := []any{approvalRef, claimRef, authRef, validRef}
	for i := range refs {
		rot := append(append([]any{}, refs[i:]...), refs[:i]...)
		d := decide(t, event(t, obj{"tool_category": "private_read", "tool_name": "get_statement",
			"recommended_route": "ask", "evidence_refs": rot}))
		if got := d.AuthorizationReport.EvidenceSupportedState; got != route.AuthConfirmed {
			t.Errorf("rotation %d: supported %s", i, got)
		}
		if n := len(d.AuthorizationReport.Support); n != 4 {
			t.Errorf("rotation %d: %d support entries", i, n)
		}
	}
}

// Section 2: the effective state and the not-supported blocker.
func TestEffectiveState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cat, declared string
		refs                []any
		effective           route.AuthState
		downgraded          bool
		route               route.Route
		blockers            []string
	}{
		{"authenticated backed by a claim only", "private_read", "authenticated", []any{claimRef},
			route.AuthUserClaimed, true, route.Ask, []string{route.CodeAuthorizationStateNotSupportedByEvidence, route.CodePrivateReadNotAuthenticated}},
		{"authenticated backed by nothing", "private_read", "authenticated", []any{ref(nil)},
			route.AuthUserClaimed, true, route.Ask, []string{route.CodeAuthorizationStateNotSupportedByEvidence, route.CodePrivateReadNotAuthenticated}},
		{"validated backed by auth_event", "write", "validated", []any{authRef},
			route.AuthAuthenticated, true, route.Ask, []string{route.CodeAuthorizationStateNotSupportedByEvidence, route.CodeWriteMissingValidationOrConfirmation}},
		{"confirmed backed by nothing", "write", "confirmed", []any{ref(nil)},
			route.AuthUserClaimed, true, route.Ask, []string{route.CodeAuthorizationStateNotSupportedByEvidence, route.CodeWriteMissingValidationOrConfirmation}},
		{"confirmed backed by validation", "write", "confirmed", []any{validRef},
			route.AuthValidated, true, route.Ask, []string{route.CodeAuthorizationStateNotSupportedByEvidence, route.CodeWriteMissingExplicitConfirmation}},
		{"confirmed without refs is not downgraded", "write", "confirmed", []any{},
			route.AuthConfirmed, false, route.Defer, []string{route.CodeMissingEvidenceRefs}},
		{"none raised by evidence", "private_read", "none", []any{authRef},
			route.AuthAuthenticated, false, route.Accept, nil},
		{"user_claimed not raised by approval", "write", "user_claimed", []any{approvalRef},
			route.AuthUserClaimed, false, route.Ask, []string{route.CodeWriteMissingValidationOrConfirmation}},
		{"authenticated not raised by approval", "write", "authenticated", []any{approvalRef},
			route.AuthAuthenticated, false, route.Ask, []string{route.CodeWriteMissingValidationOrConfirmation}},
		{"validated backed by approval stays validated", "write", "validated", []any{approvalRef},
			route.AuthValidated, false, route.Ask, []string{route.CodeWriteMissingExplicitConfirmation}},
		{"user_claimed backed by nothing stays", "private_read", "user_claimed", []any{ref(nil)},
			route.AuthUserClaimed, false, route.Ask, []string{route.CodePrivateReadNotAuthenticated}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(t, event(t, obj{"tool_name": "update_note", "tool_category": tt.cat, "authorization_state": tt.declared,
				"evidence_refs": tt.refs, "risk_domain": "personal_productivity", "recommended_route": "ask"}))
			r := d.AuthorizationReport
			if r.DeclaredState.String() != tt.declared || r.EffectiveState != tt.effective || r.Downgraded != tt.downgraded {
				t.Errorf("report %+v, want effective %s downgraded %v", r, tt.effective, tt.downgraded)
			}
			if d.AuthorizationName() != tt.effective.String() {
				t.Errorf("envelope authorization_state %s", d.AuthorizationState)
			}
			// The runtime's ask adds no blocker: the route is the gate's or ask.
			expect(t, d, route.Stricter(tt.route, route.Ask), tt.blockers...)
			if d.Gate.Route != tt.route {
				t.Errorf("aana_route = %s, want %s", d.Gate.Route, tt.route)
			}
		})
	}
}
