package policy

import (
	"context"
	"fmt"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/testwait"

	"github.com/gatedhq/gated/internal/route"
)

// loadBudgeted loads one custom module with the given options; afterEval
// (may be nil) runs in the evaluating goroutine once OPA has returned.
func loadBudgeted(t *testing.T, module string, afterEval func(steps int64), opts ...Option) *Set {
	t.Helper()
	s, err := Load([]string{writeDir(t, map[string]string{"m.rego": module})}, nil, opts...)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	s.afterEval = afterEval
	return s
}

// settled makes a test that can leave an abandoned evaluation wait, when it
// ends, until none is running, so that no other test sees its refusals.
func settled(t *testing.T) {
	t.Cleanup(func() {
		testwait.Until(t, "abandoned evaluations to stop", func() bool { return overrunning.Load() == 0 })
	})
}

// spinModule loops 4·10^12 times without keeping anything: only a budget
// can end it.
const spinModule = `package gated.custom.spin

findings contains {"code": "never", "route": "accept", "blocking": false, "message": ""} if {
	count([1 | some i in numbers.range(1, 2000000); some j in numbers.range(1, 2000000); i == j + 5000000]) > 0
}
`

// A module that loops for ever is stopped by the step budget: OPA asks the
// budget before every expression, the budget says stop once, and OPA asks
// no more — so the steps counted are exactly the budget plus the one that
// ran out, far short of the loop's 4·10^12 iterations.
//
// Not parallel, as every test that runs a runaway module: see
// TestBudgetDefaultRefusesRunaway.
func TestBudgetStopsRunawayEvaluation(t *testing.T) {
	settled(t)
	const maxSteps = 20_000
	var steps atomic.Int64
	s := loadBudgeted(t, spinModule, func(n int64) { steps.Store(n) },
		WithEvalSteps(maxSteps), WithEvalBudget(time.Minute), WithEvalMemory(1<<40))
	res := assertOutcome(t, s, input("", "x"), route.Refuse, route.CodePolicyBudgetExceeded)
	if msg := res.Findings[0].Message; !strings.Contains(msg, fmt.Sprintf("budget of %d steps", maxSteps)) {
		t.Fatalf("message %q does not name the step budget", msg)
	}
	if got := steps.Load(); got != maxSteps+1 {
		t.Fatalf("OPA returned after %d steps, want it stopped at the budget (%d)", got, maxSteps+1)
	}
	if n := overrunning.Load(); n != 0 {
		t.Fatalf("%d evaluation(s) still running after Evaluate returned", n)
	}
	// Numbers.range builds its array one polled element at a time: a huge
	// range is stopped the same way.
	huge := loadBudgeted(t, `package gated.custom.range

findings contains {"code": "never", "route": "accept", "blocking": false, "message": ""} if {
	count(numbers.range(1, 1000000000000)) < 0
}
`, nil, WithEvalSteps(maxSteps), WithEvalBudget(time.Minute), WithEvalMemory(1<<40))
	assertOutcome(t, huge, input("", "x"), route.Refuse, route.CodePolicyBudgetExceeded)
}

// The default budget, with no option: the runaway module refuses with
// policy_budget_exceeded (not the generic policy_evaluation_error).
//
// Not parallel, as every test that can overrun: under a loaded machine OPA
// may take longer than the grace period to stop, and while an abandoned
// evaluation runs every evaluation in the process refuses, other tests'
// too. settled waits for it before the parallel tests start.
func TestBudgetDefaultRefusesRunaway(t *testing.T) {
	settled(t)
	s := loadBudgeted(t, spinModule, nil)
	res := assertOutcome(t, s, input("", "x"), route.Refuse, route.CodePolicyBudgetExceeded)
	if !strings.HasPrefix(res.Findings[0].Message, "policy evaluation stopped:") {
		t.Fatalf("message %q", res.Findings[0].Message)
	}
}

