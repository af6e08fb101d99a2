package gate_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testtree"
)

func catalogOf(t *testing.T, files map[string]string) *catalog.Catalog {
	t.Helper()
	dir := t.TempDir()
	testtree.Write(t, dir, files)
	c, err := catalog.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// follower keeps what a live engine hands its candidate.
type follower struct {
	mu sync.Mutex
	fs []*gate.Followed
}

func (f *follower) follow(x *gate.Followed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fs = append(f.fs, x)
}

// last is the decision handed over last; it fails unless want were
// handed over in all.
func (f *follower) last(t *testing.T, want int) *gate.Followed {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.fs) != want {
		t.Fatalf("%d decisions followed, want %d", len(f.fs), want)
	}
	return f.fs[len(f.fs)-1]
}

// The candidate decides the live decisions of the approvals flow on the
// same catalog: it agrees with every one, takes the live verdict on the
// retry's approval (approved, then used), and opens no approval itself.
func TestCandidateFollowsApprovals(t *testing.T) {
	t.Parallel()
	var got follower
	f := newApprovals(t, "", gate.WithFollower(got.follow))
	c := loadCatalog(t)
	cand := gate.New(gate.WithCatalog(func() *catalog.Catalog { return c }, gate.UnknownDefer, catalog.ArgumentsEnforce))
	ctx := context.Background()
	agrees := func(live *gate.Decision, n int) *gate.Decision {
		t.Helper()
		fl := got.last(t, n)
		if fl.Live.DecisionID != live.DecisionID || fl.Live.Route != live.Route {
			t.Fatalf("followed %s (%s), want the live decision %s (%s)", fl.Live.DecisionID, fl.Live.Route, live.DecisionID, live.Route)
		}
		d := cand.DecideFollowed(ctx, fl)
		if d.DecisionID != live.DecisionID || d.Route != live.Route || d.Approval != nil || d.Audit != nil {
			t.Fatalf("candidate: %s route %s blockers %v approval %+v audit %+v; live route %s blockers %v",
				d.DecisionID, d.Route, d.HardBlockers, d.Approval, d.Audit, live.Route, live.HardBlockers)
		}
		return d
	}

	ask := f.decide(t, runtimeA, event(t, refundEvent))
	agrees(ask, 1)
	if n := len(f.pending(t)); n != 1 {
		t.Fatalf("%d pending approvals, want the live ask's only", n)
	}
	if _, err := f.store.Decide(ctx, ask.Approval.ID, alice, true, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	retry := withRef(event(t, refundEvent), refOf(t, ask.Approval))
	if live := f.decide(t, runtimeA, retry); live.Route != route.Accept {
		t.Fatalf("live retry: route %s blockers %v", live.Route, live.HardBlockers)
	} else {
		agrees(live, 2)
	}
	live := f.decide(t, runtimeA, retry)
	refusedWith(t, live, route.CodeApprovalUsed)
	refusedWith(t, agrees(live, 3), route.CodeApprovalUsed)

	// Retried by digest: the live path found the approved approval and
	// decided the call again with its ref; the candidate decides that call.
	f.approvedAsk(t, byDigest(runtimeB))
	live = f.decide(t, byDigest(runtimeB), event(t, refundEvent))
	if live.Route != route.Accept {
		t.Fatalf("live retry by digest: route %s blockers %v", live.Route, live.HardBlockers)
	}
	agrees(live, 5)
}

// A candidate decides with its own sources: a catalog where the refund is
// irreversible (risk 3) defers what the live catalog asks for.
func TestCandidateDecidesWithItsOwnSources(t *testing.T) {
	t.Parallel()
	var got follower
	f := newApprovals(t, "", gate.WithFollower(got.follow))
	c := catalogOf(t, map[string]string{
		"refund/TOOL.md": tool("payments.refund", "risk_level: 3", "mutates: [payments:refunds]", "metadata: {gated: {aliases: [refund]}}"),
	})
	cand := gate.New(gate.WithCatalog(func() *catalog.Catalog { return c }, gate.UnknownDefer, catalog.ArgumentsEnforce))
	live := f.decide(t, runtimeA, event(t, refundEvent))
	d := cand.DecideFollowed(context.Background(), got.last(t, 1))
	if live.Route != route.Ask || d.Route != route.Defer || d.Revisions.Catalog != c.Revision() || d.Revisions.Catalog == live.Revisions.Catalog {
		t.Fatalf("live %s (%s), candidate %s %v (%s): want ask, then defer on the candidate's catalog",
			live.Route, live.Revisions.Catalog, d.Route, d.HardBlockers, d.Revisions.Catalog)
	}
	if n := len(f.pending(t)); n != 1 {
		t.Fatalf("%d pending approvals, want the live ask's only", n)
	}
}

// A candidate judges the approver of a retry's approval against its own
// catalog: one that takes the approver off the tool's approvers refuses
// the retry the live path accepts (approval_approver_not_allowed), as the
// live path will once the candidate is promoted, where it took the live
// verdict and showed no change.
func TestCandidateChecksTheApproverAgainstItsCatalog(t *testing.T) {
	t.Parallel()
	var got follower
	f := newApprovals(t, "", gate.WithFollower(got.follow))
	narrowed := catalogOf(t, map[string]string{
		"refund/TOOL.md": strings.Replace(approvalCatalog["refund/TOOL.md"], "group://payments-leads", "group://finance-leads", 1),
		"wipe/TOOL.md":   approvalCatalog["wipe/TOOL.md"],
	})
	cand := gate.New(gate.WithCatalog(func() *catalog.Catalog { return narrowed }, gate.UnknownDefer, catalog.ArgumentsEnforce))
	same := loadCatalog(t)
	twin := gate.New(gate.WithCatalog(func() *catalog.Catalog { return same }, gate.UnknownDefer, catalog.ArgumentsEnforce))
	ctx := context.Background()
	ask := f.decide(t, runtimeA, event(t, refundEvent))
	if _, err := f.store.Decide(ctx, ask.Approval.ID, alice, true, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	live := f.decide(t, runtimeA, withRef(event(t, refundEvent), refOf(t, ask.Approval)))
	if live.Route != route.Accept {
		t.Fatalf("live retry: route %s blockers %v", live.Route, live.HardBlockers)
	}
	fl := got.last(t, 2)
	refusedWith(t, cand.DecideFollowed(ctx, fl), route.CodeApprovalApproverNotAllowed)
	if d := twin.DecideFollowed(ctx, fl); d.Route != route.Accept {
		t.Fatalf("a candidate on the live catalog: route %s blockers %v", d.Route, d.HardBlockers)
	}
}
