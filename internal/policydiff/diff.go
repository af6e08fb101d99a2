// Package policydiff compares two revisions of gated's decision sources —
// a catalog and a policy each — for review: what changed in grants,
// requirements, limits, custom modules, tool floors and argument rules
// (the structural diff), and which decisions change on the policy's own
// test cases (the decision diff). Every change has a direction: it widens
// (lets more through), tightens, or changes in a way gated cannot order.
// `gated policy diff` loads the two sides and prints a Report, widenings
// first; docs/policy.md is the operator's view.
package policydiff

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/policy/cases"
)

// Direction is which way a change moves what gated lets through.
type Direction string

// The directions, in the order a review reads them.
const (
	Widens   Direction = "widens"
	Tightens Direction = "tightens"
	Changes  Direction = "changes" // neither: a change gated cannot order
)

var directionOrder = map[Direction]int{Widens: 0, Tightens: 1, Changes: 2}

// Side is one revision of the sources: what was loaded, and how it decides.
type Side struct {
	// Label names the side in the report: a path, or REV (commit).
	Label   string
	Catalog *catalog.Catalog // nil without a catalog
	Policy  *policy.Set      // nil without a policy
	// Cases are the side's decision test cases.
	Cases []cases.Named
	// Decide decides one case against this side's catalog and policy
	// through the real gate.
	Decide cases.Decider
}

// Change is one structural difference between the sides.
type Change struct {
	Direction Direction `json:"direction"`
	// Area is what changed: policy, grant, requirement, limit, module,
	// tool or rule.
	Area string `json:"area"`
	// Subject names it: a grant's principal and action, a tool's id.
	Subject string `json:"subject"`
	// What says what happened to it, as a short phrase.
	What string `json:"what"`
}

// Outcome is a decision's route and hard blockers.
type Outcome struct {
	Route        string   `json:"route"`
	HardBlockers []string `json:"hard_blockers"`
}

// Decision is a test case decided differently by the two sides.
type Decision struct {
	Direction Direction `json:"direction"`
	File      string    `json:"file"`
	Case      string    `json:"case"`
	Old       Outcome   `json:"old"`
	New       Outcome   `json:"new"`
}

// Replay is what the decisions recorded in the audit log become under the
// new side (`--replay`): gated replay's counts, and its report as it
// renders it.
type Replay struct {
	Decisions int             `json:"-"` // replayed
	Changed   int             `json:"-"`
	Widened   int             `json:"-"`
	Markdown  string          `json:"-"` // its section of the markdown report
	Text      string          `json:"-"` // its section of the text report
	JSON      json.RawMessage `json:"report"`
}

// Report is the whole comparison.
type Report struct {
	Old       string     `json:"old"`
	New       string     `json:"new"`
	Changes   []Change   `json:"changes"`
	Cases     int        `json:"cases"` // test cases decided on both sides
	Decisions []Decision `json:"decisions"`
	Replay    *Replay    `json:"replay,omitempty"`
}

// Compare diffs two sides: the structural changes from old to new, then
// every test case of either side (new's first, then those only old has)
// decided by both.
func Compare(old, new Side) Report {
	r := Report{Old: old.Label, New: new.Label, Changes: []Change{}, Decisions: []Decision{}}
	r.Changes = append(r.Changes, policyChanges(old, new)...)
	r.Changes = append(r.Changes, catalogChanges(old.Catalog, new.Catalog)...)
	slices.SortStableFunc(r.Changes, func(a, b Change) int {
		return cmp.Compare(directionOrder[a.Direction], directionOrder[b.Direction])
	})
	r.Cases, r.Decisions = decisions(old, new)
	return r
}

// Widens reports whether anything in the report lets more through: a
// structural widening, a test case decided less strictly, or recorded
// traffic that replays less strictly. An edited custom module counts too:
// gated cannot order the edit, and a module only adds findings, so the
// edit may remove one that no test case exercises.
func (r Report) Widens() bool {
	return r.count(Widens) > 0 || (r.Replay != nil && r.Replay.Widened > 0) || r.moduleEdited()
}

// moduleEdited reports whether a custom module is edited on both sides.
func (r Report) moduleEdited() bool {
	return slices.ContainsFunc(r.Changes, func(c Change) bool { return c.Area == "module" && c.Direction == Changes })
}

// count is how many structural changes and decisions go in direction d.
func (r Report) count(d Direction) int {
	n := 0
	for _, c := range r.Changes {
		if c.Direction == d {
			n++
		}
	}
	for _, c := range r.Decisions {
		if c.Direction == d {
			n++
		}
	}
	return n
}
