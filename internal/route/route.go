// Package route is gated's domain core: the routes and authorization states of
// the Agent Action Contract v1, the findings every decision source produces,
// and the rule that combines them. It does no I/O and imports nothing of
// gated's, so every rule built on it is a pure function.
package route

import (
	"fmt"
	"slices"
)

// Route is a decision outcome. The zero value is Accept; the order of the
// constants is the contract's strictness order, so max() is "stricter".
type Route uint8

const (
	Accept Route = iota
	Ask
	Defer
	Refuse
)

var routeNames = [...]string{"accept", "ask", "defer", "refuse"}

func (r Route) String() string {
	if int(r) < len(routeNames) {
		return routeNames[r]
	}
	return "refuse" // out of range never reads as permissive
}

// Names returns the route names in strictness order.
func Names() []string { return slices.Clone(routeNames[:]) }

// ParseRoute maps a contract route name to a Route; unknown names are an error
// so that callers can fail closed.
func ParseRoute(s string) (Route, error) {
	for i, n := range routeNames {
		if n == s {
			return Route(i), nil
		}
	}
	return Refuse, fmt.Errorf("unknown route %q", s)
}

// Stricter returns the stricter of two routes.
func Stricter(a, b Route) Route { return max(a, b) }

func (r Route) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

func (r *Route) UnmarshalText(b []byte) error {
	v, err := ParseRoute(string(b))
	*r = v
	return err
}

// AuthState is an authorization state, ordered weakest to strongest.
type AuthState uint8

const (
	AuthNone AuthState = iota
	AuthUserClaimed
	AuthAuthenticated
	AuthValidated
	AuthConfirmed
)

var authNames = [...]string{"none", "user_claimed", "authenticated", "validated", "confirmed"}

func (a AuthState) String() string {
	if int(a) < len(authNames) {
		return authNames[a]
	}
	return "none"
}

// ParseAuthState maps a contract authorization state name to an AuthState.
func ParseAuthState(s string) (AuthState, error) {
	for i, n := range authNames {
		if n == s {
			return AuthState(i), nil
		}
	}
	return AuthNone, fmt.Errorf("unknown authorization_state %q", s)
}

func (a AuthState) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

func (a *AuthState) UnmarshalText(b []byte) error {
	v, err := ParseAuthState(string(b))
	*a = v
	return err
}

// Category is a tool's consequence class.
type Category string

const (
	PublicRead  Category = "public_read"
	PrivateRead Category = "private_read"
	Write       Category = "write"
	Unknown     Category = "unknown"
)

// Valid reports whether c is one of the contract's four categories.
func (c Category) Valid() bool {
	switch c {
	case PublicRead, PrivateRead, Write, Unknown:
		return true
	}
	return false
}

// Source names where a finding came from.
type Source string

const (
	SourceContract  Source = "contract"
	SourceEvidence  Source = "evidence"
	SourceRuntime   Source = "runtime"
	SourceCatalog   Source = "catalog"
	SourcePolicy    Source = "policy"
	SourceGated     Source = "gated"      // gated's own failures: audit, internal errors
	SourceActionAPI Source = "action_api" // an Action API plan's own rules
)

// Finding is one rule's verdict. Blocking findings become hard blockers; a
// non-blocking finding can still raise the route (the runtime's own "ask",
// say) or carry a warning at Accept.
type Finding struct {
	Source   Source `json:"source"`
	Code     string `json:"code"`
	Route    Route  `json:"route"`
	Blocking bool   `json:"blocking"`
	Message  string `json:"message"`
}

// Outcome is the combination of a set of findings.
type Outcome struct {
	Route        Route
	HardBlockers []string // codes of blocking findings, first occurrence order, no duplicates
}

// Pass reports whether the outcome lets a tool execute: accept with no hard
// blockers. This is the contract's execution rule.
func (o Outcome) Pass() bool { return o.Route == Accept && len(o.HardBlockers) == 0 }

// GateDecision is the contract's word for Pass: "pass" or "fail", as the
// reference's gate_decision and candidate_gate and the audit record say it.
func (o Outcome) GateDecision() string {
	if o.Pass() {
		return "pass"
	}
	return "fail"
}

// Combine folds findings into an outcome: the route is the maximum over all
// findings (Accept when there are none) and every blocking finding is a hard
// blocker. A hard blocker counts as at least Ask, so a route of accept always
// means the tool may execute — a client that reads only the route fails
// closed. Adding findings can only make the outcome stricter.
func Combine(findings []Finding) Outcome {
	var o Outcome
	for i, f := range findings {
		o.Route = Stricter(o.Route, f.Route)
		if f.Blocking {
			o.Route = Stricter(o.Route, Ask)
			if !seenBlocker(findings[:i], f.Code) {
				o.HardBlockers = append(o.HardBlockers, f.Code)
			}
		}
	}
	if o.HardBlockers == nil {
		o.HardBlockers = []string{}
	}
	return o
}

func seenBlocker(prev []Finding, code string) bool {
	for _, f := range prev {
		if f.Blocking && f.Code == code {
			return true
		}
	}
	return false
}
