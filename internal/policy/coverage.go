package policy

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// RegoCoverage records which rules of the custom modules held: produced a
// value in some evaluation. It listens to the trace events OPA's own
// coverage (the cover package) listens to, but per rule rather than per
// line: cover marks lines, and a rule written on one line
// (`frozen if time.weekday(input.now_ns) == "Sunday"`) would count as
// covered as soon as its expression ran, held or not. Only `gated policy
// test --coverage` turns it on (WithRegoCoverage); a Set without it
// evaluates with no tracer at all.
type RegoCoverage struct {
	mu   sync.Mutex
	held map[ruleAt]bool
}

// ruleAt is where a rule starts in its module: its identity across the
// parsed module and the compiled one the evaluation traces.
type ruleAt struct {
	file     string
	row, col int
}

// NewRegoCoverage is an empty record.
func NewRegoCoverage() *RegoCoverage { return &RegoCoverage{held: map[ruleAt]bool{}} }

// WithRegoCoverage traces every evaluation of the Set into c.
func WithRegoCoverage(c *RegoCoverage) Option { return func(s *Set) { s.cover = c } }

// Enabled implements topdown.QueryTracer.
func (*RegoCoverage) Enabled() bool { return true }

// Config implements topdown.QueryTracer: no variable bindings are needed.
func (*RegoCoverage) Config() topdown.TraceConfig { return topdown.TraceConfig{} }

// TraceEvent implements topdown.QueryTracer. OPA exits a rule once its
// body has held, so the exit is the rule producing a value.
func (c *RegoCoverage) TraceEvent(e topdown.Event) {
	r, ok := e.Node.(*ast.Rule)
	if e.Op != topdown.ExitOp || !ok || r.Location == nil {
		return
	}
	c.mu.Lock()
	c.held[ruleAt{r.Location.File, r.Location.Row, r.Location.Col}] = true
	c.mu.Unlock()
}

// Held reports whether the rule held in some traced evaluation.
func (c *RegoCoverage) Held(r CustomRule) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[ruleAt{r.File, r.Line, r.col}]
}

// CustomRule is one rule (or function, or else branch) of a custom module.
type CustomRule struct {
	File string
	Line int
	// Name is the rule's name as its package path and head read:
	// gated.custom.deploys.findings.
	Name string
	col  int
}

// CustomRules lists the rules of the custom modules, by file and line.
// Default rules are left out: a default is the value when no rule holds,
// not a rule a case can make hold.
func (s *Set) CustomRules() []CustomRule {
	var out []CustomRule
	for _, m := range s.custom {
		pkg := m.Package.Path.String()
		ast.WalkRules(m, func(r *ast.Rule) bool {
			if !r.Default && r.Location != nil {
				name := pkg + "." + r.Head.Ref().String()
				out = append(out, CustomRule{File: r.Location.File, Line: r.Location.Row, Name: name[len("data."):], col: r.Location.Col})
			}
			return false
		})
	}
	slices.SortFunc(out, func(a, b CustomRule) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.col, b.col))
	})
	return out
}

// GrantEntry is one grant of a composed policy, as a coverage report
// lists it; PolicyID and Index are what a decision's Block.Grant names.
type GrantEntry struct {
	PolicyID  string
	File      string
	Index     int
	Principal string // "" for a form gated cannot match
	Actions   []string
}

// Grants lists every grant of the set, in composition order.
func (s *Set) Grants() []GrantEntry {
	var out []GrantEntry
	for _, d := range s.docs {
		for i, g := range d.Grants {
			e := GrantEntry{PolicyID: d.ID, File: d.File, Index: i, Principal: g.Principal}
			for _, a := range g.Actions {
				e.Actions = append(e.Actions, a.Action)
			}
			out = append(out, e)
		}
	}
	return out
}
