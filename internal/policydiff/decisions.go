package policydiff

import (
	"slices"

	"github.com/gatedhq/gated/internal/policy/cases"
	"github.com/gatedhq/gated/internal/route"
)

// decisions decides every test case of either side (new's, then the ones
// only old has: a case deleted with the change still says what the old
// policy meant) on both sides and returns how many were decided and those
// decided differently.
func decisions(old, new Side) (int, []Decision) {
	type key struct{ file, name string }
	seen := map[key]bool{}
	var all []cases.Named
	for _, c := range slices.Concat(new.Cases, old.Cases) {
		k := key{c.File, c.Name}
		if !seen[k] {
			seen[k] = true
			all = append(all, c)
		}
	}
	out := []Decision{}
	for _, c := range all {
		o := decide(old, c)
		n := decide(new, c)
		d, changed := compareOutcomes(o, n)
		if changed {
			out = append(out, Decision{Direction: d, File: c.File, Case: c.Name, Old: o, New: n})
		}
	}
	slices.SortStableFunc(out, func(a, b Decision) int {
		return directionOrder[a.Direction] - directionOrder[b.Direction]
	})
	return len(all), out
}

func decide(s Side, c cases.Named) Outcome {
	r, blockers := s.Decide(c.Event, c.Principals, c.Now)
	b := slices.Clone(blockers)
	slices.Sort(b)
	if b == nil {
		b = []string{}
	}
	return Outcome{Route: r, HardBlockers: slices.Compact(b)}
}

// compareOutcomes orders two outcomes of one case: a less strict route
// widens, a stricter one tightens, and the same route with other hard
// blockers changes.
func compareOutcomes(o, n Outcome) (Direction, bool) {
	or, oerr := route.ParseRoute(o.Route)
	nr, nerr := route.ParseRoute(n.Route)
	switch {
	case oerr != nil || nerr != nil:
		return Changes, o.Route != n.Route || !slices.Equal(o.HardBlockers, n.HardBlockers)
	case nr < or:
		return Widens, true
	case nr > or:
		return Tightens, true
	}
	return Changes, !slices.Equal(o.HardBlockers, n.HardBlockers)
}
