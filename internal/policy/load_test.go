package policy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testwait"
)

func assertProblems(t *testing.T, err error, codes ...string) *LoadError {
	t.Helper()
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("error %v is not a *LoadError", err)
	}
	for _, c := range codes {
		if !hasProblem(le.Problems, c) {
			t.Fatalf("problems %v lack %s", le.Problems, c)
		}
	}
	return le
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, content, code, field string
	}{
		{"no frontmatter", "# policy\n", "frontmatter_missing", ""},
		{"unterminated", "---\nschema: policy/v1\n", "frontmatter_unterminated", ""},
		{"yaml", policyMD("schema: [policy/v1"), "yaml_syntax", ""},
		{"wrong schema", policyMD("schema: policy/v2\nid: \"@a/b\""), "schema", "/schema"},
		{"unknown field", policyMD("schema: policy/v1\nid: \"@a/b\"\ngrnats: []"), "schema", "/grnats"},
		{"unknown field with / and ~", policyMD("schema: policy/v1\nid: \"@a/b\"\n\"x/y~z\": 1"), "schema", "/x~1y~0z"},
		{"not a mapping", "---\n- schema\n---\n", "frontmatter_not_mapping", ""},
		{"frontmatter too large", policyMD("schema: policy/v1\nid: \"@a/b\"\n# " + strings.Repeat("x", maxPolicyFileBytes)), "frontmatter_too_large", ""},
		{"duplicate key", policyMD("schema: policy/v1\nid: \"@a/b\"\nid: \"@a/c\""), "yaml_syntax", ""},
		{"bad id", policyMD("schema: policy/v1\nid: acme"), "schema", "/id"},
		{"no id", policyMD("schema: policy/v1"), "id_required", "/id"},
		{"grant without actions", policyMD("schema: policy/v1\nid: \"@a/b\"\ngrants: [{principal: x}]"), "schema", "/grants/0/actions"},
		{"bad granted_at", policyMD("schema: policy/v1\nid: \"@a/b\"\ngrants: [{principal: x, actions: [{action: a:b}], granted_at: yesterday}]"), "schema", "/grants/0/granted_at"},
		{"bad wildcard", policyMD("schema: policy/v1\nid: \"@a/b\"\ngrants: [{principal: x, actions: [{action: \"stor*\"}]}]"), "action_ref_invalid", "/grants/0/actions/0/action"},
		{"bad cidr", policyMD("schema: policy/v1\nid: \"@a/b\"\ngrants: [{principal: x, actions: [{action: a:b}], conditions: [{kind: ip-range, cidr: 10.0.0.0/33}]}]"), "condition_invalid", "/grants/0/conditions/0/cidr"},
		{"bad timezone", policyMD("schema: policy/v1\nid: \"@a/b\"\ngrants: [{principal: x, actions: [{action: a:b}], conditions: [{kind: during-business-hours, timezone: Mars/Olympus}]}]"), "condition_invalid", "/grants/0/conditions/0/timezone"},
		{"inverted hours", policyMD("schema: policy/v1\nid: \"@a/b\"\ngrants: [{principal: x, actions: [{action: a:b}], conditions: [{kind: during-business-hours, timezone: UTC, start: \"18:00\", end: \"09:00\"}]}]"), "condition_invalid", "/grants/0/conditions/0/end"},
		{"bad day", policyMD("schema: policy/v1\nid: \"@a/b\"\ngrants: [{principal: x, actions: [{action: a:b}], conditions: [{kind: during-business-hours, timezone: UTC, days: [funday]}]}]"), "condition_invalid", "/grants/0/conditions/0/days/0"},
		{"mfa without window", policyMD("schema: policy/v1\nid: \"@a/b\"\ngrants: [{principal: x, actions: [{action: a:b}], conditions: [{kind: mfa-recent}]}]"), "condition_invalid", "/grants/0/conditions/0/within_seconds"},
		{"mfa requirement without window", policyMD("schema: policy/v1\nid: \"@a/b\"\nrequirements: [{kind: mfa-recent}]"), "requirement_invalid", "/requirements/0/within_seconds"},
		{"approval count 0", policyMD("schema: policy/v1\nid: \"@a/b\"\nrequirements: [{kind: approval-from, count: 0}]"), "requirement_invalid", "/requirements/0/count"},
		{"rate without per", policyMD("schema: policy/v1\nid: \"@a/b\"\nlimits: [{kind: rate-tool-calls, value: 5}]"), "limit_invalid", "/limits/0/per"},
		{"fractional rate", policyMD("schema: policy/v1\nid: \"@a/b\"\nlimits: [{kind: rate-tool-calls, value: 1.5, per: second}]"), "limit_invalid", "/limits/0/value"},
		{"negative limit", policyMD("schema: policy/v1\nid: \"@a/b\"\nlimits: [{kind: rate-tool-calls, value: -1, per: second}]"), "schema", "/limits/0/value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, errs, _ := Parse("p/POLICY.md", []byte(c.content))
			if doc != nil {
				t.Fatalf("parsed a document, want error %s", c.code)
			}
			for _, p := range errs {
				if p.Code == c.code && (c.field == "" || p.Field == c.field) && p.File == "p/POLICY.md" && p.Message != "" {
					return
				}
			}
			t.Fatalf("errors %v lack %s at %q", errs, c.code, c.field)
		})
	}
}

