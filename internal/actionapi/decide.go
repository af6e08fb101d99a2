package actionapi

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
)

// The tiers with rules of their own: R4 never runs automatically, R3 only
// with an approval.
const (
	tierNeverAuto = 4
	tierApproval  = 3
)

// LTS terminal statuses gated answers with. gated decides and never
// executes, so a plan that may run is "approved" (the spec's "approved by
// policy"): succeeded, reverted and failed are the executor's to report.
const (
	StatusApproved = "approved"
	StatusQueued   = "queued"
	StatusRejected = "rejected"
)

// Event is the Agent Action Contract v1 event the plan stands for: the
// action type is the tool, the input its arguments, and category the one
// the catalog gives it (a plan cannot say). The planner proposes to run it
// (recommended_route accept).
//
// executor is the name of the token the plan came with, "" without one.
// gated vouches for an executor it authenticated as the hooks do for their
// runtime's session: its own auth_event ref naming the token and the plan,
// and at least authorization_state authenticated. A plan that declares
// more keeps its declaration, which its own evidence must then support.
// Without a token gated vouches for nobody.
func (p *Plan) Event(category route.Category, executor string) map[string]any {
	ev := contract.Event{
		ToolName: p.ActionType, Category: category, AuthorizationState: "none", RiskDomain: "unknown",
		Arguments: p.Input, RecommendedRoute: route.Accept, RequestID: p.ActionID,
	}
	if x := p.Gated; x != nil {
		ev.AgentID, ev.EvidenceRefs = x.AgentID, slices.Clone(x.EvidenceRefs)
		ev.AuthorizationState = cmp.Or(x.AuthorizationState, ev.AuthorizationState)
		ev.RiskDomain = cmp.Or(x.RiskDomain, ev.RiskDomain)
	}
	if executor == "" {
		return ev.Doc()
	}
	if ref, ok := p.executorRef(executor); ok {
		ev.EvidenceRefs = append(ev.EvidenceRefs, contract.RefDoc(ref))
		if s := ev.AuthorizationState; s == "none" || s == "user_claimed" {
			ev.AuthorizationState = vouchedState.String()
		}
	}
	return ev.Doc()
}

// tier is a plan's declared risk tier, 0–4; a missing or unknown one is 4,
// as the spec treats missing values conservatively.
func (p *Plan) tier() int {
	if p.RiskTier != nil {
		if t, ok := ParseTier(*p.RiskTier); ok {
			return t
		}
	}
	return tierNeverAuto
}

// ParseTier reads an Action API risk tier, R0 to R4.
func ParseTier(s string) (int, bool) {
	if len(s) == 2 && s[0] == 'R' && s[1] >= '0' && s[1] <= '4' {
		return int(s[1] - '0'), true
	}
	return 0, false
}

// catalogTier is the floor the catalog puts on the tier: an action.json's
// own tier, or the risk level of any other tool.
func catalogTier(v *catalog.View) int {
	if v == nil {
		return 0
	}
	if t, ok := ParseTier(v.RiskTier); ok {
		return t
	}
	if v.NeverExecute {
		return tierNeverAuto
	}
	return v.RiskLevel
}

// Check holds one plan's decision: the tier gated applied once the
// decision path has run.
type Check struct {
	plan *Plan
	tier int
}

// NewCheck prepares the plan rules for p.
func NewCheck(p *Plan) *Check { return &Check{plan: p, tier: p.tier()} }

// Tier is the tier applied: the plan's, raised to the catalog's.
func (c *Check) Tier() string { return "R" + strconv.Itoa(c.tier) }

