package contract

import (
	"strings"

	"github.com/gatedhq/gated/internal/route"
)

// AuthReport explains how the effective authorization state was reached.
type AuthReport struct {
	DeclaredState          route.AuthState `json:"declared_state"`
	EvidenceSupportedState route.AuthState `json:"evidence_supported_state"`
	EffectiveState         route.AuthState `json:"effective_state"`
	Support                []Support       `json:"support"`
	Downgraded             bool            `json:"downgraded"`
}

// Support is one evidence ref's contribution.
type Support struct {
	SourceID string          `json:"source_id"`
	State    route.AuthState `json:"state"`
}

var (
	validatedToolWords   = []string{"validated", "ownership", "eligible", "policy validation", "verified target"}
	validatedPolicyWords = []string{"validated", "allowed", "eligible"}
	confirmedWords       = []string{"confirmed", "explicitly confirm", "user-confirmed"}
)

// Supports is the strongest authorization state ref backs, as authorize
// reads it. gated checks its own refs with it: a ref gated makes must back
// what gated vouches for and no more.
func Supports(ref route.EvidenceRef) route.AuthState {
	return support(ref.Kind, ref.TrustTier, ref.SourceID, ref.Summary)
}

// support returns the strongest authorization state one evidence ref backs
// (section 2 of the reference); text is source_id and summary, lowercased.
func support(kind, trust, sourceID, summary string) route.AuthState {
	text := strings.ToLower(sourceID + " " + summary)
	switch {
	case kind == "approval" || containsAny(text, confirmedWords):
		return route.AuthConfirmed
	case kind == "tool_result" && containsAny(text, validatedToolWords),
		kind == "policy" && containsAny(text, validatedPolicyWords):
		return route.AuthValidated
	case kind == "auth_event" || strings.Contains(text, "authenticated"):
		return route.AuthAuthenticated
	case kind == "user_message" || trust == "user_claimed" || strings.Contains(text, "user claimed"):
		return route.AuthUserClaimed
	}
	return route.AuthNone
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// authorize computes the effective authorization state from the declared
// state and what the evidence supports.
func authorize(ev *route.Event, names []string) (AuthReport, []route.Finding) {
	r := AuthReport{DeclaredState: ev.AuthorizationState, Support: make([]Support, 0, len(ev.EvidenceRefs))}
	for i := range ev.EvidenceRefs {
		ref := &ev.EvidenceRefs[i]
		if s := support(ref.Kind, ref.TrustTier, ref.SourceID, ref.Summary); s > route.AuthNone {
			r.Support = append(r.Support, Support{SourceID: names[i], State: s})
			r.EvidenceSupportedState = max(r.EvidenceSupportedState, s)
		}
	}
	declared, supported := ev.AuthorizationState, r.EvidenceSupportedState
	switch {
	case declared >= route.AuthAuthenticated && len(ev.EvidenceRefs) > 0 && supported < declared:
		r.EffectiveState = max(supported, route.AuthUserClaimed)
		r.Downgraded = true
		return r, []route.Finding{{
			Source: route.SourceEvidence, Code: route.CodeAuthorizationStateNotSupportedByEvidence, Route: route.Ask, Blocking: true,
			Message: "the evidence supports " + r.EffectiveState.String() + ", not the declared " + declared.String(),
		}}
	case declared == route.AuthNone && supported > route.AuthNone:
		r.EffectiveState = supported
	default:
		r.EffectiveState = declared
	}
	return r, nil
}
