package gate

import (
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
)

// Decision is what one pre-tool-check decided, and why. Every surface reads
// it (hooks, MCP, metrics, the audit record); internal/envelope presents it
// as the answer, with the AANA reference's fields, so the wire form can
// change without the decision path.
type Decision struct {
	DecisionID string
	// Route and HardBlockers are the final outcome, the runtime's
	// recommended route included.
	Route        route.Route
	HardBlockers []string
	// Execute is whether the tool may run: the final outcome passes, or the
	// decision is shadowed (observe only).
	Execute         bool
	Shadow          bool
	ShadowIgnored   bool // shadow asked for without the right to it: enforced
	ContractVersion string
	// RequestID is the event's request_id (at most 128 bytes), which the
	// audit record stores too.
	RequestID string
	Findings  []route.Finding
	Reasons   []string
	// Gate is the outcome of gated's own sources, before the runtime's
	// recommended route counted.
	Gate route.Outcome
	// RuntimeRecommendedRoute is the route the runtime proposed, nil when it
	// named none the contract knows.
	RuntimeRecommendedRoute *route.Route

	Revisions Revisions
	// Approval is the pending approval this ask or defer created, nil when
	// approvals are off or it created none.
	Approval *PendingApproval
	// ApprovalID is the approval this decision created, or spent (it was
	// the retry the approval allowed); "" otherwise.
	ApprovalID string
	Action     *catalog.View // the catalog's view of the tool, nil when none describes it
	Policy     *policy.Block // nil without a policy
	Audit      *audit.Result // nil when the decision is not recorded

	ToolName string // as the event names it
	// ToolCategory is the effective category: the contract's and the
	// catalog's, over the declared one. For an event that is no event it is
	// the declared one, or its marker when that is no category.
	ToolCategory route.Category
	// AuthorizationState is the effective state, what the evidence
	// supports, once the event was evaluated; AuthorizationName names it
	// either way.
	AuthorizationState route.AuthState
	RiskDomain         string
	EvidenceRefCount   int
	// EvidenceIntegrity and AuthorizationReport are never nil in a decision
	// Decide returns, even for an event that is no event.
	EvidenceIntegrity   *contract.Integrity
	AuthorizationReport *contract.AuthReport
	ValidationErrors    []contract.ValidationError
	// ArgumentErrors say where proposed_arguments fail the tool's input
	// schema (arguments_invalid); they never quote the values.
	ArgumentErrors []catalog.ArgumentError

	evaluated    bool   // AuthorizationState is set
	declaredAuth string // the state the runtime declared, as prepared
}

// AuthorizationName is the authorization state the answer and the audit
// record name: the effective one, or, for an event the rules never ran
// on, the one the runtime declared (its marker when that is no state).
func (d *Decision) AuthorizationName() string {
	if d.evaluated {
		return d.AuthorizationState.String()
	}
	return d.declaredAuth
}

// Outcome is the final outcome: route and hard blockers.
func (d *Decision) Outcome() route.Outcome {
	return route.Outcome{Route: d.Route, HardBlockers: d.HardBlockers}
}

// Revisions name the catalog and policy a decision was made with. The
// answer carries them as they are.
type Revisions struct {
	Catalog string `json:"catalog"`
	Policy  string `json:"policy"`
	// Commits are what the github sources of bundle-composed sources
	// resolved to ("catalog:" or "policy:" then owner/name@ref=sha), so
	// that a decision made on a branch names the exact bytes.
	Commits []string `json:"commits,omitempty"`
}

func findingCodes(fs []route.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Code
	}
	return out
}

// finish sets the final outcome from all findings, and whether the tool may
// execute; gateOutcome is the gate's own verdict before the runtime's route.
func (d *Decision) finish(findings []route.Finding, gateOutcome route.Outcome) {
	out := route.Combine(findings)
	if findings == nil {
		findings = []route.Finding{}
	}
	if d.Reasons == nil {
		d.Reasons = []string{}
	}
	d.Findings, d.Gate = findings, gateOutcome
	d.Route, d.HardBlockers = out.Route, out.HardBlockers
	d.Execute = d.Shadow || out.Pass()
}

// refuse adds a refusal for code to whatever the decision already found.
func (d *Decision) refuse(code, msg string) {
	f := route.Finding{Source: route.SourceGated, Code: code, Route: route.Refuse, Blocking: true, Message: msg}
	if d.EvidenceIntegrity == nil {
		d.EvidenceIntegrity = emptyIntegrity()
	}
	if d.AuthorizationReport == nil {
		d.AuthorizationReport = emptyAuthReport()
	}
	findings := append(d.Findings, f)
	d.finish(findings, route.Combine(findings))
}

func emptyIntegrity() *contract.Integrity {
	return &contract.Integrity{
		EvidenceSafetyVersion: "0.1", UsedSourceIDs: []string{}, MissingEvidenceSourceIDs: []string{},
		ContradictoryEvidenceSourceIDs: []string{}, CitationSourceIDs: []string{}, ProvenanceSourceIDs: []string{},
		Issues: []contract.Issue{}, ErrorCodes: []string{}, WarningCodes: []string{},
	}
}

func emptyAuthReport() *contract.AuthReport {
	return &contract.AuthReport{Support: []contract.Support{}}
}
