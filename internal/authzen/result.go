package authzen

import (
	"net/http"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
)

// Result is one AuthZEN decision: true only when the call may run (gated's
// accept, or a shadowed decision, which lets it run by definition), and a
// context saying why and, for an ask, how to get a yes.
type Result struct {
	Decision bool `json:"decision"`
	Context  any  `json:"context,omitempty"`
}

// Context is the context of a decided evaluation: gated's own answer in
// brief. Approval is the approval an ask (or an approvable defer) opened:
// once a person approves it, the same request again is decided as
// approved, once.
type Context struct {
	DecisionID   string   `json:"decision_id"`
	Route        string   `json:"route"`
	HardBlockers []string `json:"hard_blockers"`
	Reasons      []string `json:"reasons"`
	Shadow       bool     `json:"shadow,omitempty"`
	// ShadowIgnored: the PEP asked for shadow mode (?shadow_mode=true)
	// without the right to it, so the decision was enforced.
	ShadowIgnored bool                  `json:"shadow_ignored,omitempty"`
	Approval      *gate.PendingApproval `json:"approval,omitempty"`
	// ApprovalID is the approval this decision opened or spent.
	ApprovalID string `json:"approval_id,omitempty"`
	// ArgumentErrors say where the request fails the tool's input schema
	// (arguments_invalid), as /pre-tool-check names them: pointers into
	// the request, keywords and messages, never its values.
	ArgumentErrors []catalog.ArgumentError `json:"argument_errors,omitempty"`
}

// ErrorContext is the context of an evaluation gated could not decide.
type ErrorContext struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the specification's own example of a per-evaluation
// error (section 7.2.1).
type ErrorDetail struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// Answer is d as an AuthZEN decision.
func Answer(d *gate.Decision) Result {
	blockers := d.HardBlockers
	if blockers == nil {
		blockers = []string{}
	}
	reasons := d.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	return Result{Decision: d.Execute, Context: Context{
		DecisionID: d.DecisionID, Route: d.Route.String(), HardBlockers: blockers, Reasons: reasons,
		Shadow: d.Shadow, ShadowIgnored: d.ShadowIgnored, Approval: d.Approval, ApprovalID: d.ApprovalID,
		ArgumentErrors: d.ArgumentErrors,
	}}
}

// Failed is the answer to an evaluation that cannot be decided: closed, with
// why in its context.
func Failed(err error) Result {
	return Result{Context: ErrorContext{Error: ErrorDetail{Status: http.StatusBadRequest, Message: err.Error()}}}
}

// Response is the answer to an Access Evaluations request with evaluations.
type Response struct {
	Evaluations []Result `json:"evaluations"`
}

// Run decides b's items in request order with decide, an item that cannot
// be decided answering Failed, and stops as b's semantic says: after the
// first false (deny_on_first_deny, a failure counting as a deny) or the
// first true (permit_on_first_permit). Items after the stop are neither
// decided nor answered, as the specification's examples show.
func (b *Batch) Run(decide func(Evaluation) Result) []Result {
	out := make([]Result, 0, len(b.Items))
	for _, it := range b.Items {
		var r Result
		if it.Err != nil {
			r = Failed(it.Err)
		} else {
			r = decide(it.Evaluation)
		}
		out = append(out, r)
		if b.Semantic == DenyOnFirstDeny && !r.Decision || b.Semantic == PermitOnFirstPermit && r.Decision {
			break
		}
	}
	return out
}