func TestLoadListsEveryProblem(t *testing.T) {
	t.Parallel()
	dir := writeDir(t, map[string]string{
		"a/POLICY.md":         policyMD("schema: policy/v1"),
		"b.POLICY.md":         "nothing",
		"c.POLICY.md":         policyMD("schema: policy/v1\nid: \"@a/dup\""),
		"d/x.POLICY.md":       policyMD("schema: policy/v1\nid: \"@a/dup\""),
		"notes.md":            "ignored",
		"custom/bad.rego":     "package other\nx := 1\n",
		"custom/ok_test.rego": "package whatever\n", // test modules are not loaded
	})
	_, err := Load([]string{dir, dir + "/missing"}, nil)
	le := assertProblems(t, err, "id_required", "frontmatter_missing", "id_duplicate", "read_failed")
	if !strings.Contains(le.Error(), "a/POLICY.md: /id: id_required") {
		t.Fatalf("error text %q does not name file, field and code", le.Error())
	}
}

func TestDefaultAllowWarns(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, map[string]string{"POLICY.md": policyMD("schema: policy/v1\nid: \"@a/b\"\ndefault: allow")})
	if !hasProblem(s.Warnings(), "default_allow") {
		t.Fatalf("warnings %v lack default_allow", s.Warnings())
	}
}

func TestRevision(t *testing.T) {
	t.Parallel()
	files := oneGrant("  - {principal: x, actions: [{action: a:b}]}\n")
	a, b := mustLoad(t, nil, files), mustLoad(t, nil, files)
	if !strings.HasPrefix(a.Revision(), "sha256:") || len(a.Revision()) != len("sha256:")+64 {
		t.Fatalf("revision %q", a.Revision())
	}
	// The same files in two directories are the same policy: a replay, a
	// diff or another replica mounting it elsewhere must judge it so.
	if a.Revision() != b.Revision() {
		t.Fatal("the same files in another directory gave another revision")
	}
	renamed := map[string]string{}
	for name, data := range files {
		renamed["sub/"+name] = data
	}
	if mustLoad(t, nil, renamed).Revision() == a.Revision() {
		t.Fatal("a file at another path below the directory gave the same revision")
	}
	res := fakeResolver{"@x/y": "a:c"}
	dir := writeDir(t, oneGrant("  - {principal: x, actions: [{action: \"@x/y\"}]}\n"))
	r1, _ := Load([]string{dir}, nil)
	r2, _ := Load([]string{dir}, res)
	if r1.Revision() == r2.Revision() {
		t.Fatal("a different ref resolution must change the revision")
	}
}

