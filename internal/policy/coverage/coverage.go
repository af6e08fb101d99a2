// Package coverage says which parts of the decision sources the cases of
// `gated policy test --coverage` exercised: every grant, argument rule,
// floor and custom Rego rule, exercised or not, as text or JSON, and
// whether that reaches a threshold. docs/policy.md ("Coverage") defines
// "exercised" for each kind.
//
// Grants, argument rules and floors are read off the decisions the cases
// got (gate.Decision names the grant and carries every finding), so the
// decision path does nothing extra for them; custom rules come from the
// policy's RegoCoverage tracer, which only the test runner turns on.
package coverage

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
)

// Kinds of item.
const (
	KindGrant        = "grant"
	KindArgumentRule = "argument_rule"
	KindFloor        = "floor"
	KindCustomRule   = "custom_rule"
)

// kinds orders the report's summary lines.
var kinds = []struct{ kind, name string }{
	{KindGrant, "grants"}, {KindArgumentRule, "argument rules"}, {KindFloor, "floors"}, {KindCustomRule, "custom rules"},
}

// Item is one thing a case can exercise. Which fields are set depends on
// Kind; File is a policy file as loaded (grant, custom_rule) or a catalog
// file relative to its catalog directory (argument_rule, floor).
type Item struct {
	Kind      string   `json:"kind"`
	File      string   `json:"file"`
	Line      int      `json:"line,omitempty"`      // custom_rule
	Policy    string   `json:"policy,omitempty"`    // grant: the policy's id
	Grant     *int     `json:"grant,omitempty"`     // grant: its index in the policy's grants
	Principal string   `json:"principal,omitempty"` // grant
	Actions   []string `json:"actions,omitempty"`   // grant: the action refs as written
	Tool      string   `json:"tool,omitempty"`      // argument_rule, floor: the tool id
	Code      string   `json:"code,omitempty"`      // argument_rule, floor: the blocker code it adds
	Rule      string   `json:"rule,omitempty"`      // custom_rule: package path and rule name
	Exercised bool     `json:"exercised"`
}

// Report is the coverage of one run. Percent is Exercised of Total, rounded
// down to one decimal (100 when there is nothing to exercise).
type Report struct {
	Total     int     `json:"total"`
	Exercised int     `json:"exercised"`
	Percent   float64 `json:"percent"`
	Items     []Item  `json:"items"`
}

// Below reports whether fewer than min percent of the items were
// exercised, comparing exactly rather than the rounded Percent.
func (r Report) Below(min float64) bool {
	return float64(r.Exercised)*100 < min*float64(r.Total)
}

// findingKey is a finding a catalog item adds for one tool.
type findingKey struct {
	view *catalog.View
	code string
}

// Collector gathers what the cases of one run exercised. It is not safe
// for concurrent use: the runner decides one case at a time.
type Collector struct {
	items  []Item
	grants map[policy.GrantRef]int // → index in items
	rules  map[findingKey][]int    // argument rules; a tool may give two rules one code
	floors map[findingKey]int
	rego   *policy.RegoCoverage
	custom []policy.CustomRule // items[len(items)-len(custom):] in order
}

