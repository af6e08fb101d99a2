package policydiff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gatedhq/gated/internal/catalog"
)

// approvalRank orders the approval floors a tool can have; approval by a
// policy (policy:<ref>) is not on this scale.
var approvalRank = map[string]int{"auto": 0, "on-mutate": 1, "always": 2}

func views(c *catalog.Catalog) map[string]*catalog.View {
	out := map[string]*catalog.View{}
	if c == nil {
		return out
	}
	for _, v := range c.Views() {
		out[v.ToolID] = v
	}
	return out
}

// catalogChanges compares the tools' floors and argument rules. A tool
// added widens and one removed tightens, as for gated's default
// --unknown-tools defer: an uncatalogued tool defers.
func catalogChanges(old, new *catalog.Catalog) []Change {
	// Without a catalog gated applies no floors and knows no tool as
	// unknown: going to or from none is one change, not one per tool.
	switch {
	case old == nil && new != nil:
		return []Change{{Tightens, "catalog", "tools", fmt.Sprintf("a catalog where there was none: the floors of %s apply, and other tools are unknown", count(new.Len(), "tool"))}}
	case old != nil && new == nil:
		return []Change{{Widens, "catalog", "tools", fmt.Sprintf("no catalog any more: the floors of %s no longer apply", count(old.Len(), "tool"))}}
	}
	var out []Change
	oldViews, newViews := views(old), views(new)
	for _, id := range keys(oldViews, newViews) {
		o, n := oldViews[id], newViews[id]
		switch {
		case o == nil:
			out = append(out, Change{Widens, "tool", id, fmt.Sprintf("catalogued (risk_level %d, approval %s): no longer an unknown tool", n.RiskLevel, n.Approval)})
		case n == nil:
			out = append(out, Change{Tightens, "tool", id, "no longer catalogued: an unknown tool"})
		default:
			out = append(out, floorChanges(id, o, n)...)
			out = append(out, ruleChanges(id, o.Rules, n.Rules)...)
		}
	}
	return out
}

func floorChanges(id string, o, n *catalog.View) []Change {
	var out []Change
	add := func(d Direction, format string, args ...any) {
		out = append(out, Change{d, "tool", id, fmt.Sprintf(format, args...)})
	}
	if o.RiskLevel != n.RiskLevel {
		add(order(n.RiskLevel < o.RiskLevel), "risk_level %d → %d", o.RiskLevel, n.RiskLevel)
	}
	if o.Approval != n.Approval {
		or, oOK := approvalRank[o.Approval]
		nr, nOK := approvalRank[n.Approval]
		d := Changes
		if oOK && nOK {
			d = order(nr < or)
		}
		add(d, "approval %s → %s", o.Approval, n.Approval)
	}
	if o.NeverExecute != n.NeverExecute {
		add(order(o.NeverExecute), "never_execute %t → %t", o.NeverExecute, n.NeverExecute)
	}
	if (len(o.Mutates) > 0) != (len(n.Mutates) > 0) {
		add(order(len(n.Mutates) == 0), "mutates [%s] → [%s]", strings.Join(o.Mutates, ", "), strings.Join(n.Mutates, ", "))
	}
	if o.InputSchema != n.InputSchema {
		add(order(o.InputSchema), "input schema validated %t → %t", o.InputSchema, n.InputSchema)
	}
	if oe, ne := o.ApprovalExpiry(), n.ApprovalExpiry(); oe != ne {
		add(order(ne > oe), "approvals stay open %s → %s", oe, ne)
	}
	switch {
	case len(o.Approvers) > 0 && len(n.Approvers) == 0:
		add(Widens, "approvers [%s] → any token with scope approve", strings.Join(o.Approvers, ", "))
	case len(o.Approvers) == 0 && len(n.Approvers) > 0:
		add(Tightens, "approvers: any token with scope approve → [%s]", strings.Join(n.Approvers, ", "))
	default:
		for _, a := range added(o.Approvers, n.Approvers) {
			add(Widens, "approver added: %s", a)
		}
		for _, a := range added(n.Approvers, o.Approvers) {
			add(Tightens, "approver removed: %s", a)
		}
	}
	for _, a := range added(o.Aliases, n.Aliases) {
		add(Changes, "alias added: %s", a)
	}
	for _, a := range added(n.Aliases, o.Aliases) {
		add(Changes, "alias removed: %s", a)
	}
	return out
}

