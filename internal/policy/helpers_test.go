package policy

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testtree"
)

// writeDir writes files (relative path -> content) into a fresh directory.
func writeDir(t testing.TB, files map[string]string) string {
	return testtree.Write(t, t.TempDir(), files)
}

// mustLoad loads files as one policy directory and fails the test on error.
//
// Its time budget is a minute: only the budget tests measure the clock, and
// a loaded machine (parallel tests under the race detector) must not turn
// another test's evaluation into policy_budget_exceeded. The step and
// memory budgets stay the defaults, which do not depend on speed.
func mustLoad(t testing.TB, res Resolver, files map[string]string) *Set {
	t.Helper()
	s, err := Load([]string{writeDir(t, files)}, res, WithEvalBudget(time.Minute))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}

// policyMD wraps frontmatter YAML into a POLICY.md.
func policyMD(front string) string { return "---\n" + front + "\n---\n\n## Description\n" }

var t0 = time.Date(2026, 5, 4, 15, 0, 0, 0, time.UTC) // a Monday

func baseEvent() *route.Event {
	return &route.Event{ToolName: "git_commit", ToolCategory: route.Write, AuthorizationState: route.AuthValidated}
}

func input(action string, principals ...string) Input {
	return Input{Event: baseEvent(), Category: route.Write, ActionID: action, Principals: principals, Now: t0, Limiter: NewLimiter()}
}

// outcome evaluates and combines, returning route and blocker codes.
func outcome(t testing.TB, s *Set, in Input) (route.Route, []string, Result) {
	t.Helper()
	res := s.Evaluate(context.Background(), in)
	o := route.Combine(res.Findings)
	return o.Route, o.HardBlockers, res
}

func assertOutcome(t *testing.T, s *Set, in Input, want route.Route, blockers ...string) Result {
	t.Helper()
	got, bl, res := outcome(t, s, in)
	if blockers == nil {
		blockers = []string{}
	}
	if got != want || !slices.Equal(bl, blockers) {
		t.Fatalf("got %s %v, want %s %v (findings %+v)", got, bl, want, blockers, res.Findings)
	}
	return res
}
