package approval

import (
	"encoding/json"
	"fmt"
	"time"
)

// Status is where an approval is in its life: pending until a person
// approves or denies it or it expires; approved until the retried call uses
// it, once.
type Status string

// The statuses. Expired approvals are marked, not deleted, so the trail
// stays whole until audit retention purges it.
const (
	StatusPending  Status = "pending"
	StatusApproved Status = "approved"
	StatusDenied   Status = "denied"
	StatusExpired  Status = "expired"
	StatusUsed     Status = "used"
)

// ParseStatus returns the Status named s, or an error for any other value
// (a stored row with an unknown status must not be treated as usable).
func ParseStatus(s string) (Status, error) {
	switch st := Status(s); st {
	case StatusPending, StatusApproved, StatusDenied, StatusExpired, StatusUsed:
		return st, nil
	}
	return "", fmt.Errorf("%q is not an approval status (pending, approved, denied, expired or used)", s)
}

// DefaultTTL is how long an approval stays open when the catalog action
// sets no expiry of its own.
const DefaultTTL = 15 * time.Minute

// ExpiresAt returns when an approval created at now expires: after ttl, or
// after DefaultTTL when ttl is not positive (the catalog set none).
func ExpiresAt(now time.Time, ttl time.Duration) time.Time {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return now.Add(ttl)
}

// Approval is one ask a person can answer. It never holds the raw
// arguments: the digest binds it to them and Preview shows them masked.
// Besides the call it holds what an approver needs to decide: the masked
// preview, the asking decision's route and blocking findings, the
// requester and agent, and the catalog and policy revisions it was made on.
type Approval struct {
	ID     string `json:"id"`
	Status Status `json:"status"`
	// Digest is Digest(Subject) of the call that asked.
	Digest    string    `json:"digest"`
	CreatedAt time.Time `json:"created_at"`
	// ExpiresAt ends both the wait for a decision and the window to use an
	// approved approval.
	ExpiresAt time.Time `json:"expires_at"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	UsedAt    time.Time `json:"used_at,omitzero"`
	Requester Identity  `json:"requester"`
	AgentID   string    `json:"agent_id"`
	ToolName  string    `json:"tool_name"`
	// ToolCategory and RiskDomain are the asking decision's (the category
	// the rules ran on, after catalog floors); ActionID its catalog action.
	ToolCategory string `json:"tool_category"`
	RiskDomain   string `json:"risk_domain"`
	ActionID     string `json:"action_id"`
	// Route is the asking decision's route: ask or defer.
	Route string `json:"route"`
	// Findings are the asking decision's blocking findings: why it asked.
	Findings  []Finding `json:"findings"`
	Revisions Revisions `json:"revisions"`
	Approver  Identity  `json:"approver,omitzero"`
	Reason    string    `json:"reason,omitempty"`
	// RequiredApprovers, when not empty, lists principals of which the
	// approver must hold at least one (from the catalog action).
	RequiredApprovers []string `json:"required_approvers,omitempty"`
	// DecisionID is the decision that asked; ConsumedBy the one that used it.
	DecisionID string          `json:"decision_id"`
	ConsumedBy string          `json:"consumed_by,omitempty"`
	Preview    json.RawMessage `json:"preview,omitempty"`
	// MaskedArguments are the arguments masked but not cut (see
	// MaskedArguments); nil when they were too large. They are served only
	// to approvers, by their own endpoint, never with the approval itself
	// (lists, webhook events, the requester's reads).
	MaskedArguments json.RawMessage `json:"-"`
}

// Finding is one blocking finding of the asking decision. Its message is
// gated's own, which never quotes an argument value, so an approver may
// read it.
type Finding struct {
	Code    string `json:"code"`
	Route   string `json:"route"`
	Message string `json:"message"`
}

// Revisions names the catalog and policy snapshots the asking decision
// was made on, so an approver can tell a rule changed since.
type Revisions struct {
	Catalog string `json:"catalog"`
	Policy  string `json:"policy"`
}