// With an ample step budget the time budget stops the same loop, and OPA
// has returned (not been abandoned) by the time Evaluate does. The budget,
// which is also the grace OPA has to stop, is ample for a loaded machine.
// Not parallel: see TestBudgetDefaultRefusesRunaway.
func TestBudgetStopsOnTime(t *testing.T) {
	settled(t)
	returned := make(chan struct{}, 1)
	s := loadBudgeted(t, spinModule, func(int64) { returned <- struct{}{} },
		WithEvalSteps(1<<62), WithEvalBudget(200*time.Millisecond), WithEvalMemory(1<<40))
	res := assertOutcome(t, s, input("", "x"), route.Refuse, route.CodePolicyBudgetExceeded)
	if !strings.Contains(res.Findings[0].Message, "time budget") {
		t.Fatalf("message %q does not name the time budget", res.Findings[0].Message)
	}
	select {
	case <-returned:
	default:
		t.Fatal("Evaluate returned before OPA did")
	}
}

// doublingModule doubles a string 40 times: 2^40 bytes if nothing stops it.
func doublingModule() string {
	var b strings.Builder
	b.WriteString("package gated.custom.double\n\ns0 := \"0123456789abcdef\"\n")
	for i := range 40 {
		fmt.Fprintf(&b, "s%d := concat(\"\", [s%d, s%d])\n", i+1, i, i)
	}
	b.WriteString("\nfindings contains {\"code\": \"never\", \"route\": \"accept\", \"blocking\": false, \"message\": \"\"} if count(s40) < 0\n")
	return b.String()
}

func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A module that builds a huge value in a few steps is stopped by the memory
// budget, and what the process allocated meanwhile stays within a small
// multiple of it (the last doubling in flight finishes). Not parallel: see
// TestBudgetDefaultRefusesRunaway.
func TestBudgetBoundsMemory(t *testing.T) {
	settled(t)
	const budget = 16 << 20
	s := loadBudgeted(t, doublingModule(), nil, WithEvalMemory(budget), WithEvalBudget(time.Minute), WithEvalSteps(1<<62))
	before := heapAllocs()
	res := assertOutcome(t, s, input("", "x"), route.Refuse, route.CodePolicyBudgetExceeded)
	allocated := heapAllocs() - before
	if !strings.Contains(res.Findings[0].Message, "memory budget") {
		t.Fatalf("message %q does not name the memory budget", res.Findings[0].Message)
	}
	if allocated > 16*budget {
		t.Fatalf("the evaluation allocated %d MiB, budget %d MiB", allocated>>20, budget>>20)
	}
}

// Should OPA not stop once told to (inside one operation it cannot
// interrupt; here the evaluating goroutine is held for real), Evaluate
// still answers, refusing, and every evaluation refuses until that one has
// returned: no stuck evaluations pile up. Not parallel: while it holds its
// evaluation, every evaluation in the process refuses, other tests' too.
func TestBudgetAbandonsEvaluationThatDoesNotStop(t *testing.T) {
	release := make(chan struct{})
	returned := make(chan struct{})
	stuck := loadBudgeted(t, "package gated.custom.stuck\n\nfindings contains {\"code\": \"c\", \"route\": \"accept\", \"blocking\": false, \"message\": \"\"} if true\n",
		func(int64) { <-release; close(returned) }, WithEvalBudget(10*time.Millisecond))
	res := assertOutcome(t, stuck, input("", "x"), route.Refuse, route.CodePolicyBudgetExceeded)
	if !strings.Contains(res.Findings[0].Message, "abandoned") {
		t.Fatalf("message %q", res.Findings[0].Message)
	}
	healthy := mustLoad(t, nil, oneGrant("  - {principal: \"*\", actions: [{action: \"*\"}]}\n"))
	res = assertOutcome(t, healthy, input("a:b", "x"), route.Refuse, route.CodePolicyBudgetExceeded)
	if !strings.Contains(res.Findings[0].Message, "still running") {
		t.Fatalf("message %q", res.Findings[0].Message)
	}
	close(release)
	<-returned
	testwait.Until(t, "the abandoned evaluation to be counted out", func() bool { return overrunning.Load() == 0 })
	assertOutcome(t, healthy, input("a:b", "x"), route.Accept)
}

