package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/gatedhq/gated/internal/route"
)

// The native evaluator decides the grants without Rego when a policy is
// POLICY.md alone (no custom module). It finds the same candidates as the generated gated.grants
// module, from the same (grant, action) pairs, which the generator hands
// it as it writes the Rego, so the two cannot disagree on which grants
// exist; how it reads each part of a grant mirrors the Rego and the OPA
// builtins it calls (net.ParseCIDR, OPA's time zones, exact integers).
// Building the Rego input and running OPA were most of a decision's
// policy cost.
//
// What the Rego evaluation would fail on is left to it, so a decision
// refuses with the same words as before: an event OPA's input cannot hold
// (an argument that is no JSON number, a NaN…), a client address
// net.cidr_contains cannot parse, an overrunning evaluation elsewhere, an
// ended request. Nothing else fails in the generated Rego either. The
// evaluation budget bounds Rego; the native evaluator's work is bounded by
// the grants of the decision's action and principals.

// Evaluator names.
const (
	EvaluatorNative = "native"
	EvaluatorRego   = "rego"
)

// nativeGrants indexes the grants by action, then by principal: a
// decision looks at the grants of its action (its id, its `kind:*`
// prefixes, `*`) for its principals and `*` only.
type nativeGrants struct {
	exact  map[string]*grantsByPrincipal // by action id
	prefix map[string]*grantsByPrincipal // by "storage:" for "storage:*"
	any    *grantsByPrincipal            // "*": every catalogued action
}

type grantsByPrincipal struct {
	named map[string][]*nativeGrant
	star  []*nativeGrant // principal "*": the request's principal
}

// nativeGrant is one grant as one candidate rule of the generated Rego
// reads it.
type nativeGrant struct {
	policy    string
	layer     int
	index     int
	principal string // "" for "*"
	revoked   bool
	expiry    expiryKind
	from      int64 // expiryWindow: [from, until) in Unix ns
	until     int64
	// never: an unknown condition kind (AIP-38 rule 6), so the conditions
	// never hold.
	never bool
	conds []nativeCondition
	hasIP bool // an ip-range condition, which needs the client address parsed
	// rego: Rego fails on a condition of this grant (a time zone or CIDR
	// that does not load the way its builtins load them; the load's own
	// checks let none through), so a decision that matches it is Rego's.
	rego bool
}

type expiryKind uint8

const (
	expiryNever expiryKind = iota
	expiryAlways
	expiryWindow
)

type nativeCondition struct {
	kind string
	// during-business-hours: minutes after midnight in loc, weekdays by
	// time.Weekday.
	loc        *time.Location
	start, end int
	days       [7]bool
	cidr       *net.IPNet // ip-range
	window     int64      // mfa-recent, ns
}

func newNativeGrants() *nativeGrants {
	return &nativeGrants{exact: map[string]*grantsByPrincipal{}, prefix: map[string]*grantsByPrincipal{}}
}

// add indexes g under the action pattern p.
func (n *nativeGrants) add(p pattern, g *nativeGrant) {
	var idx *grantsByPrincipal
	switch {
	case p.any:
		if n.any == nil {
			n.any = &grantsByPrincipal{}
		}
		idx = n.any
	case p.prefix != "":
		idx = n.prefix[p.prefix]
		if idx == nil {
			idx = &grantsByPrincipal{}
			n.prefix[p.prefix] = idx
		}
	default:
		idx = n.exact[p.exact]
		if idx == nil {
			idx = &grantsByPrincipal{}
			n.exact[p.exact] = idx
		}
	}
	if g.principal == "" {
		idx.star = append(idx.star, g)
		return
	}
	if idx.named == nil {
		idx.named = map[string][]*nativeGrant{}
	}
	idx.named[g.principal] = append(idx.named[g.principal], g)
}

// newNativeGrant is the native form of a grant the generator writes rules
// for.
func newNativeGrant(layer, index int, d *Document, gr Grant) *nativeGrant {
	g := &nativeGrant{policy: d.ID, layer: layer, index: index, revoked: gr.Revoked}
	if gr.Principal != "*" {
		g.principal = gr.Principal
	}
	switch {
	case gr.TTLSeconds == 0:
		g.expiry = expiryNever
	case gr.GrantedAt == nil:
		g.expiry = expiryAlways
	default:
		g.expiry = expiryWindow
		g.from = unixNanos(*gr.GrantedAt)
		g.until = satAdd(g.from, satMul(gr.TTLSeconds, int64(time.Second)))
	}
	for _, c := range gr.Conditions {
		nc := nativeCondition{kind: c.Kind}
		switch c.Kind {
		case condBusinessHours:
			loc, err := regoLocation(c.Timezone)
			g.rego = g.rego || err != nil
			nc.loc, nc.start, nc.end = loc, c.startMin, c.endMin
			for _, name := range c.weekdays {
				for day := range nc.days {
					if time.Weekday(day).String() == name {
						nc.days[day] = true
					}
				}
			}
		case condIPRange:
			_, cidr, err := net.ParseCIDR(c.CIDR) // as net.cidr_contains parses it
			g.rego = g.rego || err != nil
			nc.cidr = cidr
			g.hasIP = true
		case kindMFARecent:
			nc.window = satMul(c.WithinSeconds, int64(time.Second))
		default:
			// The Rego's conditions are the constant false: nothing of
			// them is evaluated, so nothing fails.
			g.never, g.conds, g.hasIP, g.rego = true, nil, false, false
			return g
		}
		g.conds = append(g.conds, nc)
	}
	return g
}

// regoLocation loads a time zone as OPA's time.clock and time.weekday do.
func regoLocation(name string) (*time.Location, error) {
	switch name {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		return time.Local, nil
	}
	return time.LoadLocation(name)
}

