package gate_test

import (
	"testing"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/gate"
)

// An approved call retried by digest in shadow mode, or without a token,
// neither uses nor spends the approval (and the call without a token does
// not run): shadow decisions use no approval, and a call without a token
// is nobody's retry. The requester's own retry
// then still runs on it.
func TestAttackedRetryByDigestShadowOrAnonymous(t *testing.T) {
	t.Parallel()
	f := newApprovals(t, "")
	a := byDigest(runtimeA)
	p := f.approvedAsk(t, a)
	shadow := a
	shadow.Shadow = true
	for name, req := range map[string]gate.Request{"shadow": shadow, "no token": byDigest(gate.Request{})} {
		d := f.decide(t, req, event(t, refundEvent))
		// A shadow decision executes whatever its route: it only reports.
		if (d.Execute && !req.Shadow) || d.ApprovalID == p || d.Approval != nil {
			t.Errorf("%s: route %s execute %v approval %q %+v", name, d.Route, d.Execute, d.ApprovalID, d.Approval)
		}
		if got := f.approval(t, p); got.Status != approval.StatusApproved {
			t.Fatalf("%s: the approval is %s", name, got.Status)
		}
	}
	if ok := f.decide(t, a, event(t, refundEvent)); !ok.Execute || ok.ApprovalID != p {
		t.Fatalf("the requester's retry: route %s blockers %v approval %q", ok.Route, ok.HardBlockers, ok.ApprovalID)
	}
}
