package approval

import (
	"errors"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/route"
)

var requester = Identity{TokenName: "runtime-a", Principals: []string{"operator://bob", "group://ops", "bot://agent-7", "user://current"}}

func pending() *Approval {
	return &Approval{
		ID:         "ap-1",
		Status:     StatusPending,
		Digest:     "sha256:aa",
		CreatedAt:  t0,
		ExpiresAt:  t0.Add(DefaultTTL),
		Requester:  requester,
		AgentID:    "agent-7",
		ToolName:   "payments.refund",
		DecisionID: "dec-1",
	}
}

// code returns the *Error code of err, "" for nil.
func code(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%v is not an *Error", err)
	}
	if e.Message == "" || e.Error() != e.Message {
		t.Fatalf("error %q has no message", e.Code)
	}
	return e.Code
}

func TestCanDecide(t *testing.T) {
	alice := Identity{TokenName: "console-alice", Principals: []string{"operator://alice", "group://ops", "user://current"}}
	now := t0.Add(time.Minute)
	for _, c := range []struct {
		name     string
		missing  bool
		change   func(*Approval)
		approver Identity
		now      time.Time
		want     string
	}{
		{name: "a teammate sharing only a group and user://current", approver: alice, want: ""},
		{name: "just before expiry", approver: alice, now: t0.Add(DefaultTTL - time.Nanosecond), want: ""},
		{name: "unknown", missing: true, approver: alice, want: route.CodeApprovalUnknown},
		{name: "anonymous approver", approver: Identity{Principals: []string{"operator://alice"}}, want: route.CodeApprovalApproverAnonymous},
		{name: "the requester's token", approver: Identity{TokenName: "runtime-a"}, want: route.CodeApprovalSelfApproval},
		{name: "another token of the same operator", approver: Identity{TokenName: "console-bob", Principals: []string{"operator://bob"}}, want: route.CodeApprovalSelfApproval},
		{name: "the agent's own principal", approver: Identity{TokenName: "x", Principals: []string{"bot://agent-7"}}, want: route.CodeApprovalSelfApproval},
		{name: "required group held", change: func(a *Approval) { a.RequiredApprovers = []string{"group://payments-leads", "group://ops"} }, approver: alice, want: ""},
		{name: "required group missing", change: func(a *Approval) { a.RequiredApprovers = []string{"group://payments-leads"} }, approver: alice, want: route.CodeApprovalApproverNotAllowed},
		{name: "required *", change: func(a *Approval) { a.RequiredApprovers = []string{"*"} }, approver: alice, want: ""},
		{name: "self even when required", change: func(a *Approval) { a.RequiredApprovers = []string{"operator://bob"} }, approver: Identity{TokenName: "console-bob", Principals: []string{"operator://bob"}}, want: route.CodeApprovalSelfApproval},
		{name: "approved already", change: func(a *Approval) { a.Status = StatusApproved }, approver: alice, want: route.CodeApprovalDecided},
		{name: "denied already", change: func(a *Approval) { a.Status = StatusDenied }, approver: alice, want: route.CodeApprovalDecided},
		{name: "used", change: func(a *Approval) { a.Status = StatusUsed }, approver: alice, want: route.CodeApprovalDecided},
		{name: "marked expired", change: func(a *Approval) { a.Status = StatusExpired }, approver: alice, want: route.CodeApprovalExpired},
		{name: "at expiry", approver: alice, now: t0.Add(DefaultTTL), want: route.CodeApprovalExpired},
		{name: "unknown status", change: func(a *Approval) { a.Status = "revoked" }, approver: alice, want: route.CodeApprovalUnknown},
		{name: "self before state", change: func(a *Approval) { a.Status = StatusDenied }, approver: requester, want: route.CodeApprovalSelfApproval},
	} {
		a := pending()
		if c.change != nil {
			c.change(a)
		}
		if c.missing {
			a = nil
		}
		at := now
		if !c.now.IsZero() {
			at = c.now
		}
		if got := code(t, CanDecide(a, c.approver, at)); got != c.want {
			t.Errorf("%s: code %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCheckUse(t *testing.T) {
	approved := func(a *Approval) { a.Status = StatusApproved }
	now := t0.Add(time.Minute)
	reordered := Identity{TokenName: "runtime-a", Principals: []string{"user://current", "bot://agent-7", "group://ops", "operator://bob", "group://ops"}}
	for _, c := range []struct {
		name      string
		change    func(*Approval)
		digest    string
		requester Identity
		now       time.Time
		want      string
	}{
		{name: "approved, same call", change: approved, want: ""},
		{name: "principals in another order", change: approved, requester: reordered, want: ""},
		{name: "unknown", want: route.CodeApprovalUnknown},
		{name: "pending", change: func(*Approval) {}, want: route.CodeApprovalPending},
		{name: "denied", change: func(a *Approval) { a.Status = StatusDenied }, want: route.CodeApprovalDenied},
		{name: "used", change: func(a *Approval) { a.Status = StatusUsed; a.ConsumedBy = "dec-2" }, want: route.CodeApprovalUsed},
		{name: "marked expired", change: func(a *Approval) { a.Status = StatusExpired }, want: route.CodeApprovalExpired},
		{name: "approved but past expiry", change: approved, now: t0.Add(DefaultTTL), want: route.CodeApprovalExpired},
		{name: "unknown status", change: func(a *Approval) { a.Status = "" }, want: route.CodeApprovalUnknown},
		{name: "other call", change: approved, digest: "sha256:bb", want: route.CodeApprovalDigestMismatch},
		{name: "other token", change: approved, requester: Identity{TokenName: "runtime-b", Principals: requester.Principals}, want: route.CodeApprovalRequesterMismatch},
		{name: "fewer principals", change: approved, requester: Identity{TokenName: "runtime-a", Principals: []string{"operator://bob"}}, want: route.CodeApprovalRequesterMismatch},
		{name: "requester before state", change: func(a *Approval) { a.Status = StatusDenied }, requester: Identity{TokenName: "runtime-b"}, want: route.CodeApprovalRequesterMismatch},
	} {
		var a *Approval
		if c.change != nil {
			a = pending()
			c.change(a)
		}
		d, who, at := "sha256:aa", requester, now
		if c.digest != "" {
			d = c.digest
		}
		if c.requester.TokenName != "" {
			who = c.requester
		}
		if !c.now.IsZero() {
			at = c.now
		}
		if got := code(t, CheckUse(a, d, who, at)); got != c.want {
			t.Errorf("%s: code %q, want %q", c.name, got, c.want)
		}
	}
}
