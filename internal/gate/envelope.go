package gate

import (
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
)

// Decision is the answer to one pre-tool-check: gated's own fields first,
// then the reference's envelope, so an existing AANA client works unchanged.
type Decision struct {
	DecisionID      string      `json:"decision_id"`
	Route           route.Route `json:"route"`
	Execute         bool        `json:"execute"`
	Shadow          bool        `json:"shadow"`
	ShadowIgnored   bool        `json:"shadow_ignored,omitempty"` // shadow asked for without the right to it: enforced
	ContractVersion string      `json:"contract_version"`
	// RequestID echoes the event's request_id (at most 128 bytes), which the
	// audit record stores too.
	RequestID string          `json:"request_id,omitempty"`
	Findings  []route.Finding `json:"findings"`
	Revisions Revisions       `json:"revisions"`
	Action    *catalog.View   `json:"action,omitempty"`
	Policy    *policy.Block   `json:"policy,omitempty"`
	Audit     *audit.Result   `json:"audit,omitempty"`

	ToolName                string                     `json:"tool_name"`
	ToolCategory            string                     `json:"tool_category"`
	AuthorizationState      string                     `json:"authorization_state"`
	RiskDomain              string                     `json:"risk_domain"`
	GateDecision            string                     `json:"gate_decision"`
	RecommendedAction       route.Route                `json:"recommended_action"`
	CandidateGate           string                     `json:"candidate_gate"`
	AANARoute               route.Route                `json:"aana_route"`
	RuntimeRecommendedRoute *route.Route               `json:"runtime_recommended_route"`
	AIX                     AIX                        `json:"aix"`
	HardBlockers            []string                   `json:"hard_blockers"`
	Reasons                 []string                   `json:"reasons"`
	EvidenceRefCount        int                        `json:"evidence_ref_count"`
	EvidenceIntegrity       *contract.Integrity        `json:"evidence_integrity"`
	AuthorizationReport     *contract.AuthReport       `json:"authorization_report"`
	ArchitectureDecision    ArchitectureDecision       `json:"architecture_decision"`
	ExecutionPolicy         ExecutionPolicy            `json:"execution_policy"`
	ValidationErrors        []contract.ValidationError `json:"validation_errors,omitempty"`
	// ArgumentErrors say where proposed_arguments fail the tool's input
	// schema (arguments_invalid); they never quote the values.
	ArgumentErrors []catalog.ArgumentError `json:"argument_errors,omitempty"`
}

// Revisions name the catalog and policy a decision was made with.
type Revisions struct {
	Catalog string `json:"catalog"`
	Policy  string `json:"policy"`
}

// AIX is the reference's score block. The score is fixed per route, as in
// the reference; F (evidence) drops with evidence warnings and errors.
type AIX struct {
	Version      string        `json:"aix_version"`
	Score        float64       `json:"score"`
	Components   AIXComponents `json:"components"`
	Decision     route.Route   `json:"decision"`
	HardBlockers []string      `json:"hard_blockers"`
}

// AIXComponents are the reference's P, F and C components.
type AIXComponents struct {
	P float64 `json:"P"`
	F float64 `json:"F"`
	C float64 `json:"C"`
}

// ArchitectureDecision is the SDK envelope's summary block.
type ArchitectureDecision struct {
	ArchitectureClaim  string      `json:"architecture_claim"`
	Route              route.Route `json:"route"`
	GateDecision       string      `json:"gate_decision"`
	CandidateGate      string      `json:"candidate_gate"`
	AIXScore           float64     `json:"aix_score"`
	AIXDecision        route.Route `json:"aix_decision"`
	HardBlockers       []string    `json:"hard_blockers"`
	MissingEvidence    []string    `json:"missing_evidence"`
	EvidenceRefs       EvidenceUse `json:"evidence_refs"`
	AuthorizationState string      `json:"authorization_state"`
	ToolName           string      `json:"tool_name"`
	ToolCategory       string      `json:"tool_category"`
	RiskDomain         string      `json:"risk_domain"`
	RecoverySuggestion string      `json:"recovery_suggestion"`
}

// EvidenceUse lists the evidence a decision used, missed and found in conflict.
type EvidenceUse struct {
	Used          []string `json:"used"`
	Missing       []string `json:"missing"`
	Contradictory []string `json:"contradictory"`
}

// ExecutionPolicy tells the runtime whether it may execute, and why.
type ExecutionPolicy struct {
	Mode                string              `json:"mode"`
	AANAAllowsExecution bool                `json:"aana_allows_execution"`
	ExecutionAllowed    bool                `json:"execution_allowed"`
	FailClosed          bool                `json:"fail_closed"`
	Reason              string              `json:"reason"`
	RequiredRoute       route.Route         `json:"required_route"`
	RouteTable          map[string]RouteRow `json:"route_table"`
	Observed            Observed            `json:"observed"`
}

// RouteRow is one row of the reference's route table.
type RouteRow struct {
	Description      string `json:"description"`
	ExecutionAllowed bool   `json:"execution_allowed"`
	NextStep         string `json:"next_step"`
}

