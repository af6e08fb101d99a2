package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/testwait"
)

// openStore opens a Store on dbURL, closed when the test ends.
func openStore(t *testing.T, dbURL string) *Store {
	t.Helper()
	s := New(pgtest.DB(t, dbURL))
	t.Cleanup(s.Close)
	return s
}

// withPoolSize returns dbURL with a pool of n connections.
func withPoolSize(t *testing.T, dbURL string, n int) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", fmt.Sprint(n))
	u.RawQuery = q.Encode()
	return u.String()
}

// deadline is a context that only guards against hanging, as
// testwait.Deadline does: reaching it fails the test rather than timing
// anything.
func deadline(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testwait.Deadline)
	t.Cleanup(cancel)
	return ctx
}

var (
	runtimeA  = approval.Identity{TokenName: "runtime-a", Principals: []string{"bot://agent-7", "group://ops", "user://current"}}
	alice     = approval.Identity{TokenName: "console-alice", Principals: []string{"operator://alice", "group://payments-leads"}}
	carol     = approval.Identity{TokenName: "console-carol", Principals: []string{"operator://carol"}}
	digestOne = "sha256:" + fmt.Sprintf("%064x", 1)
)

func newID(t *testing.T) string {
	t.Helper()
	return uuid.Must(uuid.NewV7()).String()
}

// pendingApproval is a plausible pending approval created at now: an ask
// on a refund, needing a payments lead.
func pendingApproval(t *testing.T, now time.Time) *approval.Approval {
	t.Helper()
	return &approval.Approval{
		ID:           newID(t),
		Status:       approval.StatusPending,
		Digest:       digestOne,
		CreatedAt:    now,
		ExpiresAt:    approval.ExpiresAt(now, 0),
		Requester:    runtimeA,
		AgentID:      "agent-7",
		ToolName:     "payments.refund",
		ToolCategory: "write",
		RiskDomain:   "payments",
		ActionID:     "payments:refund",
		Route:        "ask",
		Findings: []approval.Finding{
			{Code: "contract.write_missing_explicit_confirmation", Route: "ask", Message: "a write needs the user's explicit confirmation"},
			{Code: "policy.refund_over_limit", Route: "ask", Message: "refunds over 100 need a payments lead"},
		},
		Revisions:         approval.Revisions{Catalog: "cat-1", Policy: "pol-1"},
		RequiredApprovers: []string{"group://payments-leads"},
		DecisionID:        newID(t),
		// As approval.Preview writes it: keys sorted, the count of the
		// keys left out last. jsonb would move "…" first.
		Preview: []byte(`{"amount":12.5,"api_key":"[secret:sensitive-key len=19 fp=0a1b2c]","…":"(3 more keys)"}`),
	}
}

func create(t *testing.T, s *Store, a *approval.Approval) *approval.Approval {
	t.Helper()
	if err := s.Create(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	return a
}

func get(t *testing.T, s *Store, id string) *approval.Approval {
	t.Helper()
	a, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// code is the *approval.Error code of err, "" for nil; any other error
// fails the test.
func code(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	e, ok := errors.AsType[*approval.Error](err)
	if !ok {
		t.Fatalf("%v is not an *approval.Error", err)
	}
	return e.Code
}

// consumingRecord is the audit record of a decision that uses approval id.
func consumingRecord(t *testing.T, i int, id string, at time.Time) *audit.Record {
	t.Helper()
	rec := audittest.Record(1, at)
	rec.DecisionID = newID(t)
	rec.RequestID = fmt.Sprintf("retry-%d", i)
	rec.ApprovalID = id
	return rec
}
