package policy

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/route"
)

// coverModule has a rule that fires, one on one line that is evaluated
// and never holds, a helper of each kind (one held, one not), a rule
// whose else holds, a function, a default and a rule nothing asks for.
const coverModule = `package gated.custom.cov

findings contains {"code": "looked", "route": "ask", "blocking": true, "message": "m"} if {
	input.action_id == "a:look"
	watched
}

findings contains {"code": "never", "route": "ask", "blocking": true, "message": "m"} if input.action_id == "a:never"

watched if weekend

watched if {
	label(input.action_id) == "look"
	kind == "other"
}

weekend if time.weekday(input.now_ns) == "Sunday"

label(x) := "look" if x == "a:look"

kind := "write" if {
	input.category == "public_read"
} else := "other"

default unused := false

unused if kind == "write"
`

func TestRegoCoverageMarksTheRulesThatHeld(t *testing.T) {
	t.Parallel()
	cov := NewRegoCoverage()
	dir := writeDir(t, map[string]string{"m.rego": coverModule})
	s, err := Load([]string{dir}, nil, WithRegoCoverage(cov), WithEvalBudget(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// t0 is a Monday: weekend is evaluated and does not hold.
	assertOutcome(t, s, input("a:look"), route.Ask, "looked")
	file := filepath.Join(dir, "m.rego")
	var held, notHeld []int
	for _, r := range s.CustomRules() {
		if r.File != file {
			t.Fatalf("rule %+v names another file than %s", r, file)
		}
		if cov.Held(r) {
			held = append(held, r.Line)
		} else {
			notHeld = append(notHeld, r.Line)
		}
	}
	// The default (line 25) is not listed; the one-line rules of lines 8
	// and 10 were evaluated yet did not hold, as did kind's first body
	// (line 21: the category is write), whose else (line 23) did; unused
	// (line 27) was never asked for.
	if want := []int{3, 12, 19, 23}; !slices.Equal(held, want) {
		t.Errorf("held at lines %v, want %v", held, want)
	}
	if want := []int{8, 10, 17, 21, 27}; !slices.Equal(notHeld, want) {
		t.Errorf("not held at lines %v, want %v", notHeld, want)
	}
	names := map[int]string{}
	for _, r := range s.CustomRules() {
		names[r.Line] = r.Name
	}
	if names[3] != "gated.custom.cov.findings" || names[19] != "gated.custom.cov.label" || names[23] != "gated.custom.cov.kind" {
		t.Errorf("names %v", names)
	}
}

// Without WithRegoCoverage no tracer runs: a Set loaded from the same
// module records nothing into another Set's record, and a Set without
// custom modules lists no rules.
func TestRegoCoverageIsPerSet(t *testing.T) {
	t.Parallel()
	cov := NewRegoCoverage()
	dir := writeDir(t, map[string]string{"m.rego": coverModule})
	traced, err := Load([]string{dir}, nil, WithRegoCoverage(cov), WithEvalBudget(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Load([]string{dir}, nil, WithEvalBudget(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	assertOutcome(t, plain, input("a:look"), route.Ask, "looked")
	for _, r := range traced.CustomRules() {
		if cov.Held(r) {
			t.Errorf("rule %+v held though only another set evaluated", r)
		}
	}
	if rs := mustLoad(t, nil, map[string]string{"POLICY.md": policyMD("schema: policy/v1\nid: \"@t/p\"\ndefault: allow")}).CustomRules(); len(rs) != 0 {
		t.Errorf("custom rules %v without a module", rs)
	}
}
