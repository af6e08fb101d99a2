package policydiff

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gatedhq/gated/internal/policy"
)

// policyChanges compares the POLICY.md documents and custom modules.
func policyChanges(old, new Side) []Change {
	oldDocs, newDocs := documents(old.Policy), documents(new.Policy)
	mods := moduleChanges(modules(old.Policy), modules(new.Policy))
	// Without a POLICY.md nothing is enforced: going to or from none, what
	// one side's grants allow is no measure of the other's.
	switch {
	case old.Policy.Enforced() && !new.Policy.Enforced():
		return append([]Change{{Widens, "policy", "grants", fmt.Sprintf("no POLICY.md any more: the %s of %s are no longer enforced", count(len(grants(oldDocs)), "grant"), count(len(oldDocs), "policy"))}}, mods...)
	case !old.Policy.Enforced() && new.Policy.Enforced():
		return append([]Change{{Tightens, "policy", "grants", fmt.Sprintf("POLICY.md enforced where none was: %s of %s", count(len(grants(newDocs)), "grant"), count(len(newDocs), "policy"))}}, mods...)
	}
	var out []Change
	for _, id := range keys(oldDocs, newDocs) {
		o, n := oldDocs[id], newDocs[id]
		switch {
		case o == nil && n.Default == "allow":
			out = append(out, Change{Widens, "policy", id, "added with default: allow"})
		case n == nil && o.Default == "allow":
			out = append(out, Change{Tightens, "policy", id, "removed, and with it its default: allow"})
		case o != nil && n != nil && o.Default != n.Default:
			d := Tightens
			if n.Default == "allow" {
				d = Widens
			}
			out = append(out, Change{d, "policy", id, fmt.Sprintf("default %s → %s", o.Default, n.Default)})
		}
	}
	out = append(out, grantChanges(grants(oldDocs), grants(newDocs))...)
	out = append(out, requirementChanges(requirements(oldDocs), requirements(newDocs))...)
	out = append(out, limitChanges(limits(oldDocs), limits(newDocs))...)
	return append(out, mods...)
}

// count spells n things.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	if strings.HasSuffix(thing, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(thing, "y"))
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func documents(s *policy.Set) map[string]*policy.Document {
	out := map[string]*policy.Document{}
	if s == nil {
		return out
	}
	for _, d := range s.Documents() {
		out[d.ID] = d
	}
	return out
}

// keys are the keys of both maps, sorted.
func keys[V any](a, b map[string]V) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// grant is one (principal, action) entry of a grant.
type grant struct {
	conditions []string
	expiry     string // its validity window spelled; "" when always valid
	window     window
	revoked    bool
}

// window is when a grant is valid, as the compiled policy holds it
// (policy/compile.go): from granted_at for ttl_seconds; always without a
// TTL; never with a TTL but no granted_at. A zero bound is open.
type window struct {
	never       bool
	from, until time.Time
}

// grantWindow is the validity window of g.
func grantWindow(g policy.Grant) window {
	switch {
	case g.TTLSeconds == 0:
		return window{}
	case g.GrantedAt == nil:
		return window{never: true}
	}
	ttl := time.Duration(math.MaxInt64) // a TTL past time.Duration's range ends when time does
	if g.TTLSeconds <= math.MaxInt64/int64(time.Second) {
		ttl = time.Duration(g.TTLSeconds) * time.Second
	}
	return window{from: *g.GrantedAt, until: g.GrantedAt.Add(ttl)}
}

// within reports whether every instant of w is in o.
func (w window) within(o window) bool {
	switch {
	case w.never:
		return true
	case o.never:
		return false
	}
	fromOK := o.from.IsZero() || (!w.from.IsZero() && !w.from.Before(o.from))
	untilOK := o.until.IsZero() || (!w.until.IsZero() && !w.until.After(o.until))
	return fromOK && untilOK
}

func grants(docs map[string]*policy.Document) map[string]grant {
	out := map[string]grant{}
	for id, d := range docs {
		for _, g := range d.Grants {
			principal := g.Principal
			if principal == "" {
				principal = "(a principal form gated cannot match)"
			}
			e := grant{revoked: g.Revoked, window: grantWindow(g)}
			for _, c := range g.Conditions {
				e.conditions = append(e.conditions, condition(c))
			}
			switch {
			case e.window.never:
				e.expiry = fmt.Sprintf("ttl_seconds %d without granted_at: never valid", g.TTLSeconds)
			case !e.window.from.IsZero():
				e.expiry = fmt.Sprintf("valid from %s until %s", e.window.from.UTC().Format(time.RFC3339), e.window.until.UTC().Format(time.RFC3339))
			}
			for _, a := range g.Actions {
				subject := fmt.Sprintf("%s → %s", principal, a.Action)
				if a.Scope != "" {
					subject += " (scope " + a.Scope + ")"
				}
				subject += " in " + id
				// A principal granted the same action twice in one policy
				// keeps both entries apart.
				key := subject
				for n := 2; ; n++ {
					if _, dup := out[key]; !dup {
						break
					}
					key = fmt.Sprintf("%s #%d", subject, n)
				}
				out[key] = e
			}
		}
	}
	return out
}

