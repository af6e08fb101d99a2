// Package kill is the kill switch: kills an operator sets to stop calls at
// once — of every agent, or of one agent, tool, catalog action or
// principal — and the in-memory list the decision path checks them
// against. The kills are stored (and shared between replicas) by
// internal/kill/postgres; a Board holds the last list read and says when
// it is too old to rule a call out.
package kill

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Scope is what a kill stops.
type Scope string

// The scopes: every call, or the calls of one agent_id, tool_name, catalog
// action id or principal.
const (
	ScopeAll       Scope = "all"
	ScopeAgent     Scope = "agent"
	ScopeTool      Scope = "tool"
	ScopeAction    Scope = "action"
	ScopePrincipal Scope = "principal"
)

// ErrInvalid is wrapped by every error about a kill as asked for: its
// scope, value, reason or expiry.
var ErrInvalid = errors.New("the kill switch cannot be set")

// ParseScope returns the Scope named s.
func ParseScope(s string) (Scope, error) {
	switch sc := Scope(s); sc {
	case ScopeAll, ScopeAgent, ScopeTool, ScopeAction, ScopePrincipal:
		return sc, nil
	}
	return "", fmt.Errorf("%w: scope %q is not all, agent, tool, action or principal", ErrInvalid, s)
}

// Bounds of what a kill holds, in characters.
const (
	MaxValue  = 256
	MaxReason = 1000
)

// Kill is one kill switch. Reason is the operator's own text: it is stored
// and listed, but never put in a decision, whose callers are the agents
// being stopped.
type Kill struct {
	ID        string    `json:"id"`
	Scope     Scope     `json:"scope"`
	Value     string    `json:"value,omitempty"`
	Reason    string    `json:"reason"`
	CreatedAt time.Time `json:"created_at"`
	// CreatedBy and LiftedBy are token names.
	CreatedBy string    `json:"created_by"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	LiftedAt  time.Time `json:"lifted_at,omitzero"`
	LiftedBy  string    `json:"lifted_by,omitempty"`
}

// Check reports what is wrong with k as an operator asks for it at now: a
// known scope, a value exactly when the scope is not all, a reason, an
// expiry (when set) still to come, and bounded lengths.
func (k *Kill) Check(now time.Time) error {
	if _, err := ParseScope(string(k.Scope)); err != nil {
		return err
	}
	switch {
	case k.Scope == ScopeAll && k.Value != "":
		return fmt.Errorf("%w: scope all takes no value", ErrInvalid)
	case k.Scope != ScopeAll && k.Value == "":
		return fmt.Errorf("%w: scope %s needs the value to stop (the %s)", ErrInvalid, k.Scope, k.Scope)
	case utf8.RuneCountInString(k.Value) > MaxValue:
		return fmt.Errorf("%w: the value is longer than %d characters", ErrInvalid, MaxValue)
	case k.Reason == "":
		return fmt.Errorf("%w: a reason is required", ErrInvalid)
	case utf8.RuneCountInString(k.Reason) > MaxReason:
		return fmt.Errorf("%w: the reason is longer than %d characters", ErrInvalid, MaxReason)
	case !k.ExpiresAt.IsZero() && !k.ExpiresAt.After(now):
		return fmt.Errorf("%w: expires_at %s is not in the future", ErrInvalid, k.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// Active reports whether k stops calls at now: not lifted, not expired.
func (k *Kill) Active(now time.Time) bool {
	return k.LiftedAt.IsZero() && (k.ExpiresAt.IsZero() || now.Before(k.ExpiresAt))
}

// Target is a call as kills match it: its agent, tool, catalog action and
// principals.
type Target struct {
	AgentID    string
	ToolName   string
	ActionID   string
	Principals []string
}

// Matches reports whether k stops call t at now.
func (k *Kill) Matches(t Target, now time.Time) bool {
	if !k.Active(now) {
		return false
	}
	switch k.Scope {
	case ScopeAll:
		return true
	case ScopeAgent:
		return t.AgentID == k.Value
	case ScopeTool:
		return t.ToolName == k.Value
	case ScopeAction:
		return t.ActionID == k.Value
	case ScopePrincipal:
		return slices.Contains(t.Principals, k.Value)
	}
	return false
}

// ErrUnconfirmed is Board.Check's answer when the list it holds is older
// than its bound (or was never read): a kill set since may be missing, so
// no call can be ruled out.
var ErrUnconfirmed = errors.New("the kill switch list could not be confirmed recently enough")

// Board is one replica's copy of the active kills, replaced whole at each
// reload and read without locks by every decision.
type Board struct {
	staleAfter time.Duration
	now        func() time.Time
	cur        atomic.Pointer[snapshot]
}

type snapshot struct {
	kills      []Kill
	confirmed  time.Time
	principals bool // some kill is principal-scoped
}

// NewBoard returns a board whose list is too old staleAfter after it was
// last confirmed. Until the first Set it confirms nothing.
func NewBoard(staleAfter time.Duration, now func() time.Time) *Board {
	if now == nil {
		now = time.Now
	}
	return &Board{staleAfter: staleAfter, now: now}
}

// Set replaces the list with kills, read from the source of truth at
// confirmed.
func (b *Board) Set(kills []Kill, confirmed time.Time) {
	principals := slices.ContainsFunc(kills, func(k Kill) bool { return k.Scope == ScopePrincipal })
	b.cur.Store(&snapshot{kills: kills, confirmed: confirmed, principals: principals})
}

// Check returns the first kill that stops t, nil when none does, or
// ErrUnconfirmed when the list is too old to say. principals, when set,
// gives t's principals, asked for only when the list holds a
// principal-scoped kill: working them out costs every call otherwise.
func (b *Board) Check(t Target, principals func() []string) (*Kill, error) {
	s := b.cur.Load()
	now := b.now()
	if s == nil || now.Sub(s.confirmed) > b.staleAfter {
		return nil, ErrUnconfirmed
	}
	if s.principals && principals != nil {
		t.Principals = principals()
	}
	for i := range s.kills {
		if s.kills[i].Matches(t, now) {
			k := s.kills[i]
			return &k, nil
		}
	}
	return nil, nil
}

// Active counts the kills of the list that stop calls now.
func (b *Board) Active() int {
	s := b.cur.Load()
	if s == nil {
		return 0
	}
	n := 0
	now := b.now()
	for i := range s.kills {
		if s.kills[i].Active(now) {
			n++
		}
	}
	return n
}
