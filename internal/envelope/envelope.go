// Package envelope is the wire form of a decision: the answer to a
// pre-tool-check, with gated's own fields first and then the AANA
// reference's envelope (gate_decision, aix, architecture_decision,
// execution_policy with its route table), so an existing AANA client works
// unchanged. It only presents: every value derives from a gate.Decision, so
// the answer can change without touching the decision path.
package envelope

import (
	"encoding/json"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
)

// Answer is one decision as served: /pre-tool-check and the reference's
// routes, the MCP tool's structured content, gated check. The field order is
// the wire order.
type Answer struct {
	DecisionID string      `json:"decision_id"`
	Route      route.Route `json:"route"`
	// Approval is the pending approval an ask or defer created, when gated
	// runs with approvals: wait for it, then retry with its evidence_ref.
	Approval        *gate.PendingApproval `json:"approval,omitempty"`
	Execute         bool                  `json:"execute"`
	Shadow          bool                  `json:"shadow"`
	ShadowIgnored   bool                  `json:"shadow_ignored,omitempty"`
	ContractVersion string                `json:"contract_version"`
	RequestID       string                `json:"request_id,omitempty"`
	Findings        []route.Finding       `json:"findings"`
	Revisions       gate.Revisions        `json:"revisions"`
	Action          *catalog.View         `json:"action,omitempty"`
	Policy          *policy.Block         `json:"policy,omitempty"`
	Audit           *audit.Result         `json:"audit,omitempty"`

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
	ArgumentErrors          []catalog.ArgumentError    `json:"argument_errors,omitempty"`
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
	Mode                string          `json:"mode"`
	AANAAllowsExecution bool            `json:"aana_allows_execution"`
	ExecutionAllowed    bool            `json:"execution_allowed"`
	FailClosed          bool            `json:"fail_closed"`
	Reason              string          `json:"reason"`
	RequiredRoute       route.Route     `json:"required_route"`
	RouteTable          json.RawMessage `json:"route_table"`
	Observed            Observed        `json:"observed"`
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

// routeTable is static, and every answer carries it: the reference's
// clients type-check for it (docs/aana-compatibility.md, the envelope's size).
var routeTable = map[string]RouteRow{
	"accept":   {"Proceed only within the checked scope.", true, "execute_checked_action"},
	"revise":   {"Revise the candidate output or action, then recheck before execution.", false, "revise_then_recheck"},
	"retrieve": {"Retrieve missing grounding or policy evidence, then recheck before execution.", false, "retrieve_evidence_then_recheck"},
	"ask":      {"Ask the user or runtime for missing information, authorization, or confirmation.", false, "ask_then_recheck"},
	"defer":    {"Route to stronger evidence, a domain owner, review queue, or human reviewer.", false, "defer_to_review"},
	"refuse":   {"Do not execute because a hard blocker prevents safe action.", false, "refuse_action"},
}

// routeTableJSON is routeTable encoded once: the largest part of every
// answer, the same in all of them.
var routeTableJSON = func() json.RawMessage {
	b, err := json.Marshal(routeTable)
	if err != nil {
		panic(err) // a map of strings and booleans always encodes
	}
	return b
}()

var recovery = [...]string{
	route.Accept: "Execute the checked action within its scope.",
	route.Ask:    "Ask the user or runtime for the missing authorization, confirmation, or evidence before execution.",
	route.Defer:  "Route to stronger evidence, a domain owner, or human review before execution.",
	route.Refuse: "Do not execute. Return refusal and recovery guidance to the user.",
}

var aixScore = [...]float64{route.Accept: 0.95, route.Ask: 0.72, route.Defer: 0.45, route.Refuse: 0.15}

// From presents d. The reference's fields repeat the decision's route and
// hard blockers in several blocks; they share d's slices.
func From(d *gate.Decision) Answer {
	gateDecision, candidateGate := d.Outcome().GateDecision(), d.Gate.GateDecision()
	score := aixScore[d.Route]
	return Answer{
		DecisionID: d.DecisionID, Route: d.Route, Approval: d.Approval, Execute: d.Execute, Shadow: d.Shadow, ShadowIgnored: d.ShadowIgnored,
		ContractVersion: d.ContractVersion, RequestID: d.RequestID, Findings: d.Findings, Revisions: d.Revisions,
		Action: d.Action, Policy: d.Policy, Audit: d.Audit,

		ToolName: d.ToolName, ToolCategory: string(d.ToolCategory), AuthorizationState: d.AuthorizationName(), RiskDomain: d.RiskDomain,
		GateDecision: gateDecision, RecommendedAction: d.Route, CandidateGate: candidateGate, AANARoute: d.Gate.Route,
		RuntimeRecommendedRoute: d.RuntimeRecommendedRoute,
		AIX: AIX{Version: "0.1", Score: score, Decision: d.Route, HardBlockers: d.HardBlockers,
			Components: AIXComponents{P: score, F: evidenceComponent(d.EvidenceIntegrity), C: score}},
		HardBlockers: d.HardBlockers, Reasons: d.Reasons, EvidenceRefCount: d.EvidenceRefCount,
		EvidenceIntegrity: d.EvidenceIntegrity, AuthorizationReport: d.AuthorizationReport,
		ArchitectureDecision: ArchitectureDecision{
			ArchitectureClaim: architectureClaim, Route: d.Route, GateDecision: gateDecision,
			CandidateGate: candidateGate, AIXScore: score, AIXDecision: d.Route,
			HardBlockers: d.HardBlockers, MissingEvidence: d.HardBlockers,
			EvidenceRefs: EvidenceUse{
				Used: d.EvidenceIntegrity.UsedSourceIDs, Missing: d.HardBlockers,
				Contradictory: d.EvidenceIntegrity.ContradictoryEvidenceSourceIDs,
			},
			AuthorizationState: d.AuthorizationName(), ToolName: d.ToolName, ToolCategory: string(d.ToolCategory),
			RiskDomain: d.RiskDomain, RecoverySuggestion: recovery[d.Route],
		},
		ExecutionPolicy:  executionPolicy(d, gateDecision),
		ValidationErrors: d.ValidationErrors, ArgumentErrors: d.ArgumentErrors,
	}
}

// executionPolicy presents d.Execute, with the reference's reason for it.
func executionPolicy(d *gate.Decision, gateDecision string) ExecutionPolicy {
	pass := d.Outcome().Pass()
	p := ExecutionPolicy{
		Mode: "enforce", AANAAllowsExecution: pass, ExecutionAllowed: d.Execute, FailClosed: true,
		RequiredRoute: route.Accept, RouteTable: routeTableJSON,
		Observed: Observed{
			GateDecision: gateDecision, RecommendedAction: d.Route, ArchitectureRoute: d.Route,
			// The reference counts the top-level, aix and architecture lists.
			HardBlockerCount: 3 * len(d.HardBlockers), ValidationErrorCount: len(d.ValidationErrors),
		},
	}
	switch {
	case d.Shadow:
		p.Mode, p.Reason = "shadow", "shadow_mode_observe_only"
	case pass:
		p.Reason = "gate_passed"
	case len(d.HardBlockers) > 0:
		p.Reason = "hard_blockers_present"
	default:
		p.Reason = "route_not_accept"
	}
	return p
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