// New lists the items of cat and set (either may be nil); rego is the
// tracer set was loaded with (policy.WithRegoCoverage), nil without one.
func New(cat *catalog.Catalog, set *policy.Set, rego *policy.RegoCoverage) *Collector {
	c := &Collector{grants: map[policy.GrantRef]int{}, rules: map[findingKey][]int{}, floors: map[findingKey]int{}, rego: rego}
	if set != nil {
		for _, g := range set.Grants() {
			c.grants[policy.GrantRef{PolicyID: g.PolicyID, Index: g.Index}] = len(c.items)
			c.items = append(c.items, Item{Kind: KindGrant, File: g.File, Policy: g.PolicyID, Grant: &g.Index, Principal: g.Principal, Actions: g.Actions})
		}
	}
	if cat != nil {
		for _, v := range cat.Views() {
			for _, r := range v.Rules {
				k := findingKey{v, r.Code}
				c.rules[k] = append(c.rules[k], len(c.items))
				c.items = append(c.items, Item{Kind: KindArgumentRule, File: v.Source, Tool: v.ToolID, Code: r.Code})
			}
			for _, code := range v.FloorCodes() {
				c.floors[findingKey{v, code}] = len(c.items)
				c.items = append(c.items, Item{Kind: KindFloor, File: v.Source, Tool: v.ToolID, Code: code})
			}
		}
	}
	if set != nil && rego != nil {
		c.custom = set.CustomRules()
		for _, r := range c.custom {
			c.items = append(c.items, Item{Kind: KindCustomRule, File: r.File, Line: r.Line, Rule: r.Name})
		}
	}
	return c
}

// Observe records what one case's decision exercised: the grant it names
// (the one that allowed, or the candidate that explains the deny), every
// argument rule that fired, and every floor whose finding is at the
// decision's final route, so that it set or raised it.
func (c *Collector) Observe(d *gate.Decision) {
	if d.Policy != nil && d.Policy.Grant != nil {
		if i, ok := c.grants[*d.Policy.Grant]; ok {
			c.items[i].Exercised = true
		}
	}
	if d.Action == nil {
		return
	}
	for _, f := range d.Findings {
		if f.Source != route.SourceCatalog {
			continue
		}
		k := findingKey{d.Action, f.Code}
		for _, i := range c.rules[k] {
			c.items[i].Exercised = true
		}
		if i, ok := c.floors[k]; ok && f.Route == d.Route {
			c.items[i].Exercised = true
		}
	}
}

// Report is the coverage so far.
func (c *Collector) Report() Report {
	r := Report{Items: make([]Item, len(c.items))}
	copy(r.Items, c.items)
	first := len(r.Items) - len(c.custom)
	for i, cr := range c.custom {
		r.Items[first+i].Exercised = c.rego.Held(cr)
	}
	r.Total = len(r.Items)
	for _, it := range r.Items {
		if it.Exercised {
			r.Exercised++
		}
	}
	r.Percent = 100
	if r.Total > 0 {
		r.Percent = math.Floor(float64(r.Exercised)*1000/float64(r.Total)) / 10
	}
	return r
}

// WriteText prints the summary, one line per kind (0 of 0 says there is
// none), then every item no case exercised.
func (r Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "coverage: %d of %d items exercised (%.1f%%)\n", r.Exercised, r.Total, r.Percent)
	for _, k := range kinds {
		n, done := 0, 0
		for _, it := range r.Items {
			if it.Kind == k.kind {
				n++
				if it.Exercised {
					done++
				}
			}
		}
		fmt.Fprintf(w, "  %-15s %d of %d\n", k.name, done, n)
	}
	if r.Exercised == r.Total {
		return
	}
	fmt.Fprintln(w, "not exercised:")
	for _, it := range r.Items {
		if !it.Exercised {
			fmt.Fprintf(w, "  %s\n", it.describe())
		}
	}
}

// describe is an item on one line: kind, where, what.
func (it Item) describe() string {
	switch it.Kind {
	case KindGrant:
		p := it.Principal
		if p == "" {
			p = "(unmatchable principal)"
		}
		return fmt.Sprintf("grant         %s: %s grant %d (%s: %s)", it.File, it.Policy, *it.Grant, p, strings.Join(it.Actions, ", "))
	case KindArgumentRule:
		return fmt.Sprintf("argument rule %s: tool %s rule %s", it.File, it.Tool, it.Code)
	case KindFloor:
		return fmt.Sprintf("floor         %s: tool %s %s", it.File, it.Tool, it.Code)
	}
	return fmt.Sprintf("custom rule   %s:%d: %s", it.File, it.Line, it.Rule)
}