func TestSandboxRejectsBuiltins(t *testing.T) {
	t.Parallel()
	for builtin, call := range map[string]string{
		"http.send":          `http.send({"method": "GET", "url": "http://example.com"})`,
		"net.lookup_ip_addr": `net.lookup_ip_addr("example.com")`,
		"opa.runtime":        `opa.runtime()`,
		"time.now_ns":        `time.now_ns()`,
	} {
		t.Run(builtin, func(t *testing.T) {
			mod := "package gated.custom.bad\n\nx := " + call + "\n"
			_, err := Load([]string{writeDir(t, map[string]string{"bad.rego": mod})}, nil)
			le := assertProblems(t, err)
			if !strings.Contains(le.Error(), builtin) || !strings.Contains(le.Error(), "bad.rego") {
				t.Fatalf("error %q does not name %s and the file", le.Error(), builtin)
			}
		})
	}
}

func TestCustomModulePackage(t *testing.T) {
	t.Parallel()
	_, err := Load([]string{writeDir(t, map[string]string{"x.rego": "package gated.grants\n\ncandidates contains {\"grant\": 0} if true\n"})}, nil)
	// Rego has no fields: the problem names the line instead.
	if le := assertProblems(t, err, "rego_package"); le.Problems[0].Line != 1 || le.Problems[0].Field != "" {
		t.Fatalf("problem %+v, want line 1 and no field", le.Problems[0])
	}
	_, err = Load([]string{writeDir(t, map[string]string{"x.rego": "package gated.customer\n"})}, nil)
	assertProblems(t, err, "rego_package")
	_, err = Load([]string{writeDir(t, map[string]string{"x.rego": "package gated.custom\n\nfindings contains x if {\n"})}, nil)
	assertProblems(t, err, "rego_parse")
}

const customModule = `package gated.custom.deploys

import rego.v1

findings contains {"code": "custom_no_friday_push", "route": "defer", "blocking": true, "message": "no pushes on Friday"} if {
	input.action_id == "storage:push"
	time.weekday(input.now_ns) == "Friday"
}

findings contains {"code": "custom_note", "route": "accept", "blocking": false, "message": "seen"} if {
	input.category == "write"
	input.action.risk_level >= 1
}
`

func TestCustomFindingsOnlyTighten(t *testing.T) {
	t.Parallel()
	files := oneGrant("  - {principal: \"*\", actions: [{action: \"storage:push\"}]}\n")
	files["rules/deploys.rego"] = customModule
	s := mustLoad(t, nil, files)
	friday := input("storage:push", "x")
	friday.Now = time.Date(2026, 5, 8, 12, 0, 0, 0, time.UTC)
	friday.Action = map[string]any{"id": "storage:push", "risk_level": 2}
	res := assertOutcome(t, s, friday, route.Defer, "custom_no_friday_push")
	if len(res.Findings) != 2 || res.Findings[0].Source != route.SourcePolicy {
		t.Fatalf("findings %+v, want both custom findings from source policy", res.Findings)
	}
	assertOutcome(t, s, input("storage:push", "x"), route.Accept)
	// An accept finding cannot lift a refuse.
	assertOutcome(t, s, input("storage:read", "x"), route.Refuse, route.CodePolicyNoGrant)

	// Custom modules work without any POLICY.md too.
	only := mustLoad(t, nil, map[string]string{"deploys.rego": customModule})
	assertOutcome(t, only, friday, route.Defer, "custom_no_friday_push")
}

func TestMalformedCustomFindingRefuses(t *testing.T) {
	t.Parallel()
	for name, head := range map[string]string{
		"bad route":     `{"code": "c", "route": "maybe", "blocking": true, "message": "m"}`,
		"no blocking":   `{"code": "c", "route": "ask", "message": "m"}`,
		"extra field":   `{"code": "c", "route": "ask", "blocking": true, "message": "m", "x": 1}`,
		"not an object": `"oops"`,
		"argument leak": `{"code": "c", "route": "maybe", "blocking": true, "message": input.event.proposed_arguments.card}`,
	} {
		t.Run(name, func(t *testing.T) {
			s := mustLoad(t, nil, map[string]string{"m.rego": "package gated.custom\n\nfindings contains " + head + " if true\n"})
			in := input("", "x")
			in.Event.ProposedArguments = map[string]any{"card": "4111 1111 1111 1111"}
			_, _, res := outcome(t, s, in)
			assertOutcome(t, s, in, route.Refuse, route.CodePolicyEvaluationError)
			if strings.Contains(res.Findings[0].Message, "4111") {
				t.Fatalf("message %q leaks an argument value", res.Findings[0].Message)
			}
		})
	}
}

