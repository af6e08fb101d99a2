package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	_ "time/tzdata" // business-hours time zones must not depend on the host's zoneinfo

	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/opfile"
)

// Option adjusts a Load.
type Option func(*Set)

// WithEvalBudget sets the time budget of one evaluation (d > 0).
func WithEvalBudget(d time.Duration) Option {
	return func(s *Set) {
		if d > 0 {
			s.budget = d
		}
	}
}

// WithEvalSteps sets the step budget of one evaluation (n > 0).
func WithEvalSteps(n int64) Option {
	return func(s *Set) {
		if n > 0 {
			s.steps = n
		}
	}
}

// WithEvalMemory sets the memory budget of one evaluation (n > 0 bytes).
func WithEvalMemory(n uint64) Option {
	return func(s *Set) {
		if n > 0 {
			s.memory = n
		}
	}
}

// customPackage is the package custom modules must live in (or below).
const customPackage = "data.gated.custom"

// decisionPackage gathers grant candidates and custom findings so one
// prepared query answers both.
const decisionPackage = "gated.decision"

// LoadError lists every problem that stopped a load, and the warnings found
// on the way (so lint can show both).
type LoadError struct {
	Problems []Problem
	Warnings []Problem
}

// ProblemList lists the errors (opfile.Lister).
func (e *LoadError) ProblemList() []Problem { return e.Problems }

func (e *LoadError) Error() string { return opfile.List(e.Problems) }

// Set is one immutable, compiled policy revision. It is safe for concurrent
// use; reloading builds a new Set.
type Set struct {
	revision     string
	origin       *bundle.Origin // nil when loaded from directories
	docs         []*Document
	byID         map[string]*Document
	defaultAllow bool
	requirements []requirement
	limits       []limit
	grantsModule string
	native       *nativeGrants // nil: every evaluation runs the Rego query
	evaluatorWhy string        // why the evaluator in use is the one (Evaluator)
	query        rego.PreparedEvalQuery
	budget       time.Duration     // time budget of one evaluation
	steps        int64             // step budget of one evaluation
	memory       uint64            // memory budget of one evaluation, bytes
	afterEval    func(steps int64) // tests: runs in the evaluating goroutine once OPA returns
	cover        *RegoCoverage     // nil unless `gated policy test --coverage` asked (WithRegoCoverage)
	custom       []*ast.Module     // the custom modules, for CustomRules
	warnings     []Problem
	modules      []Module // the custom modules by file and hash (Modules), for policy diff
	actions      sync.Map // action view pointer → its ast.Value (actionValue)
}

type requirement struct {
	policy    string
	kind      string
	appliesTo []pattern // empty: every action
	window    int64     // ns, mfa-recent
	count     int       // approval-from
}

type limit struct {
	key       string // policy id + limit content: state survives reloads that keep the limit
	appliesTo []pattern
	value     float64
	per       time.Duration
}

var perDurations = map[string]time.Duration{
	"second": time.Second, "minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour,
}

// Revision is the content hash of the loaded files and of the generated
// Rego (which includes how registry refs resolved).
func (s *Set) Revision() string { return s.revision }

// SetOrigin records the bundle the set was composed from. It is for the
// loader, before the set is published: a set is immutable once in use.
func (s *Set) SetOrigin(o *bundle.Origin) { s.origin = o }

// Origin is the bundle the set was composed from, nil when it was loaded
// from directories.
func (s *Set) Origin() *bundle.Origin {
	if s == nil {
		return nil
	}
	return s.origin
}

// Enforced reports whether grants are enforced: false when no POLICY.md was
// loaded.
func (s *Set) Enforced() bool { return s != nil && len(s.docs) > 0 }

// Warnings are the non-fatal problems of the load (default: allow, unknown
// condition kinds, ignored limits, unresolved grant refs...).
func (s *Set) Warnings() []Problem { return slices.Clone(s.warnings) }

// Summary is what GET /v1/policy returns: the revision in use, its
// policies, the warnings a lint would print, and the last failed reload.
type Summary struct {
	Revision        string              `json:"revision"`
	Bundle          *bundle.Origin      `json:"bundle,omitempty"`
	Enforced        bool                `json:"enforced"`
	DefaultAllow    bool                `json:"default_allow"`
	Policies        []PolicySummary     `json:"policies"`
	Warnings        []Problem           `json:"warnings"`
	LastReloadError *opfile.ReloadError `json:"last_reload_error,omitempty"`
}

// PolicySummary counts what one POLICY.md holds.
type PolicySummary struct {
	ID           string `json:"id"`
	File         string `json:"file"`
	Default      string `json:"default"`
	Grants       int    `json:"grants"`
	Requirements int    `json:"requirements"`
	Limits       int    `json:"limits"`
}

