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
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Scope is what a kill stops.
type Scope string

// The scopes: every call, or the calls of one agent_id, tool (by any of
// its catalog names), catalog action id or principal. An agent_id is the
// caller's own word; a principal is what its token vouches for, so only a
// principal kill binds a caller that lies about, or leaves out, its
// agent_id.
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

// ErrNotFound is a store's answer for a kill that is not stored or already
// lifted, and for an id no stored kill can have.
var ErrNotFound = errors.New("there is no active kill switch with this id")

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

// MaxExpiry bounds how far ahead an expiry may be: a kill meant to last
// longer is set without one, and stays until lifted.
const MaxExpiry = 366 * 24 * time.Hour

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
	case k.Scope != ScopeAll && clean(k.Value) == "":
		return fmt.Errorf("%w: scope %s needs the value to stop (the %s)", ErrInvalid, k.Scope, k.Scope)
	case utf8.RuneCountInString(k.Value) > MaxValue:
		return fmt.Errorf("%w: the value is longer than %d characters", ErrInvalid, MaxValue)
	case k.Reason == "":
		return fmt.Errorf("%w: a reason is required", ErrInvalid)
	case utf8.RuneCountInString(k.Reason) > MaxReason:
		return fmt.Errorf("%w: the reason is longer than %d characters", ErrInvalid, MaxReason)
	case !k.ExpiresAt.IsZero():
		return CheckExpiry(k.ExpiresAt, now)
	}
	return nil
}

// CheckExpiry reports what is wrong with an expiry an operator gives at
// now: it must be in the future and at most MaxExpiry ahead. The zero time
// is an expiry like any other here (long past), never "no expiry": a kill
// without one is asked for by leaving expires_at out.
func CheckExpiry(at, now time.Time) error {
	switch {
	case !at.After(now):
		return fmt.Errorf("%w: expires_at %s is not in the future (leave it out for a kill that lasts until lifted)", ErrInvalid, at.UTC().Format(time.RFC3339))
	case at.Sub(now) > MaxExpiry:
		return fmt.Errorf("%w: expires_at %s is more than %d days ahead (leave it out for a kill that lasts until lifted)", ErrInvalid, at.UTC().Format(time.RFC3339), MaxExpiry/(24*time.Hour))
	}
	return nil
}

// Active reports whether k stops calls at now: not lifted, not expired.
func (k *Kill) Active(now time.Time) bool {
	return k.LiftedAt.IsZero() && (k.ExpiresAt.IsZero() || now.Before(k.ExpiresAt))
}

// Target is a call as kills match it: its agent, tool names, catalog
// action and principals.
type Target struct {
	AgentID  string
	ToolName string // as sent
	// ToolID and ToolAliases are the catalog tool the name resolved to,
	// when it did: a kill on one name of a tool stops the calls made by
	// any other.
	ToolID      string
	ToolAliases []string
	ActionID    string
	Principals  []string
}

// Matches reports whether k stops call t at now. Values and the call's
// names compare in their clean form (see same), so a space, a case or a
// compatibility spelling cannot carry a call past a kill. An agent kill
// also stops a call whose principals hold bot://<agent>, the form a token
// vouches for an agent in.
func (k *Kill) Matches(t Target, now time.Time) bool {
	if !k.Active(now) {
		return false
	}
	switch k.Scope {
	case ScopeAll:
		return true
	case ScopeAgent:
		return same(t.AgentID, k.Value) || anySame(t.Principals, "bot://"+clean(k.Value))
	case ScopeTool:
		// A kill set on an MCP name, as an audit record shows it, stops its
		// <tool> part too: the <server> part is the name the upstream
		// reports, which the upstream can change.
		return t.tool(k.Value) || mcpTool(k.Value) != "" && t.tool(mcpTool(k.Value))
	case ScopeAction:
		return same(t.ActionID, k.Value)
	case ScopePrincipal:
		return anySame(t.Principals, k.Value)
	}
	return false
}

// tool reports whether v names t's tool: as sent, as an MCP tool's <tool>
// part, or as the catalog tool it resolved to by any of its names.
func (t Target) tool(v string) bool {
	return same(t.ToolName, v) || same(mcpTool(t.ToolName), v) || same(t.ToolID, v) || anySame(t.ToolAliases, v)
}