func TestCustomMessageWithSecretIsWithheld(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, map[string]string{"m.rego": `package gated.custom

findings contains {"code": "c", "route": "ask", "blocking": false, "message": concat(" ", ["saw", input.event.proposed_arguments.key])} if true
`})
	in := input("", "x")
	in.Event.ProposedArguments = map[string]any{"key": "sk-abcdefghijklmnopqrstuv"}
	_, _, res := outcome(t, s, in)
	if len(res.Findings) != 1 || strings.Contains(res.Findings[0].Message, "sk-") {
		t.Fatalf("findings %+v", res.Findings)
	}
}

const slowModule = `package gated.custom

findings contains {"code": "never", "route": "accept", "blocking": false, "message": ""} if {
	count([x | some i in numbers.range(1, 4000); some j in numbers.range(1, 4000); x := i * j]) < 0
}
`

// Not parallel: its overrun would refuse the evaluations of tests running
// beside it.
func TestEvaluationErrorsRefuse(t *testing.T) {
	slow := mustLoad(t, nil, map[string]string{"slow.rego": slowModule})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res := slow.Evaluate(ctx, input("", "x"))
	if o := route.Combine(res.Findings); o.Route != route.Refuse || o.HardBlockers[0] != route.CodePolicyEvaluationError {
		t.Fatalf("slow module under a caller deadline: %+v", res.Findings)
	}
	strict := mustLoad(t, nil, map[string]string{"div.rego": `package gated.custom

findings contains {"code": "c", "route": "accept", "blocking": false, "message": ""} if {
	1 / count(input.principals) > 0
}
`})
	assertOutcome(t, strict, input(""), route.Refuse, route.CodePolicyEvaluationError) // division by zero is an error, not "undefined"

	enforced := mustLoad(t, nil, oneGrant("  - {principal: \"*\", actions: [{action: \"*\"}]}\n"))
	in := input("a:b")
	in.Event = nil
	res = assertOutcome(t, enforced, in, route.Refuse, route.CodePolicyEvaluationError)
	if res.Block == nil || res.Block.Reason != ReasonEvaluationError || res.Block.Decision != "deny" {
		t.Fatalf("block %+v", res.Block)
	}
	var nilSet *Set
	assertOutcome(t, nilSet, input("a:b"), route.Refuse, route.CodePolicyEvaluationError)

	// Last: an overrun makes every evaluation in the process refuse until it
	// stops, so the test waits for that before the parallel tests start.
	budgeted, err := Load([]string{writeDir(t, map[string]string{"slow.rego": slowModule})}, nil, WithEvalBudget(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	res = assertOutcome(t, budgeted, input("", "x"), route.Refuse, route.CodePolicyBudgetExceeded)
	if !strings.Contains(res.Findings[0].Message, "budget") {
		t.Fatalf("message %q does not name the budget", res.Findings[0].Message)
	}
	testwait.Until(t, "the overrunning evaluation to stop", func() bool { return overrunning.Load() == 0 })
}

func TestCustomModuleCannotShadowGenerated(t *testing.T) {
	t.Chdir(writeDir(t, map[string]string{"generated:gated/grants.rego": "package gated.custom\n"}))
	_, err := Load([]string{"generated:gated"}, nil)
	assertProblems(t, err, "rego_generated")
}

// A ConfigMap volume: the files live in ..<timestamp>/, ..data links to it,
// and the visible names link through ..data. Each policy loads once.
func TestConfigMapLayoutLoadsOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := filepath.Join(dir, "..2026_11_20_12_00_00.123")
	if err := os.Mkdir(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := policyMD("schema: policy/v1\nid: \"@acme/support\"\ngrants:\n  - {principal: \"bot://a\", actions: [{action: \"storage:read\"}]}")
	if err := os.WriteFile(filepath.Join(ts, "support.POLICY.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(ts), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..data", "support.POLICY.md"), filepath.Join(dir, "support.POLICY.md")); err != nil {
		t.Fatal(err)
	}
	s, err := Load([]string{dir}, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !s.Enforced() {
		t.Fatal("the policy was not loaded")
	}
}
