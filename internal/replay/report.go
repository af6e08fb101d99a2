package replay

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/gatedhq/gated/internal/route"
)

// Report is what a replay found. Routes order accept < ask < defer <
// refuse: a change to a less strict route widens, to a stricter one
// narrows.
type Report struct {
	Window Window `json:"window"`
	// CatalogRevision and PolicyRevision are those replayed with (of the
	// first decision replayed; empty when none was, or without one).
	CatalogRevision string `json:"catalog_revision"`
	PolicyRevision  string `json:"policy_revision"`
	Replayed        int    `json:"replayed"`
	// Sealed counts the decisions replayed from their sealed event; Kept
	// those whose recorded route stands: the contract refused an event that
	// was no event (and it was not sealed), or, SameRevisions of them, the
	// record was decided with the very catalog and policy revisions replay
	// decides with.
	Sealed        int `json:"sealed"`
	Kept          int `json:"kept"`
	SameRevisions int `json:"same_revisions"`
	Changed       int `json:"changed"`
	Widened       int `json:"widened"`
	WidenedUnseen int `json:"widened_unseen"` // of Widened, those marked Unseen
	Narrowed      int `json:"narrowed"`
	// Routes counts every (recorded → new) pair met, unchanged ones too.
	Routes      []Transition `json:"routes"`
	ByTool      []Group      `json:"by_tool"`
	ByPrincipal []Group      `json:"by_principal"`
	// Changes are the decisions whose route changed, oldest first.
	Changes []Change `json:"changes"`
	// UnseenCounts counts the changes marked with each Unseen.
	UnseenCounts map[Unseen]int `json:"unseen_counts"`

	routes      map[[2]route.Route]int
	tools       map[string]*Group
	principals  map[string]*Group
	revisionSet bool
}

// Transition is how many decisions went from one route to another.
type Transition struct {
	Recorded route.Route `json:"recorded"`
	New      route.Route `json:"new"`
	Count    int         `json:"count"`
}

// Group counts the decisions of one tool or principal.
type Group struct {
	Name     string `json:"name"`
	Replayed int    `json:"replayed"`
	Changed  int    `json:"changed"`
	Widened  int    `json:"widened"`
	Narrowed int    `json:"narrowed"`
}

// NoPrincipal groups the decisions recorded without a principal.
const NoPrincipal = "(none)"

// Change is one decision whose route changed.
type Change struct {
	DecisionID       string      `json:"decision_id"`
	DecidedAt        time.Time   `json:"decided_at"`
	ToolName         string      `json:"tool_name"`
	Principals       []string    `json:"principals"`
	Recorded         route.Route `json:"recorded"`
	New              route.Route `json:"new"`
	Widened          bool        `json:"widened"`
	RecordedBlockers []string    `json:"recorded_blockers"`
	NewBlockers      []string    `json:"new_blockers"`
	Sealed           bool        `json:"sealed"`
	// Unseen is what the change may rest on that replay could not see;
	// empty when replay saw everything the decision reads.
	Unseen []Unseen `json:"unseen"`
}

func newReport(w Window) *Report {
	return &Report{Window: w, Routes: []Transition{}, ByTool: []Group{}, ByPrincipal: []Group{}, Changes: []Change{},
		UnseenCounts: map[Unseen]int{}, routes: map[[2]route.Route]int{}, tools: map[string]*Group{}, principals: map[string]*Group{}}
}

func (r *Report) add(o outcome) {
	r.Replayed++
	if o.sealed {
		r.Sealed++
	}
	switch o.kept {
	case keptInvalid:
		r.Kept++
	case keptSameRevisions:
		r.Kept++
		r.SameRevisions++
	}
	if o.kept != keptInvalid && !r.revisionSet {
		r.CatalogRevision, r.PolicyRevision, r.revisionSet = o.revs.Catalog, o.revs.Policy, true
	}
	r.routes[[2]route.Route{o.recorded, o.now}]++
	changed, widened := o.now != o.recorded, o.now < o.recorded
	count := func(m map[string]*Group, name string) {
		g := m[name]
		if g == nil {
			g = &Group{Name: name}
			m[name] = g
		}
		g.Replayed++
		if changed {
			g.Changed++
			if widened {
				g.Widened++
			} else {
				g.Narrowed++
			}
		}
	}
	count(r.tools, o.rec.ToolName)
	principals := o.rec.Principals
	if len(principals) == 0 {
		principals = []string{NoPrincipal}
	}
	for _, p := range principals {
		count(r.principals, p)
	}
	if !changed {
		return
	}
	r.Changed++
	if widened {
		r.Widened++
		if len(o.unseen) > 0 {
			r.WidenedUnseen++
		}
	} else {
		r.Narrowed++
	}
	for _, u := range o.unseen {
		r.UnseenCounts[u]++
	}
	r.Changes = append(r.Changes, Change{
		DecisionID: o.rec.DecisionID, DecidedAt: o.rec.DecidedAt, ToolName: o.rec.ToolName,
		Principals: nonNil(o.rec.Principals), Recorded: o.recorded, New: o.now, Widened: widened,
		RecordedBlockers: nonNil(o.rec.HardBlockers), NewBlockers: nonNil(o.blockers), Sealed: o.sealed,
		Unseen: nonNil(o.unseen),
	})
}

// finish orders what add gathered: transitions by route, groups by most
// changed, changes oldest first.
func (r *Report) finish() {
	for k, n := range r.routes {
		r.Routes = append(r.Routes, Transition{Recorded: k[0], New: k[1], Count: n})
	}
	slices.SortFunc(r.Routes, func(a, b Transition) int {
		return cmp.Or(cmp.Compare(a.Recorded, b.Recorded), cmp.Compare(a.New, b.New))
	})
	r.ByTool, r.ByPrincipal = groups(r.tools), groups(r.principals)
	slices.SortFunc(r.Changes, func(a, b Change) int {
		return cmp.Or(a.DecidedAt.Compare(b.DecidedAt), strings.Compare(a.DecisionID, b.DecisionID))
	})
}

func groups(m map[string]*Group) []Group {
	out := make([]Group, 0, len(m))
	for _, g := range m {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b Group) int {
		return cmp.Or(cmp.Compare(b.Widened, a.Widened), cmp.Compare(b.Changed, a.Changed), strings.Compare(a.Name, b.Name))
	})
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
