package route

import "strings"

// ContractVersion is the schema_version marker of Agent Action Contract v1.
const ContractVersion = "aana.agent_tool_precheck.v1"

// Event is an Agent Action Contract v1 event after normalisation and schema
// validation: every enum is known and every evidence ref is structured.
type Event struct {
	SchemaVersion        string         `json:"schema_version,omitempty"`
	ToolName             string         `json:"tool_name"`
	ToolCategory         Category       `json:"tool_category"`
	AuthorizationState   AuthState      `json:"authorization_state"`
	EvidenceRefs         []EvidenceRef  `json:"evidence_refs"`
	RiskDomain           string         `json:"risk_domain"`
	ProposedArguments    map[string]any `json:"proposed_arguments"`
	RecommendedRoute     Route          `json:"recommended_route"`
	RequestID            string         `json:"request_id,omitempty"`
	AgentID              string         `json:"agent_id,omitempty"`
	UserIntent           string         `json:"user_intent,omitempty"`
	AuthorizationSubject *Subject       `json:"authorization_subject,omitempty"`
}

// EvidenceRef is one structured evidence reference. String refs are turned
// into this shape during normalisation.
type EvidenceRef struct {
	SourceID        string    `json:"source_id"`
	Kind            string    `json:"kind"`
	TrustTier       string    `json:"trust_tier"`
	RedactionStatus string    `json:"redaction_status"`
	Summary         string    `json:"summary,omitempty"`
	RetrievedAt     string    `json:"retrieved_at,omitempty"`
	Freshness       Freshness `json:"freshness"`
	CitationURL     string    `json:"citation_url,omitempty"`
	RetrievalURL    string    `json:"retrieval_url,omitempty"`
	Provenance      string    `json:"provenance"`
	Supports        []string  `json:"supports,omitempty"`
	Contradicts     []string  `json:"contradicts,omitempty"`
	// GatedVerified is set by gated itself, never by the event: the ref is
	// one of gated's own approvals (ApprovalRefPrefix), checked against the
	// approval store and found approved for this very call.
	GatedVerified bool `json:"-"`
}

// ApprovalRefPrefix starts the source_id of the evidence ref a gated
// approval gives the runtime to append when it retries the call.
const ApprovalRefPrefix = "gated-approval:"

// GatedApproval returns the approval id a ref of kind approval names with
// ApprovalRefPrefix, and whether it is such a ref.
func (r *EvidenceRef) GatedApproval() (id string, ok bool) {
	if r.Kind != "approval" {
		return "", false
	}
	return strings.CutPrefix(r.SourceID, ApprovalRefPrefix)
}

// Freshness is an evidence ref's freshness assertion.
type Freshness struct {
	Status      string   `json:"status"`
	CheckedAt   string   `json:"checked_at,omitempty"`
	MaxAgeHours *float64 `json:"max_age_hours,omitempty"`
	AgeHours    *float64 `json:"age_hours,omitempty"`
	Source      string   `json:"source,omitempty"`
}

// Subject is the redacted subject whose authorization was checked.
type Subject struct {
	SubjectType string `json:"subject_type,omitempty"`
	SubjectRef  string `json:"subject_ref,omitempty"`
}

// VerifiedApprovals counts the refs of kind approval with trust_tier
// verified; several rules (catalog floors, policy requirements) count
// these. A ref naming a gated approval (ApprovalRefPrefix) counts only when
// gated verified it (GatedVerified): its trust_tier is the caller's claim,
// and the caller does not vouch for gated's approvals.
func (e *Event) VerifiedApprovals() int {
	n := 0
	for i := range e.EvidenceRefs {
		r := &e.EvidenceRefs[i]
		if _, gated := r.GatedApproval(); gated {
			if r.GatedVerified {
				n++
			}
			continue
		}
		if r.Kind == "approval" && r.TrustTier == "verified" {
			n++
		}
	}
	return n
}
