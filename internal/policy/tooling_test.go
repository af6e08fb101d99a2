package policy

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

// lintDir loads dir without a catalog and lints the result into w.
func lintDir(w io.Writer, dir string) bool {
	s, err := Load([]string{dir}, nil)
	return Lint(s, err, w)
}

// compileDir loads dir, resolving refs with res, and compiles it into w.
func compileDir(w io.Writer, dir string, res Resolver) error {
	s, err := Load([]string{dir}, res)
	return Compile(s, err, w)
}

func TestLint(t *testing.T) {
	t.Parallel()
	good := writeDir(t, map[string]string{"POLICY.md": policyMD("schema: policy/v1\nid: \"@a/b\"\ndefault: allow\ngrants:\n  - {principal: x, actions: [{action: a:b}], conditions: [{kind: geo-fence}]}\n")})
	var out bytes.Buffer
	if !lintDir(&out, good) {
		t.Fatalf("lint failed on warnings only:\n%s", out.String())
	}
	for _, want := range []string{"warning:", "default_allow", "condition_unknown", "evaluator: native (", "0 error(s), 2 warning(s)"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("lint output lacks %q:\n%s", want, out.String())
		}
	}

	bad := writeDir(t, map[string]string{
		"POLICY.md": policyMD("schema: policy/v1\ndefault: allow\n"),
		"x.rego":    "package gated.custom\n\nx := http.send({})\n",
	})
	out.Reset()
	if lintDir(&out, bad) {
		t.Fatalf("lint passed with errors:\n%s", out.String())
	}
	for _, want := range []string{"error: ", "id_required", "warning: ", "default_allow"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("lint output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "evaluator:") {
		t.Fatalf("lint names an evaluator for a policy that does not load:\n%s", out.String())
	}

	custom := writeDir(t, map[string]string{
		"POLICY.md": policyMD("schema: policy/v1\nid: \"@a/b\"\n"),
		"x.rego":    "package gated.custom\n\nfindings contains {\"code\": \"x\", \"route\": \"accept\", \"blocking\": false, \"message\": \"\"} if false\n",
	})
	out.Reset()
	if !lintDir(&out, custom) || !strings.Contains(out.String(), "evaluator: rego (custom Rego modules are loaded)") {
		t.Fatalf("lint with a custom module:\n%s", out.String())
	}
}

func TestCompilePrintsParseableRego(t *testing.T) {
	t.Parallel()
	dir := writeDir(t, oneGrant("  - {principal: \"operator://bob\", actions: [{action: storage:commit}, {action: \"@x/y\"}], conditions: [{kind: ip-range, cidr: 10.0.0.0/8}]}\n"))
	var out bytes.Buffer
	if err := compileDir(&out, dir, fakeResolver{"@x/y": "storage:push"}); err != nil {
		t.Fatal(err)
	}
	m, err := ast.ParseModuleWithOpts("grants.rego", out.String(), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatalf("compiled output does not parse: %v", err)
	}
	if m.Package.Path.String() != "data.gated.grants" || !strings.Contains(out.String(), `input.action_id == "storage:push"`) {
		t.Fatalf("unexpected output:\n%s", out.String())
	}
	var le *LoadError
	if err := compileDir(&out, writeDir(t, map[string]string{"POLICY.md": "x"}), nil); !errors.As(err, &le) {
		t.Fatalf("Compile of a broken policy: %v", err)
	}
}