// condition spells a grant condition in one line.
func condition(c policy.Condition) string {
	parts := []string{c.Kind}
	if c.Timezone != "" {
		parts = append(parts, c.Timezone)
	}
	if c.Start != "" || c.End != "" {
		parts = append(parts, c.Start+"–"+c.End)
	}
	if len(c.Days) > 0 {
		parts = append(parts, strings.Join(c.Days, ","))
	}
	if c.CIDR != "" {
		parts = append(parts, c.CIDR)
	}
	if c.WithinSeconds != 0 {
		parts = append(parts, fmt.Sprintf("within %ds", c.WithinSeconds))
	}
	return strings.Join(parts, " ")
}

func grantChanges(old, new map[string]grant) []Change {
	var out []Change
	add := func(d Direction, subject, format string, args ...any) {
		out = append(out, Change{d, "grant", subject, fmt.Sprintf(format, args...)})
	}
	for _, k := range keys(old, new) {
		o, inOld := old[k]
		n, inNew := new[k]
		switch {
		case !inOld && n.revoked:
			add(Tightens, k, "added, revoked")
			continue
		case !inOld:
			add(Widens, k, "granted%s", qualifiers(n))
			continue
		case !inNew && o.revoked:
			add(Widens, k, "revocation removed")
			continue
		case !inNew:
			add(Tightens, k, "removed")
			continue
		}
		if o.revoked != n.revoked {
			if n.revoked {
				add(Tightens, k, "revoked")
			} else {
				add(Widens, k, "no longer revoked")
			}
		}
		for _, c := range o.conditions {
			if !slices.Contains(n.conditions, c) {
				add(Widens, k, "condition removed: %s", c)
			}
		}
		for _, c := range n.conditions {
			if !slices.Contains(o.conditions, c) {
				add(Tightens, k, "condition added: %s", c)
			}
		}
		if o.expiry != n.expiry {
			what := fmt.Sprintf("%s → %s", orAlways(o.expiry), orAlways(n.expiry))
			if !n.window.within(o.window) && !o.window.within(n.window) {
				what += " (valid at instants it was not, and no longer at others)"
			}
			add(expiryDirection(o, n), k, "%s", what)
		}
	}
	return out
}

// qualifiers says what limits a newly granted entry.
func qualifiers(g grant) string {
	var q []string
	if len(g.conditions) > 0 {
		q = append(q, "when "+strings.Join(g.conditions, " and "))
	}
	if g.expiry != "" {
		q = append(q, g.expiry)
	}
	if len(q) == 0 {
		return ""
	}
	return " (" + strings.Join(q, "; ") + ")"
}

// expiryDirection compares the validity windows: valid at any instant it
// was not widens, though it may also lose others (an earlier start and an
// earlier end); valid at fewer instants tightens.
func expiryDirection(o, n grant) Direction {
	switch {
	case !n.window.within(o.window):
		return Widens
	case !o.window.within(n.window):
		return Tightens
	}
	return Changes // spelled otherwise, valid at the same instants
}

func orAlways(s string) string {
	if s == "" {
		return "always valid"
	}
	return s
}

// requirement is one requirement, keyed by policy, kind and actions.
type requirement struct {
	within int64
	count  int
}

func (r requirement) String() string {
	return fmt.Sprintf("within_seconds %d, count %d", r.within, r.count)
}

// requirements are a side's requirements by key. A policy may hold several
// with one key, and each applies, so every one is kept.
func requirements(docs map[string]*policy.Document) map[string][]requirement {
	out := map[string][]requirement{}
	for id, d := range docs {
		for _, r := range d.Requirements {
			v := requirement{within: r.WithinSeconds}
			if r.Count != nil {
				v.count = *r.Count
			}
			k := fmt.Sprintf("%s on %s in %s", r.Kind, appliesTo(r.AppliesTo), id)
			out[k] = append(out[k], v)
		}
	}
	return out
}

func appliesTo(actions []string) string {
	if len(actions) == 0 {
		return "every action"
	}
	s := slices.Clone(actions)
	slices.Sort(s)
	return strings.Join(s, ", ")
}