// Observed repeats what the execution policy was computed from.
type Observed struct {
	GateDecision         string      `json:"gate_decision"`
	RecommendedAction    route.Route `json:"recommended_action"`
	ArchitectureRoute    route.Route `json:"architecture_route"`
	HardBlockerCount     int         `json:"hard_blocker_count"`
	ValidationErrorCount int         `json:"validation_error_count"`
}

const architectureClaim = "AANA is a pre-action control layer for AI agents: agents propose actions, AANA checks evidence/auth/risk, and tools execute only when the route is accept."

var routeTable = map[string]RouteRow{
	"accept":   {"Proceed only within the checked scope.", true, "execute_checked_action"},
	"revise":   {"Revise the candidate output or action, then recheck before execution.", false, "revise_then_recheck"},
	"retrieve": {"Retrieve missing grounding or policy evidence, then recheck before execution.", false, "retrieve_evidence_then_recheck"},
	"ask":      {"Ask the user or runtime for missing information, authorization, or confirmation.", false, "ask_then_recheck"},
	"defer":    {"Route to stronger evidence, a domain owner, review queue, or human reviewer.", false, "defer_to_review"},
	"refuse":   {"Do not execute because a hard blocker prevents safe action.", false, "refuse_action"},
}

var recovery = [...]string{
	route.Accept: "Execute the checked action within its scope.",
	route.Ask:    "Ask the user or runtime for the missing authorization, confirmation, or evidence before execution.",
	route.Defer:  "Route to stronger evidence, a domain owner, or human review before execution.",
	route.Refuse: "Do not execute. Return refusal and recovery guidance to the user.",
}

var aixScore = [...]float64{route.Accept: 0.95, route.Ask: 0.72, route.Defer: 0.45, route.Refuse: 0.15}

func passFail(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

// evidenceComponent is the AIX F component: full marks for clean evidence,
// lower with warnings, lowest with errors.
func evidenceComponent(in *contract.Integrity) float64 {
	switch {
	case in.HasErrors:
		return 0.15
	case in.HasWarnings:
		return 0.75
	}
	return 0.95
}

// fillEnvelope derives the reference's fields from the outcome.
func (d *Decision) fillEnvelope(gate route.Outcome) {
	pass := d.GateDecision == "pass"
	d.CandidateGate = passFail(gate.Pass())
	d.AANARoute = gate.Route
	score := aixScore[d.Route]
	d.AIX = AIX{Version: "0.1", Score: score, Decision: d.Route, HardBlockers: d.HardBlockers,
		Components: AIXComponents{P: score, F: evidenceComponent(d.EvidenceIntegrity), C: score}}
	d.ArchitectureDecision = ArchitectureDecision{
		ArchitectureClaim: architectureClaim, Route: d.Route, GateDecision: d.GateDecision,
		CandidateGate: d.CandidateGate, AIXScore: score, AIXDecision: d.Route,
		HardBlockers: d.HardBlockers, MissingEvidence: d.HardBlockers,
		EvidenceRefs: EvidenceUse{
			Used: d.EvidenceIntegrity.UsedSourceIDs, Missing: d.HardBlockers,
			Contradictory: d.EvidenceIntegrity.ContradictoryEvidenceSourceIDs,
		},
		AuthorizationState: d.AuthorizationState, ToolName: d.ToolName, ToolCategory: d.ToolCategory,
		RiskDomain: d.RiskDomain, RecoverySuggestion: recovery[d.Route],
	}
	p := ExecutionPolicy{
		Mode: "enforce", AANAAllowsExecution: pass, ExecutionAllowed: pass, FailClosed: true,
		RequiredRoute: route.Accept, RouteTable: routeTable,
		Observed: Observed{
			GateDecision: d.GateDecision, RecommendedAction: d.Route, ArchitectureRoute: d.Route,
			// The reference counts the top-level, aix and architecture lists.
			HardBlockerCount: 3 * len(d.HardBlockers), ValidationErrorCount: len(d.ValidationErrors),
		},
	}
	switch {
	case d.Shadow:
		p.Mode, p.ExecutionAllowed, p.Reason = "shadow", true, "shadow_mode_observe_only"
	case pass:
		p.Reason = "gate_passed"
	case len(d.HardBlockers) > 0:
		p.Reason = "hard_blockers_present"
	default:
		p.Reason = "route_not_accept"
	}
	d.ExecutionPolicy = p
	d.Execute = p.ExecutionAllowed
}

// Validation is the answer of a validation-only call: whether an event is a
// valid Agent Action Contract v1 event, and where it is not. Nothing is
// decided or recorded.
type Validation struct {
	Valid         bool                       `json:"valid"`
	Errors        []contract.ValidationError `json:"errors"`
	SchemaVersion string                     `json:"schema_version"`
}

// Validate checks doc as the decision path would, without deciding on it.
func Validate(doc map[string]any) Validation {
	p := contract.Prepare(doc)
	v := Validation{Valid: p.Event != nil, Errors: p.ValidationErrors, SchemaVersion: route.ContractVersion}
	if v.Errors == nil {
		v.Errors = []contract.ValidationError{}
	}
	if !v.Valid && len(v.Errors) == 0 {
		// Normalisation refused the event before the schema ran.
		for _, f := range p.Findings {
			v.Errors = append(v.Errors, contract.ValidationError{Path: "$", Keyword: f.Code, Message: f.Message})
		}
	}
	return v
}