// Summary describes the set; lastErr and at are the reloader's last failure.
func (s *Set) Summary(lastErr error, at time.Time) Summary {
	sum := Summary{Revision: s.revision, Bundle: s.origin, Enforced: s.Enforced(), DefaultAllow: s.defaultAllow,
		Policies: make([]PolicySummary, len(s.docs)), Warnings: s.Warnings(),
		LastReloadError: opfile.NewReloadError(lastErr, at, "policy")}
	for i, d := range s.docs {
		sum.Policies[i] = PolicySummary{ID: d.ID, File: d.File, Default: d.Default,
			Grants: len(d.Grants), Requirements: len(d.Requirements), Limits: len(d.Limits)}
	}
	if sum.Warnings == nil {
		sum.Warnings = []Problem{}
	}
	return sum
}

// GrantsRego is the generated Rego module for the grants.
func (s *Set) GrantsRego() string { return s.grantsModule }

type source struct {
	path   string
	data   []byte
	dirIdx int    // which of the directories given it was found in
	rel    string // its path below that directory
}

// Caps on what one load reads, so a policy directory cannot make gated read
// or compile without bound (the catalog has the same kind of caps).
const (
	maxPolicyFileBytes = 1 << 20  // one POLICY.md or module
	maxPolicyFiles     = 10_000   // POLICY.md and modules together
	maxRegoFiles       = 1_000    // custom modules
	maxPolicyBytes     = 32 << 20 // every file together
)

var limits = opfile.Limits{FileBytes: maxPolicyFileBytes, Files: maxPolicyFiles, TotalBytes: maxPolicyBytes, Depth: 32}

func isPolicy(name string) bool { return name == "POLICY.md" || strings.HasSuffix(name, ".POLICY.md") }

func isRego(name string) bool {
	return strings.HasSuffix(name, ".rego") && !strings.HasSuffix(name, "_test.rego")
}

// Load reads every POLICY.md, *.POLICY.md and *.rego (not *_test.rego) under
// dirs (recursively, as opfile.Walker reads: a directory given as a symlink,
// such as a ConfigMap's "..data", is read where it points), validates and
// compiles them, and prepares the query. All problems are returned together
// in a *LoadError.
func Load(dirs []string, res Resolver, opts ...Option) (*Set, error) {
	var errs []Problem
	var policies, modules []source
	w := opfile.Walker{Limits: limits, File: true, Match: func(name string) bool { return isPolicy(name) || isRego(name) }}
	for i, dir := range dirs {
		files, ps, err := w.Walk(dir)
		if err != nil {
			errs = append(errs, Problem{File: dir, Code: "read_failed", Message: err.Error()})
			continue
		}
		errs = append(errs, ps...)
		for _, f := range files {
			if isPolicy(path.Base(f.Rel)) {
				policies = append(policies, source{path: f.Path, data: f.Data, dirIdx: i, rel: f.Rel})
			} else {
				modules = append(modules, source{path: f.Path, data: f.Data, dirIdx: i, rel: f.Rel})
			}
		}
	}
	if len(modules) > maxRegoFiles {
		errs = append(errs, Problem{File: modules[maxRegoFiles].path, Code: "too_many_files", Message: fmt.Sprintf("more than %d custom Rego modules", maxRegoFiles)})
	}
	s := &Set{byID: map[string]*Document{}, budget: DefaultEvalBudget, steps: DefaultEvalSteps, memory: DefaultEvalMemory}
	for _, o := range opts {
		o(s)
	}
	for _, src := range policies {
		doc, perrs, warns := Parse(src.path, src.data)
		errs = append(errs, perrs...)
		s.warnings = append(s.warnings, warns...)
		if doc == nil {
			continue
		}
		if prev, dup := s.byID[doc.ID]; dup {
			errs = append(errs, Problem{File: src.path, Field: "/id", Code: "id_duplicate", Message: fmt.Sprintf("id %q is also used by %s", doc.ID, prev.File)})
			continue
		}
		s.byID[doc.ID] = doc
		s.docs = append(s.docs, doc)
	}
	errs = append(errs, s.compileRules(res)...)
	var gwarns []Problem
	var native *nativeGrants
	s.grantsModule, native, gwarns = generateGrants(s.docs, res)
	s.warnings = append(s.warnings, gwarns...)
	if len(errs) == 0 {
		errs = append(errs, s.prepare(modules)...)
	}
	if len(errs) > 0 {
		return nil, &LoadError{Problems: errs, Warnings: s.warnings}
	}
	s.chooseEvaluator(native)
	s.revision = revision(policies, modules, s.grantsModule)
	for _, m := range modules {
		sum := sha256.Sum256(m.data)
		s.modules = append(s.modules, Module{File: m.rel, SHA256: hex.EncodeToString(sum[:])})
	}
	return s, nil
}