// Findings are the plan's frozen rules for the catalogued view (nil when
// the action is not catalogued: then no command is allowed and no file
// input is known). It is gate.Request.Checks.
func (c *Check) Findings(v *catalog.View, ev *route.Event) []route.Finding {
	p := c.plan
	c.tier = max(c.tier, catalogTier(v))
	var out []route.Finding
	switch {
	case c.tier >= tierNeverAuto:
		out = append(out, finding(route.CodePlanRiskTierNeverAuto, route.Refuse, "action %s has %s; R4 never runs automatically", p.ActionType, c.howR4()))
	case c.tier == tierApproval && !gatedApproved(ev):
		out = append(out, finding(route.CodePlanRiskTierRequiresApproval, route.Ask, "action %s has risk tier R3, which never runs without an approval granted through gated", p.ActionType))
	}
	verify, rollback := v.PluginRequires()
	// Write-likeness is what the catalog says the action may change (for
	// an action.json, what it declares), never the plan's tier: an R1 read
	// the planner raises to R3 still changes nothing, and R3 already never
	// runs without an approval.
	writeLike := v == nil || v.WriteLike()
	if (c.tier >= 2 && writeLike) || rollback {
		if !hasRollbackPlan(p.RollbackPlan) {
			out = append(out, finding(route.CodePlanRollbackRequired, route.Refuse, "action %s is a write-like %s action and needs a rollbackPlan", p.ActionType, c.Tier()))
		}
	}
	if (c.tier >= 2 && writeLike) || verify {
		if p.Verification == nil || p.Verification.Required == nil || !*p.Verification.Required {
			out = append(out, finding(route.CodePlanVerificationRequired, route.Refuse, "action %s is a write-like %s action and needs verification.required true", p.ActionType, c.Tier()))
		}
	}
	if p.Verification != nil {
		for i, cmd := range p.Verification.Commands {
			if !v.PluginCommandAllowed(catalog.Argv(cmd)) {
				// The index, not the command: it may hold values the
				// record must not.
				out = append(out, finding(route.CodePlanVerificationCommandNotAllowed, route.Refuse, "verification.commands/%d is not one of the permissions.commands of action %s (exact argument match)", i, p.ActionType))
			}
		}
	}
	return append(out, scopeFindings(p, v)...)
}

// gatedApproved reports whether the event carries one of gated's own
// approvals, checked against the approval store for this very call. An
// approval the caller merely claims does not lift R3: that would be the
// planner approving itself.
func gatedApproved(ev *route.Event) bool {
	for _, r := range ev.EvidenceRefs {
		if r.GatedVerified {
			return true
		}
	}
	return false
}

// howR4 says how the plan came to tier R4, for messages: a tier the plan
// left out or misspelt, or one it declared and the catalog raised, are
// told apart. A misspelt tier is not quoted: it is the planner's text.
func (c *Check) howR4() string {
	if c.plan.RiskTier == nil {
		return "no risk tier, which counts as R4"
	}
	t, ok := ParseTier(*c.plan.RiskTier)
	switch {
	case !ok:
		return "an unknown risk tier, which counts as R4"
	case t < c.tier:
		return "risk tier " + *c.plan.RiskTier + ", which its catalog entry raises to " + c.Tier()
	}
	return "risk tier " + *c.plan.RiskTier
}

// hasRollbackPlan: null, an empty string, object or list is no plan.
func hasRollbackPlan(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return true
}

func finding(code string, r route.Route, format string, args ...any) route.Finding {
	return route.Finding{Source: route.SourceActionAPI, Code: code, Route: r, Blocking: true, Message: fmt.Sprintf(format, args...)}
}

// Status is the LTS terminal status of a route.
func Status(r route.Route) string {
	switch r {
	case route.Accept:
		return StatusApproved
	case route.Ask, route.Defer:
		return StatusQueued
	}
	return StatusRejected
}

// Answer is the answer to a plan. Names follow the LTS envelope's camelCase.
type Answer struct {
	Status     string      `json:"status"`
	ActionID   string      `json:"actionId,omitempty"`
	ActionType string      `json:"actionType"`
	RiskTier   string      `json:"riskTier"` // the tier applied
	DecisionID string      `json:"decisionId"`
	Route      route.Route `json:"route"`
	Execute    bool        `json:"execute"`
	Shadow     bool        `json:"shadow"`
	// ShadowIgnored: shadow mode was asked for without the right to it,
	// so the decision was enforced.
	ShadowIgnored  bool                    `json:"shadowIgnored,omitempty"`
	Blockers       []string                `json:"blockers"`
	Findings       []route.Finding         `json:"findings"`
	Approval       *gate.PendingApproval   `json:"approval,omitempty"`
	ArgumentErrors []catalog.ArgumentError `json:"argumentErrors,omitempty"`
}

// NewAnswer presents the decision on the plan c checked.
func NewAnswer(c *Check, d *gate.Decision) Answer {
	blockers := d.HardBlockers
	if blockers == nil {
		blockers = []string{}
	}
	return Answer{
		Status: Status(d.Route), ActionID: c.plan.ActionID, ActionType: c.plan.ActionType, RiskTier: c.Tier(),
		DecisionID: d.DecisionID, Route: d.Route, Execute: d.Execute, Shadow: d.Shadow, ShadowIgnored: d.ShadowIgnored,
		Blockers: blockers, Findings: d.Findings, Approval: d.Approval, ArgumentErrors: d.ArgumentErrors,
	}
}
