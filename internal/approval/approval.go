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
	Requester Identity  `json:"requester"`
	AgentID   string    `json:"agent_id"`
	ToolName  string    `json:"tool_name"`
	Approver  Identity  `json:"approver,omitzero"`
	Reason    string    `json:"reason,omitempty"`
	// RequiredApprovers, when not empty, lists principals of which the
	// approver must hold at least one (from the catalog action).
	RequiredApprovers []string `json:"required_approvers,omitempty"`
	// DecisionID is the decision that asked; ConsumedBy the one that used it.
	DecisionID string          `json:"decision_id"`
	ConsumedBy string          `json:"consumed_by,omitempty"`
	Preview    json.RawMessage `json:"preview,omitempty"`
}
