package policy

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/gatedhq/gated/internal/route"
)

func TestOutputReadsDecision(t *testing.T) {
	t.Parallel()
	const valid = `{"candidates": {
		{"policy": "@a/b", "layer": 1, "grant": 2, "principal": "operator://ci", "revoked": false, "expired": true, "conditions": true},
		{"policy": "@a/c", "layer": 0, "grant": 0, "principal": "*", "revoked": true, "expired": false, "conditions": false}},
	"findings": [{"code": "c", "route": "defer", "blocking": true, "message": "m"}], "malformed": 1, "total": 2}`
	out, err := output(ast.MustParseTerm(valid).Value)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out.Candidates, func(a, b candidate) int { return strings.Compare(a.Policy, b.Policy) })
	want := &evalOutput{
		Candidates: []candidate{
			{Policy: "@a/b", Layer: 1, Grant: 2, Principal: "operator://ci", Expired: true, Conditions: true},
			{Policy: "@a/c", Principal: "*", Revoked: true},
		},
		Findings:  []map[string]any{{"code": "c", "route": "defer", "blocking": true, "message": "m"}},
		Malformed: 1, Total: 2,
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("got %+v, want %+v", out, want)
	}

	// Anything but what the decision module gives is an error (a refusal).
	for _, bad := range []string{
		`[]`,
		`{"findings": [], "malformed": 0, "total": 0}`,
		`{"candidates": [], "findings": [], "malformed": 0, "total": 0}`,
		`{"candidates": set(), "findings": [1], "malformed": 0, "total": 0}`,
		`{"candidates": set(), "findings": [], "malformed": 0.5, "total": 0}`,
		`{"candidates": set(), "findings": [], "malformed": 0}`,
		`{"candidates": {1}, "findings": [], "malformed": 0, "total": 0}`,
		`{"candidates": {{"policy": "@a/b", "layer": 0, "principal": "*", "revoked": false, "expired": false, "conditions": true}}, "findings": [], "malformed": 0, "total": 0}`,
		`{"candidates": {{"policy": "@a/b", "layer": 0, "grant": 0, "principal": "*", "revoked": "no", "expired": false, "conditions": true}}, "findings": [], "malformed": 0, "total": 0}`,
	} {
		if out, err := output(ast.MustParseTerm(bad).Value); err == nil {
			t.Errorf("%s: got %+v, want an error", bad, out)
		}
	}
}

// A policy whose grants yield no rule (each is scoped, so grants nothing)
// has no data.gated.grants.candidates at all: the decision still answers,
// with no candidate, alone or beside custom findings.
func TestDecisionWithoutGrantRules(t *testing.T) {
	t.Parallel()
	files := oneGrant("  - {principal: \"*\", actions: [{action: \"storage:push\", scope: \"docs/\"}]}\n")
	s := mustLoad(t, nil, files)
	if strings.Contains(s.GrantsRego(), "candidates contains") {
		t.Fatalf("the test needs a grants module without rules:\n%s", s.GrantsRego())
	}
	assertOutcome(t, s, input("storage:push", "x"), route.Refuse, route.CodePolicyNoGrant)
	files["deploys.rego"] = customModule
	friday := input("storage:push", "x")
	friday.Now = time.Date(2026, 5, 8, 12, 0, 0, 0, time.UTC)
	res := assertOutcome(t, mustLoad(t, nil, files), friday, route.Refuse, "custom_no_friday_push", route.CodePolicyNoGrant)
	if res.Block.Grant != nil {
		t.Fatalf("grant %+v, want none", res.Block.Grant)
	}
}