// added are the items of b that a lacks.
func added(a, b []string) []string {
	var out []string
	for _, s := range b {
		if !slices.Contains(a, s) {
			out = append(out, s)
		}
	}
	return out
}

// ruleChanges compares a tool's argument rules by code. Rules only
// tighten: one removed widens, one added tightens; a rule that fires for
// fewer values (patterns removed, or added to a negated rule) or at a
// less strict route widens. Any other edit of its matcher is a change
// gated cannot order. Rules that share a code each apply, so where a side
// has several they are compared whole, one for one (unmatched).
func ruleChanges(tool string, old, new []*catalog.Rule) []Change {
	var out []Change
	byCode := func(rules []*catalog.Rule) map[string][]*catalog.Rule {
		m := map[string][]*catalog.Rule{}
		for _, r := range rules {
			m[r.Code] = append(m[r.Code], r)
		}
		return m
	}
	oldRules, newRules := byCode(old), byCode(new)
	for _, code := range keys(oldRules, newRules) {
		o, n := oldRules[code], newRules[code]
		subject := tool + " " + code
		add := func(d Direction, format string, args ...any) {
			out = append(out, Change{d, "rule", subject, fmt.Sprintf(format, args...)})
		}
		switch {
		case len(o) == 0:
			add(Tightens, "added (%s on %s, %s)", n[0].Kind, n[0].Pointer, n[0].Route)
		case len(n) == 0:
			add(Widens, "removed (was %s on %s, %s)", o[0].Kind, o[0].Pointer, o[0].Route)
		case len(o) == 1 && len(n) == 1:
			out = append(out, ruleEdits(subject, o[0], n[0])...)
		default:
			for _, r := range unmatched(whole(o), whole(n)) {
				add(Widens, "one of %d with this code removed: %s", len(o), r)
			}
			for _, r := range unmatched(whole(n), whole(o)) {
				add(Tightens, "one more with this code added: %s", r)
			}
		}
	}
	return out
}

// ruleEdits compares one rule as old and new have it.
func ruleEdits(subject string, o, n *catalog.Rule) []Change {
	var out []Change
	add := func(d Direction, format string, args ...any) {
		out = append(out, Change{d, "rule", subject, fmt.Sprintf(format, args...)})
	}
	if o.Route != n.Route {
		add(order(n.Route < o.Route), "route %s → %s", o.Route, n.Route)
	}
	if matcher(o) != matcher(n) {
		add(Changes, "matcher edited: see the decisions below")
		return out
	}
	for _, p := range added(n.Patterns, o.Patterns) {
		add(order(!o.Negate), "pattern removed: %s", p)
	}
	for _, p := range added(o.Patterns, n.Patterns) {
		add(order(o.Negate), "pattern added: %s", p)
	}
	return out
}

// whole spells each rule whole, apart from its message: what it matches
// and its route.
func whole(rules []*catalog.Rule) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		c := *r
		c.Message = ""
		b, _ := json.Marshal(c) // a Rule always marshals: GET /v1/catalog shows it
		out[i] = string(b)
	}
	return out
}

// matcher is a rule's matcher apart from its patterns and route.
func matcher(r *catalog.Rule) string {
	c := *r
	c.Patterns, c.Route, c.Message = nil, 0, ""
	b, _ := json.Marshal(c) // a Rule always marshals: GET /v1/catalog shows it
	return string(b)
}
