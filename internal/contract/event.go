package contract

import (
	"crypto/sha256"
	"encoding/base32"

	"github.com/gatedhq/gated/internal/route"
)

// Event is an event an adapter builds for the runtime it speaks for (a
// coding agent's hook, an MCP proxy, an Action API plan), typed. Doc makes
// it the decoded JSON document the decision path prepares, so an adapter's
// event is checked exactly as a runtime's is.
type Event struct {
	ToolName string
	Category route.Category
	// AuthorizationState is a state's name: a plan may name its own, which
	// the schema then judges.
	AuthorizationState string
	// EvidenceRefs are refs as an event carries them: RefDoc of one the
	// adapter vouches for, or as a plan sent them.
	EvidenceRefs     []any
	RiskDomain       string
	Arguments        map[string]any
	RecommendedRoute route.Route
	RequestID        string // left out when empty
	AgentID          string // left out when empty
	// AuthorizationSubject is whom the call acts for; left out when nil.
	AuthorizationSubject *route.Subject
	UserIntent           string // left out when empty
}

// Doc is the event as the decoded JSON object a runtime would send.
func (e Event) Doc() map[string]any {
	refs := e.EvidenceRefs
	if refs == nil {
		refs = []any{}
	}
	doc := map[string]any{
		"tool_name": e.ToolName, "tool_category": string(e.Category), "authorization_state": e.AuthorizationState,
		"evidence_refs": refs, "risk_domain": e.RiskDomain, "proposed_arguments": e.Arguments,
		"recommended_route": e.RecommendedRoute.String(),
	}
	if e.RequestID != "" {
		doc["request_id"] = e.RequestID
	}
	if e.AgentID != "" {
		doc["agent_id"] = e.AgentID
	}
	if s := e.AuthorizationSubject; s != nil {
		doc["authorization_subject"] = map[string]any{"subject_type": s.SubjectType, "subject_ref": s.SubjectRef}
	}
	if e.UserIntent != "" {
		doc["user_intent"] = e.UserIntent
	}
	return doc
}

// RefDoc is r as an event's evidence_refs carry it: the fields its JSON
// form has, the optional ones only when set.
func RefDoc(r route.EvidenceRef) map[string]any {
	f := map[string]any{"status": r.Freshness.Status}
	optional(f, "checked_at", r.Freshness.CheckedAt)
	optional(f, "source", r.Freshness.Source)
	if r.Freshness.MaxAgeHours != nil {
		f["max_age_hours"] = *r.Freshness.MaxAgeHours
	}
	if r.Freshness.AgeHours != nil {
		f["age_hours"] = *r.Freshness.AgeHours
	}
	doc := map[string]any{
		"source_id": r.SourceID, "kind": r.Kind, "trust_tier": r.TrustTier, "redaction_status": r.RedactionStatus,
		"freshness": f, "provenance": r.Provenance,
	}
	optional(doc, "summary", r.Summary)
	optional(doc, "retrieved_at", r.RetrievedAt)
	optional(doc, "citation_url", r.CitationURL)
	optional(doc, "retrieval_url", r.RetrievalURL)
	if len(r.Supports) > 0 {
		doc["supports"] = texts(r.Supports)
	}
	if len(r.Contradicts) > 0 {
		doc["contradicts"] = texts(r.Contradicts)
	}
	return doc
}

func optional(doc map[string]any, k, v string) {
	if v != "" {
		doc[k] = v
	}
}

// texts is ss as a decoded JSON array.
func texts(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// Fingerprint names a caller's identifier (a session id, an AuthZEN
// subject) in an evidence ref's source id without carrying it: it may be
// free text, personal or secret. The name is base32, not hex: one hex
// fingerprint in two thousand is all digits, and some of those read as
// card numbers to the secret scan, which would refuse every call bearing
// it.
func Fingerprint(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + fingerprintEncoding.EncodeToString(sum[:10])
}

var fingerprintEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