// mcpTool is the upstream's own name of a tool called as MCP tools are
// by coding agents and gated mcp-proxy, mcp__<server>__<tool>, or "" for
// any other name: a kill of send_email stops mcp__mail__send_email, and
// stays in force when the upstream reports another server name.
func mcpTool(name string) string {
	rest, ok := strings.CutPrefix(strings.ToLower(clean(name)), "mcp__")
	if !ok {
		return ""
	}
	_, tool, _ := strings.Cut(rest, "__")
	return tool
}

// clean is a name as kills compare it: without format characters such as
// zero-width spaces, then NFKC-normalised (so a full-width or ligature
// spelling is the plain one, and a letter split by a format character
// composes as the unsplit one does), trimmed of spaces.
func clean(s string) string {
	if printableASCII(s) {
		// No format characters, and NFKC leaves ASCII as it is: the common
		// case, on every decision while a kill is set, costs no allocation.
		return strings.TrimSpace(s)
	}
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(norm.NFKC.String(s))
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// same reports whether a call's name a is a kill's value v, compared clean
// and case-insensitively. Stopping more than the operator spelled out is
// the safe mistake; an empty name is never a value.
func same(a, v string) bool {
	a = clean(a)
	return a != "" && strings.EqualFold(a, clean(v))
}

func anySame(names []string, v string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return same(n, v) })
}

// ErrUnconfirmed is Board.Check's answer when the list it holds is older
// than its bound (or was never read): a kill set since may be missing, so
// no call can be ruled out.
var ErrUnconfirmed = errors.New("the kill switch list could not be confirmed recently enough")

// Board is one replica's copy of the active kills, replaced whole at each
// reload and read without locks by every decision.
type Board struct {
	maxStale time.Duration
	now      func() time.Time
	cur      atomic.Pointer[snapshot]
}

type snapshot struct {
	kills      []Kill
	confirmed  time.Time
	principals bool // some kill matches on principals (agent or principal scope)
}

// NewBoard returns a board whose list is too old to decide from maxStale
// after it was last confirmed. Until the first Set it confirms nothing.
// now is its clock (time.Now when nil).
func NewBoard(maxStale time.Duration, now func() time.Time) *Board {
	if now == nil {
		now = time.Now
	}
	return &Board{maxStale: maxStale, now: now}
}

// Now is the time by the board's clock, which its list's confirmations
// are taken by.
func (b *Board) Now() time.Time { return b.now() }

// Set replaces the list with kills, read from the source of truth at
// confirmed.
func (b *Board) Set(kills []Kill, confirmed time.Time) {
	principals := slices.ContainsFunc(kills, func(k Kill) bool { return k.Scope == ScopePrincipal || k.Scope == ScopeAgent })
	b.cur.Store(&snapshot{kills: kills, confirmed: confirmed, principals: principals})
}

// List returns the list held and when it was confirmed; ok is false before
// the first Set. The slice is shared: it must not be changed.
func (b *Board) List() (kills []Kill, confirmed time.Time, ok bool) {
	s := b.cur.Load()
	if s == nil {
		return nil, time.Time{}, false
	}
	return s.kills, s.confirmed, true
}

// Age is how long ago the list held was confirmed; ok is false before the
// first Set.
func (b *Board) Age() (age time.Duration, ok bool) {
	s := b.cur.Load()
	if s == nil {
		return 0, false
	}
	return b.now().Sub(s.confirmed), true
}

// MaxStale is the age past which Check refuses to decide from the list.
func (b *Board) MaxStale() time.Duration { return b.maxStale }

// Check returns the first kill that stops t, nil when none does, or
// ErrUnconfirmed when the list is too old to say. principals, when set,
// gives t's principals, asked for only when the list holds a kill that
// matches on them: working them out costs every call otherwise.
func (b *Board) Check(t Target, principals func() []string) (*Kill, error) {
	s := b.cur.Load()
	now := b.now()
	if s == nil || now.Sub(s.confirmed) > b.maxStale {
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
