package gate

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/route"
)

// Followed is one live decision handed to a candidate engine: the request
// the live path decided last (a retry found by digest carries its
// approval's ref), at the live decision's time, with what the live path
// found of the approval that retry carried. A candidate decides it again
// after the answer, so Decide copies what it hands over and keeps nothing.
type Followed struct {
	Request Request
	At      time.Time // the live decision's clock: time conditions and grants agree
	Live    *Decision
	// use is the live path's check of the retry's approval ref, nil when
	// the call carried none; approvals: the live path checks such refs.
	use       *approvalUse
	approvals bool
}

// WithFollower hands every decision, once decided, recorded and counted,
// to follow (a candidate's bounded queue). follow must not block: it runs
// on the answer's path.
func WithFollower(follow func(*Followed)) Option { return func(e *Engine) { e.follow = follow } }

// DecideFollowed decides a followed live decision again with this engine's
// sources (a candidate's): at the live decision's time, without creating,
// reading or spending an approval (the live path's verdict on the retry's
// approval is taken as it was), and recording, counting and tracing
// nothing. Like Decide it never panics: a failure is a refusal naming it.
func (e *Engine) DecideFollowed(ctx context.Context, f *Followed) *Decision {
	req := f.Request
	// The surface picked the category from the live catalog; the candidate
	// joins its own. The surface's checks keep state for its answer: the
	// candidate runs fresh ones.
	req.Pick, req.counted, req.Checks = nil, false, nil
	if req.FreshChecks != nil {
		req.Checks = req.FreshChecks()
	}
	s := &decision{e: e, req: req, start: time.Now(), now: f.At, followed: f, d: &Decision{
		DecisionID: f.Live.DecisionID, Shadow: f.Live.Shadow, ContractVersion: route.ContractVersion,
	}}
	if err := safely(func() { s.decide(ctx) }); err != nil {
		s.d.refuse(route.CodeInternalError, "the candidate's decision failed inside gated: "+err.Error())
	} else if s.use != nil && s.use.refusal != nil {
		s.d.refuse(s.use.refusal.Code, s.use.refusal.Message)
	}
	return s.d
}

// follow hands the decision s made to the engine's follower.
func (s *decision) follow() {
	if s.e.follow == nil {
		return
	}
	// A copy: the surface may still change its answer's decision.
	live := *s.d
	live.HardBlockers = slices.Clone(live.HardBlockers)
	s.e.follow(&Followed{Request: s.req, At: s.now, Live: &live, use: s.use, approvals: s.e.approvals != nil})
}

// followedApproval is the candidate's check of the retry's approval ref u:
// the live path's verdict on the same ref, but for its approver, whom the
// candidate checks against approvers, its own catalog's: a candidate that
// takes someone off a tool's approvers refuses the approvals they gave, as
// the live path will once it is promoted. The candidate reads no approval
// store, so a ref the live path did not check refuses.
func (s *decision) followedApproval(u *approvalUse, approvers []string) *approvalUse {
	live := s.followed.use
	if live == nil || live.id != u.id {
		return u.refuse(route.CodeApprovalUnavailable, "the candidate reads no approvals, and the live decision did not check this one")
	}
	u.ok, u.refusal = live.ok, live.refusal
	if !live.ok && (live.refusal == nil || live.refusal.Code != route.CodeApprovalApproverNotAllowed) {
		return u
	}
	// Only the approver's check can have refused it live: everything else
	// about the approval held.
	err := approval.CheckApprover(live.approver, approvers)
	if err == nil {
		u.ok, u.refusal = true, nil
		return u
	}
	u.ok = false
	if aerr, ok := errors.AsType[*approval.Error](err); ok {
		u.refusal = aerr
		return u
	}
	return u.refuse(route.CodeApprovalUnavailable, err.Error())
}
