package gate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/approval/approvaltest"
	approvalpg "github.com/gatedhq/gated/internal/approval/postgres"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
)

// byDigest is a request of a surface that retries by sending the same
// call (the hook of a runtime that cannot ask).
func byDigest(req gate.Request) gate.Request {
	req.RetryByDigest = true
	return req
}

func (f *approvalsFixture) pending(t *testing.T) []approval.Approval {
	t.Helper()
	as, _, err := f.store.List(context.Background(), approval.StatusPending, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// askedWith is an ask carrying an approval other than those of not.
// approvedAsk decides the refund as req, which must ask, and has alice
// approve the approval it opens.
func (f *approvalsFixture) approvedAsk(t *testing.T, req gate.Request) string {
	t.Helper()
	p := askedWith(t, f.decide(t, req, event(t, refundEvent)))
	if _, err := f.store.Decide(context.Background(), p, alice, true, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	return p
}

func askedWith(t *testing.T, d *gate.Decision, not ...string) string {
	t.Helper()
	if d.Route != route.Ask || d.Execute || d.Approval == nil {
		t.Fatalf("route %s blockers %v approval %+v; want an ask with an approval", d.Route, d.HardBlockers, d.Approval)
	}
	for _, id := range not {
		if d.Approval.ID == id {
			t.Fatalf("the ask offers approval %s again", id)
		}
	}
	return d.Approval.ID
}

// A call retried by digest: while its approval is pending the same call is
// offered the same approval; approved, the same call by the same requester
// is decided as the evidence-ref retry is (confirmed, spent with its audit
// record); then it asks afresh. Another argument or another token finds
// nothing, and a denied approval is never used.
func TestApprovalRetryByDigest(t *testing.T) {
	t.Parallel()
	f := newApprovals(t, "")
	a, b := byDigest(runtimeA), byDigest(runtimeB)
	p := askedWith(t, f.decide(t, a, event(t, refundEvent)))
	again := f.decide(t, a, event(t, refundEvent))
	if again.Approval == nil || again.Approval.ID != p || again.ApprovalID != p {
		t.Fatalf("a retry while pending: approval %+v; want %s offered again", again.Approval, p)
	}
	if n := len(f.pending(t)); n != 1 {
		t.Fatalf("%d pending approvals after a retry while pending; want 1", n)
	}
	if rec := f.record(t, again.DecisionID); rec.ApprovalID != p || rec.FinalRoute != "ask" {
		t.Errorf("the retry's record: approval_id %q route %s", rec.ApprovalID, rec.FinalRoute)
	}
	if _, err := f.store.Decide(context.Background(), p, alice, true, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	// Not for another call, nor another requester: each asks with its own.
	askedWith(t, f.decide(t, a, event(t, strings.Replace(refundEvent, `"amount":12.5`, `"amount":1250`, 1))), p)
	askedWith(t, f.decide(t, b, event(t, refundEvent)), p)
	// A surface that carries refs does not retry by digest.
	askedWith(t, f.decide(t, runtimeA, event(t, refundEvent)), p)

	ok := f.decide(t, a, event(t, refundEvent))
	if ok.Route != route.Accept || !ok.Execute || ok.ApprovalID != p || ok.Approval != nil {
		t.Fatalf("the approved retry: route %s blockers %v approval %q", ok.Route, ok.HardBlockers, ok.ApprovalID)
	}
	if ok.AuthorizationReport.DeclaredState != route.AuthValidated || ok.AuthorizationState != route.AuthConfirmed {
		t.Errorf("authorization: declared %s effective %s", ok.AuthorizationReport.DeclaredState, ok.AuthorizationState)
	}
	if ok.Audit == nil || ok.Audit.Sink != audit.SinkPostgres || ok.Audit.Status != audit.StatusWritten {
		t.Errorf("audit %+v: the spending record is written with the approval", ok.Audit)
	}
	if used := f.approval(t, p); used.Status != approval.StatusUsed || used.ConsumedBy != ok.DecisionID {
		t.Fatalf("status %s consumed_by %q; want used by %s", used.Status, used.ConsumedBy, ok.DecisionID)
	}
	if rec := f.record(t, ok.DecisionID); rec.ApprovalID != p || rec.FinalRoute != "accept" {
		t.Errorf("spending record: approval_id %q route %s", rec.ApprovalID, rec.FinalRoute)
	}
	// Used: the same call asks again, with a new approval; denied, that one
	// is not used either.
	q := askedWith(t, f.decide(t, a, event(t, refundEvent)), p)
	if _, err := f.store.Decide(context.Background(), q, alice, false, "no", time.Now()); err != nil {
		t.Fatal(err)
	}
	askedWith(t, f.decide(t, a, event(t, refundEvent)), p, q)
}

// The approval a digest finds lifts what an approval lifts and nothing
// else: the runtime's own refusal (not part of the digest) still refuses,
// and the approval stays unspent for a retry that can use it.
func TestApprovalRetryByDigestKeepsOtherBlockers(t *testing.T) {
	t.Parallel()
	f := newApprovals(t, "")
	a := byDigest(runtimeA)
	p := f.approvedAsk(t, a)
	refusing := strings.Replace(refundEvent, `"recommended_route":"accept"`, `"recommended_route":"refuse"`, 1)
	refusedWith(t, f.decide(t, a, event(t, refusing)), "runtime_refusal")
	if got := f.approval(t, p); got.Status != approval.StatusApproved {
		t.Fatalf("a refused retry spent the approval: %s", got.Status)
	}
	if d := f.decide(t, a, event(t, refundEvent)); d.Route != route.Accept || d.ApprovalID != p {
		t.Fatalf("the retry after: route %s blockers %v", d.Route, d.HardBlockers)
	}
}

// A retry found by digest is decided twice (without, then with its
// approval) but counted once against a rate limit: two calls a minute let
// the ask and its approved retry through, and the next call is over it.
func TestApprovalRetryByDigestCountsOnce(t *testing.T) {
	t.Parallel()
	_, dbURL := approvaltest.Database(t, time.Now())
	store := approvalpg.New(pgtest.DB(t, dbURL))
	t.Cleanup(store.Close)
	c, err := catalog.Load([]string{"../../examples/catalog"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "POLICY.md"), []byte(`---
schema: policy/v1
id: "@gated-tests/limited"
grants:
  - {principal: "*", actions: [{action: "messaging:send-email"}]}
limits:
  - {kind: rate-tool-calls, value: 2, per: minute}
---
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := policy.Load([]string{dir}, c)
	if err != nil {
		t.Fatal(err)
	}
	e := gate.New(gate.WithCatalog(func() *catalog.Catalog { return c }, gate.UnknownDefer, catalog.ArgumentsEnforce),
		gate.WithPolicy(func() *policy.Set { return ps }, policy.NewLimiter()),
		gate.WithAudit(approvaltest.SyncRecorder(t, dbURL), audit.NewRedactor([]byte("0123456789abcdef0123456789abcdef")), "test"),
		gate.WithApprovals(store, ""))
	raw, err := os.ReadFile("../../examples/events/tour/send_email_ask.json")
	if err != nil {
		t.Fatal(err)
	}
	call := func() *gate.Decision {
		req := byDigest(runtimeA)
		req.Event = event(t, string(raw))
		return e.Decide(context.Background(), req)
	}
	p := askedWith(t, call())
	if _, err := store.Decide(context.Background(), p, alice, true, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	if d := call(); d.Route != route.Accept || d.ApprovalID != p {
		t.Fatalf("the approved retry, the second call of the minute: route %s blockers %v", d.Route, d.HardBlockers)
	}
	if d := call(); d.Route != route.Defer || d.Approval != nil {
		t.Fatalf("the third call of the minute: route %s blockers %v approval %+v; want over the limit", d.Route, d.HardBlockers, d.Approval)
	}
}