// chooseEvaluator decides, once per revision, whether decisions run the
// native evaluator or the Rego query. Coverage does not matter: it traces
// custom rules only, so `gated policy test --coverage` of POLICY.md alone
// tests the evaluator serve runs.
func (s *Set) chooseEvaluator(native *nativeGrants) {
	if len(s.custom) > 0 {
		s.evaluatorWhy = "custom Rego modules are loaded"
		return
	}
	s.native = native
	s.evaluatorWhy = "POLICY.md grants only: evaluated in Go, equivalent to the Rego `gated policy compile` prints"
}

// Evaluator names how decisions evaluate this set's grants (EvaluatorNative
// or EvaluatorRego) and why.
func (s *Set) Evaluator() (name, why string) {
	if s.native != nil {
		return EvaluatorNative, s.evaluatorWhy
	}
	return EvaluatorRego, s.evaluatorWhy
}

// compileRules resolves requirements and limits. Unlike grants (where an
// unresolved ref only grants less), an unresolved ref here would silently
// drop a restriction, so it is an error.
func (s *Set) compileRules(res Resolver) []Problem {
	var errs []Problem
	patterns := func(d *Document, field string, refs []string) []pattern {
		var ps []pattern
		for i, r := range refs {
			p, ok := resolve(r, res)
			if !ok {
				errs = append(errs, Problem{File: d.File, Field: fmt.Sprintf("%s/%d", field, i), Code: "action_ref_unresolved",
					Message: fmt.Sprintf("action ref %q does not resolve to a catalogued action", r)})
			}
			ps = append(ps, p)
		}
		return ps
	}
	s.defaultAllow = len(s.docs) > 0
	for _, d := range s.docs {
		s.defaultAllow = s.defaultAllow && d.Default == "allow"
		for i, r := range d.Requirements {
			rq := requirement{policy: d.ID, kind: r.Kind, window: satMul(r.WithinSeconds, int64(time.Second)), count: 1}
			rq.appliesTo = patterns(d, fmt.Sprintf("/requirements/%d/applies_to", i), r.AppliesTo)
			if r.Count != nil {
				rq.count = *r.Count
			}
			s.requirements = append(s.requirements, rq)
		}
		for i, l := range d.Limits {
			s.limits = append(s.limits, limit{
				key:       fmt.Sprintf("%s|%v|%s|%s", d.ID, l.Value, l.Per, strings.Join(l.AppliesTo, ",")),
				appliesTo: patterns(d, fmt.Sprintf("/limits/%d/applies_to", i), l.AppliesTo),
				value:     l.Value,
				per:       perDurations[l.Per],
			})
		}
	}
	return errs
}

// prepare parses the custom modules, compiles them with the generated ones
// under restricted capabilities, and prepares the one query used per
// decision.
func (s *Set) prepare(sources []source) []Problem {
	var errs []Problem
	caps := sandboxCapabilities()
	opts := ast.ParserOptions{RegoVersion: ast.RegoV1, Capabilities: caps}
	modules := map[string]*ast.Module{}
	var customPkgs []string
	for _, src := range sources {
		m, err := ast.ParseModuleWithOpts(src.path, string(src.data), opts)
		if err != nil {
			errs = append(errs, regoProblems(src.path, "rego_parse", err)...)
			continue
		}
		pkg := m.Package.Path.String()
		if pkg != customPackage && !strings.HasPrefix(pkg, customPackage+".") {
			p := Problem{File: src.path, Code: "rego_package",
				Message: fmt.Sprintf("custom module package %s must be gated.custom or below", strings.TrimPrefix(pkg, "data."))}
			if loc := m.Package.Location; loc != nil {
				p.Line = loc.Row
			}
			errs = append(errs, p)
			continue
		}
		if bad := checkBuiltins(src.path, m); len(bad) > 0 {
			errs = append(errs, bad...)
			continue
		}
		modules[src.path] = m
		s.custom = append(s.custom, m)
		if !slices.Contains(customPkgs, pkg) {
			customPkgs = append(customPkgs, pkg)
		}
	}
	generated := func(name, src string) *ast.Module {
		if _, clash := modules[name]; clash {
			errs = append(errs, Problem{File: name, Code: "rego_generated", Message: "a custom module's path clashes with a generated module's name"})
			return nil
		}
		m, err := ast.ParseModuleWithOpts(name, src, opts)
		if err != nil {
			// A generator bug, not the operator's: still refuse to load.
			errs = append(errs, regoProblems(name, "rego_generated", err)...)
			return nil
		}
		modules[name] = m
		return m
	}
	if grants := generated("generated:gated/grants.rego", s.grantsModule); grants != nil {
		generated("generated:gated/decision.rego", decisionModule(customPkgs, definesCandidates(grants)))
	}
	if len(errs) > 0 {
		return errs
	}
	compiler := ast.NewCompiler().WithCapabilities(caps)
	if compiler.Compile(modules); compiler.Failed() {
		return regoProblems("", "rego_compile", compiler.Errors)
	}
	q, err := rego.New(
		rego.Query("data."+decisionPackage+".out"),
		rego.Compiler(compiler),
		rego.StrictBuiltinErrors(true), // a failing builtin is an error (refuse), not a silently undefined rule
		rego.GenerateJSON(resultValue),
	).PrepareForEval(context.Background())
	if err != nil {
		return []Problem{{Code: "rego_prepare", Message: err.Error()}}
	}
	s.query = q
	return nil
}