// nativeEval is one decision's native evaluation.
type nativeEval struct {
	in        Input
	now       int64
	principal string // input.principal
	cands     []candidate
	ipParsed  bool
	ipOK      bool   // net.cidr_contains reads the client address (or there is none)
	ip        net.IP // nil when the request has no client address
	authRead  bool
	auth      []int64
	// rego: the Rego evaluation must decide (it would fail, and how).
	rego bool
}

// evalNative decides the grants natively; decided is false when the Rego
// evaluation must decide instead.
func (s *Set) evalNative(ctx context.Context, in Input, n *nativeGrants) (out *evalOutput, decided bool, err error) {
	// The Rego evaluation converts the action view first: the same
	// conversion (cached per view) fails the same way here.
	if _, err := s.actionValue(in.Action); err != nil {
		return nil, true, fmt.Errorf("input: %w", err)
	}
	if overrunning.Load() > 0 || ctx.Err() != nil || !eventConverts(in.Event) {
		return nil, false, nil
	}
	e := nativeEval{in: in, now: unixNanos(in.Now), principal: requestPrincipal(in.Principals)}
	id := in.ActionID
	if idx := n.exact[id]; idx != nil {
		e.collect(idx)
	}
	if len(n.prefix) > 0 {
		for i := 0; i < len(id); i++ {
			if id[i] == ':' {
				if idx := n.prefix[id[:i+1]]; idx != nil {
					e.collect(idx)
				}
			}
		}
	}
	if n.any != nil && id != "" {
		e.collect(n.any)
	}
	if e.rego {
		return nil, false, nil
	}
	return &evalOutput{Candidates: e.cands}, true, nil
}

func (e *nativeEval) collect(idx *grantsByPrincipal) {
	for _, p := range e.in.Principals {
		for _, g := range idx.named[p] {
			e.add(g, g.principal)
		}
	}
	for _, g := range idx.star {
		e.add(g, e.principal)
	}
}

// add makes g a candidate, once: the Rego's candidates are a set.
func (e *nativeEval) add(g *nativeGrant, principal string) {
	if e.rego || slices.ContainsFunc(e.cands, func(c candidate) bool { return c.Layer == g.layer && c.Grant == g.index }) {
		return
	}
	c := candidate{Policy: g.policy, Layer: g.layer, Grant: g.index, Principal: principal, Revoked: g.revoked}
	switch g.expiry {
	case expiryAlways:
		c.Expired = true
	case expiryWindow:
		c.Expired = e.now < g.from || e.now >= g.until
	}
	if g.rego || g.hasIP && !e.parseIP() {
		e.rego = true // the Rego fails on this grant or address: it says how
		return
	}
	c.Conditions = !g.never && e.conditions(g.conds)
	e.cands = append(e.cands, c)
}

// parseIP reads input.client_ip as net.cidr_contains does; false when it
// would fail on it.
func (e *nativeEval) parseIP() bool {
	if !e.ipParsed {
		e.ipParsed, e.ipOK = true, true
		if e.in.ClientIP.IsValid() {
			e.ip = net.ParseIP(e.in.ClientIP.Unmap().String())
			e.ipOK = e.ip != nil
		}
	}
	return e.ipOK
}

// conditions: every one holds, in order, as the generated conditions rule
// reads them.
func (e *nativeEval) conditions(conds []nativeCondition) bool {
	for i := range conds {
		c := &conds[i]
		var ok bool
		switch c.kind {
		case condBusinessHours:
			t := time.Unix(0, e.now).In(c.loc)
			h, m, _ := t.Clock()
			minute := h*60 + m
			ok = minute >= c.start && minute < c.end && c.days[t.Weekday()]
		case condIPRange:
			ok = e.ip != nil && c.cidr.Contains(e.ip)
		case kindMFARecent:
			ok = e.mfaWithin(c.window)
		}
		if !ok {
			return false
		}
	}
	return true
}

// mfaWithin: some verified auth event at t with t <= now and now-t <=
// window, in exact integers as Rego computes them.
func (e *nativeEval) mfaWithin(window int64) bool {
	if !e.authRead {
		e.authRead, e.auth = true, authEventTimes(e.in.Event)
	}
	for _, t := range e.auth {
		if t <= e.now && window >= 0 && uint64(e.now)-uint64(t) <= uint64(window) {
			return true
		}
	}
	return false
}

// eventConverts reports whether inputValue converts the event without
// error, conservatively: false for anything it would reach through JSON
// (a Go caller's own types, a key of invalid UTF-8), so that the Rego
// evaluation decides those as it always has.
func eventConverts(ev *route.Event) bool {
	for i := range ev.EvidenceRefs {
		f := &ev.EvidenceRefs[i].Freshness
		if !finite(f.MaxAgeHours) || !finite(f.AgeHours) {
			return false
		}
	}
	return argumentConverts(ev.ProposedArguments, 2)
}

func finite(f *float64) bool { return f == nil || !math.IsNaN(*f) && !math.IsInf(*f, 0) }

// argumentConverts mirrors argumentValue's errors.
func argumentConverts(v any, depth int) bool {
	switch v := v.(type) {
	case nil, bool, string:
		return true
	case json.Number:
		_, err := numberFloat(v)
		return err == nil
	case float64:
		return !math.IsNaN(v) && !math.IsInf(v, 0)
	case []any:
		if v == nil {
			return true
		}
		if depth > maxInputDepth {
			return false
		}
		for _, e := range v {
			if !argumentConverts(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		if v == nil {
			return true
		}
		if depth > maxInputDepth {
			return false
		}
		for k, e := range v {
			if !utf8.ValidString(k) || !argumentConverts(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}