func requirementChanges(old, new map[string][]requirement) []Change {
	var out []Change
	add := func(d Direction, subject, format string, args ...any) {
		out = append(out, Change{d, "requirement", subject, fmt.Sprintf(format, args...)})
	}
	for _, k := range keys(old, new) {
		o, n := old[k], new[k]
		switch {
		case len(o) == 0:
			add(Tightens, k, "added")
		case len(n) == 0:
			add(Widens, k, "removed")
		case len(o) == 1 && len(n) == 1:
			if o[0].within != n[0].within {
				add(order(n[0].within > o[0].within), k, "within_seconds %d → %d", o[0].within, n[0].within)
			}
			if o[0].count != n[0].count {
				add(order(n[0].count < o[0].count), k, "count %d → %d", o[0].count, n[0].count)
			}
		default:
			for _, r := range unmatched(o, n) {
				add(Widens, k, "one of %d removed: %s", len(o), r)
			}
			for _, r := range unmatched(n, o) {
				add(Tightens, k, "one more added: %s", r)
			}
		}
	}
	return out
}

// unmatched are the entries of a that b lacks, counted one for one: of
// two equal entries in a and one in b, one is unmatched. Where a key has
// several entries on a side, they are compared whole this way, as each
// applies on its own: one removed widens (it may have been the strictest)
// and one added tightens, without reasoning about which of them binds.
func unmatched[T comparable](a, b []T) []T {
	left := map[T]int{}
	for _, v := range b {
		left[v]++
	}
	var out []T
	for _, v := range a {
		if left[v] > 0 {
			left[v]--
			continue
		}
		out = append(out, v)
	}
	return out
}

// order is Widens when the change widens, else Tightens.
func order(widens bool) Direction {
	if widens {
		return Widens
	}
	return Tightens
}

// limits are a side's limit values by key; every limit of a key counts.
func limits(docs map[string]*policy.Document) map[string][]float64 {
	out := map[string][]float64{}
	for id, d := range docs {
		for _, l := range d.Limits {
			k := fmt.Sprintf("%s per %s on %s in %s", l.Kind, l.Per, appliesTo(l.AppliesTo), id)
			out[k] = append(out[k], l.Value)
		}
	}
	return out
}

func limitChanges(old, new map[string][]float64) []Change {
	var out []Change
	add := func(d Direction, subject, format string, args ...any) {
		out = append(out, Change{d, "limit", subject, fmt.Sprintf(format, args...)})
	}
	for _, k := range keys(old, new) {
		o, n := old[k], new[k]
		switch {
		case len(o) == 0:
			add(Tightens, k, "added: %s", values(n))
		case len(n) == 0:
			add(Widens, k, "removed (was %s)", values(o))
		case len(o) == 1 && len(n) == 1:
			if o[0] != n[0] {
				add(order(n[0] > o[0]), k, "%g → %g", o[0], n[0])
			}
		default:
			for _, v := range unmatched(o, n) {
				add(Widens, k, "one of %d removed: %g", len(o), v)
			}
			for _, v := range unmatched(n, o) {
				add(Tightens, k, "one more added: %g", v)
			}
		}
	}
	return out
}

// values spells a key's limit values.
func values(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprintf("%g", v)
	}
	return strings.Join(s, ", ")
}

// modules are a side's custom Rego modules' digests by file. A policy
// read from several folders may hold two modules at one path, and each
// applies, so every one is kept.
func modules(s *policy.Set) map[string][]string {
	out := map[string][]string{}
	if s == nil {
		return out
	}
	for _, m := range s.Modules() {
		out[m.File] = append(out[m.File], m.SHA256)
	}
	return out
}

// moduleChanges: custom modules only add findings, so one removed widens
// and one added tightens; an edited one may do either, and counts as a
// widening for the exit status (Report.Widens). Several at one path are
// compared whole, one for one (unmatched).
func moduleChanges(old, new map[string][]string) []Change {
	var out []Change
	for _, k := range keys(old, new) {
		o, n := old[k], new[k]
		switch {
		case len(o) == 0:
			out = append(out, Change{Tightens, "module", k, "added"})
		case len(n) == 0:
			out = append(out, Change{Widens, "module", k, "removed"})
		case len(o) == 1 && len(n) == 1:
			if o[0] != n[0] {
				out = append(out, Change{Changes, "module", k, "edited: it may remove a finding, so it counts as a widening; see the decisions below"})
			}
		default:
			for _, h := range unmatched(o, n) {
				out = append(out, Change{Widens, "module", k, fmt.Sprintf("one of %d at this path removed or edited (sha256 %.12s)", len(o), h)})
			}
			for _, h := range unmatched(n, o) {
				out = append(out, Change{Tightens, "module", k, fmt.Sprintf("one more at this path added or edited (sha256 %.12s)", h)})
			}
		}
	}
	return out
}