// Bounds on what custom modules may return; past them the evaluation
// fails (refuse). They keep the conversion of OPA's answer to Go values,
// which the budget does not cover, small.
const (
	maxCustomFindings = 100
	maxCodeChars      = 128
	maxMessageChars   = 1024
)

// decisionModule gathers the grant candidates and the findings of each
// custom package into `out`, the one document the query returns. Findings
// of the wrong shape are only counted, never returned: converting a value
// that shares structure would cost its expanded size.
//
// The candidates are the grants module's set itself, not a copy made
// member by member; without a grant rule that set is undefined rather than
// empty, so out names an empty set instead.
func decisionModule(customPkgs []string, grants bool) string {
	var b strings.Builder
	b.WriteString("package " + decisionPackage + "\n\n")
	candidates := "set()"
	if grants {
		candidates = "data." + grantsPackage + ".candidates"
	}
	if len(customPkgs) == 0 {
		fmt.Fprintf(&b, "out := {\"candidates\": %s, \"findings\": [], \"malformed\": 0, \"total\": 0}\n", candidates)
		return b.String()
	}
	for _, p := range customPkgs {
		fmt.Fprintf(&b, "\nraw contains f if some f in %s.findings\n", p)
	}
	fmt.Fprintf(&b, `
well_formed(f) if {
	is_object(f)
	count(f) == 4
	is_string(f.code)
	count(f.code) <= %d
	is_string(f.route)
	is_boolean(f.blocking)
	is_string(f.message)
	count(f.message) <= %d
}

out := {
	"candidates": %s,
	"findings": [f | count(raw) <= %d; some f in raw; well_formed(f)],
	"malformed": count([1 | some f in raw; not well_formed(f)]),
	"total": count(raw),
}
`, maxCodeChars, maxMessageChars, candidates, maxCustomFindings)
	return b.String()
}

// definesCandidates reports whether the generated grants module has a
// `candidates` rule: none when no grant can match anything.
func definesCandidates(grants *ast.Module) bool {
	return slices.ContainsFunc(grants.Rules, func(r *ast.Rule) bool { return r.Head.Ref().String() == "candidates" })
}

// regoProblems flattens OPA's error list into Problems naming file and line.
// Rego has no fields to point at, so the line stands alone.
func regoProblems(file, code string, err error) []Problem {
	list, ok := err.(ast.Errors)
	if !ok {
		return []Problem{{File: file, Code: code, Message: err.Error()}}
	}
	out := make([]Problem, 0, len(list))
	for _, e := range list {
		p := Problem{File: file, Code: code, Message: e.Message}
		if e.Location != nil {
			if e.Location.File != "" {
				p.File = e.Location.File
			}
			p.Line = e.Location.Row
		}
		out = append(out, p)
	}
	return out
}

// revision names the files' content by where each sits below the
// directory it was given in (which one, and its path there), as the
// catalog's revision does, so the same policy has the same revision
// wherever it is mounted or checked out: a replay, a diff or another
// replica judges it the same policy.
func revision(policies, modules []source, generated string) string {
	all := append(slices.Clone(policies), modules...)
	slices.SortFunc(all, func(a, b source) int {
		if a.dirIdx != b.dirIdx {
			return a.dirIdx - b.dirIdx
		}
		return strings.Compare(a.rel, b.rel)
	})
	h := sha256.New()
	for _, s := range all {
		fmt.Fprintf(h, "%d\x00%s\x00%d\x00", s.dirIdx, s.rel, len(s.data))
		h.Write(s.data)
	}
	h.Write([]byte(generated))
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