// A budget run out after OPA has answered changes nothing; a caller whose
// own context ends first gets policy_evaluation_error (not the policy's
// budget), and one whose context has already ended is refused at once.
// Not parallel: the spinning evaluation the caller gives up on may outlive
// the grace period on a loaded machine (see TestBudgetDefaultRefusesRunaway).
func TestBudgetCallerContext(t *testing.T) {
	settled(t)
	s := loadBudgeted(t, spinModule, nil, WithEvalBudget(time.Minute), WithEvalSteps(1<<62), WithEvalMemory(1<<40))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if o := route.Combine(s.Evaluate(ctx, input("", "x")).Findings); o.Route != route.Refuse || o.HardBlockers[0] != route.CodePolicyEvaluationError {
		t.Fatalf("caller deadline: %s %v", o.Route, o.HardBlockers)
	}
	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	if o := route.Combine(s.Evaluate(done, input("", "x")).Findings); o.Route != route.Refuse || o.HardBlockers[0] != route.CodePolicyEvaluationError {
		t.Fatalf("ended context: %s %v", o.Route, o.HardBlockers)
	}
}

// What custom modules return is bounded before OPA's answer is converted
// to Go values: too many findings, overlong messages and values of the
// wrong shape refuse. A finding whose message is a value that shares
// structure (2^40 leaves) is only counted as malformed, never expanded.
func TestCustomFindingsAreBounded(t *testing.T) {
	t.Parallel()
	var dag strings.Builder
	dag.WriteString("a0 := [\"leaf\"]\n")
	for i := range 40 {
		fmt.Fprintf(&dag, "a%d := [a%d, a%d]\n", i+1, i, i)
	}
	cases := map[string]string{
		"too many":     `findings contains {"code": code, "route": "accept", "blocking": false, "message": ""} if { some i in numbers.range(1, 101); code := concat("_", ["c", format_int(i, 10)]) }`,
		"long message": `findings contains {"code": "c", "route": "accept", "blocking": false, "message": concat("", [s | some i in numbers.range(1, 1025); s := "x"])} if true`,
		"long code":    `findings contains {"code": concat("", [s | some i in numbers.range(1, 129); s := "c"]), "route": "accept", "blocking": false, "message": ""} if true`,
		"shared":       dag.String() + `findings contains {"code": "c", "route": "accept", "blocking": false, "message": a40} if true`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			s := mustLoad(t, nil, map[string]string{"m.rego": "package gated.custom.many\n\n" + body + "\n"})
			res := assertOutcome(t, s, input("", "x"), route.Refuse, route.CodePolicyEvaluationError)
			if msg := res.Findings[0].Message; !strings.Contains(msg, "at most") && !strings.Contains(msg, "malformed") {
				t.Fatalf("message %q", msg)
			}
		})
	}
	// At the limits, everything passes.
	s := mustLoad(t, nil, map[string]string{"m.rego": `package gated.custom.edge

msg := concat("", [s | some j in numbers.range(1, 1024); s := "é"])

findings contains {"code": code, "route": "accept", "blocking": false, "message": msg} if {
	some i in numbers.range(1, 100)
	code := concat("_", ["c", format_int(i, 10)])
}
`})
	if res := s.Evaluate(context.Background(), input("", "x")); len(res.Findings) != 100 {
		t.Fatalf("%d findings, want 100 (first %+v)", len(res.Findings), res.Findings[0])
	}
}

// A custom module may not take one of gated's own codes: the approval
// flow and the MCP proxy match approval_pending by code alone, so a module
// saying it would speak for gated. Such a finding fails the evaluation.
func TestCustomFindingsMayNotTakeReservedCodes(t *testing.T) {
	t.Parallel()
	for _, code := range []string{route.CodeApprovalPending, route.CodeKillSwitch, route.CodePolicyRequirementFailed + ":mfa"} {
		s := loadBudgeted(t, fmt.Sprintf("package gated.custom.spoof\n\nfindings contains {\"code\": %q, \"route\": \"ask\", \"blocking\": true, \"message\": \"m\"} if true\n", code), nil)
		res := assertOutcome(t, s, input("", "x"), route.Refuse, route.CodePolicyEvaluationError)
		if !strings.Contains(res.Findings[0].Message, "gated's own code") {
			t.Fatalf("%s: message %q", code, res.Findings[0].Message)
		}
	}
	ok := loadBudgeted(t, "package gated.custom.own\n\nfindings contains {\"code\": \"needs_ticket\", \"route\": \"ask\", \"blocking\": true, \"message\": \"m\"} if true\n", nil)
	assertOutcome(t, ok, input("", "x"), route.Ask, "needs_ticket")
}
