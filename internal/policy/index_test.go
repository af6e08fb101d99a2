package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/gatedhq/gated/internal/route"
)

// countingResolver answers OPA's rule index from one input and counts
// what the index asked of it.
type countingResolver struct {
	input ast.Value
	calls int
}

func (r *countingResolver) Resolve(ref ast.Ref) (ast.Value, error) {
	r.calls++
	if !ref[0].Equal(ast.InputRootDocument) {
		return nil, nil
	}
	v, err := r.input.Find(ref[1:])
	if err != nil {
		return nil, nil // undefined
	}
	return v, nil
}

// TestGrantsIndexedOnActionAndPrincipal: finding the grants of one call
// asks the same few questions of the input whether the call's action has
// 10 grants or 1,000 (one per principal): OPA's rule index narrows on the
// principal as well as on the action, instead of testing every grant of
// the action for its principal.
func TestGrantsIndexedOnActionAndPrincipal(t *testing.T) {
	t.Parallel()
	lookup := func(n int) (calls int, rules []string) {
		var g strings.Builder
		for i := range n {
			fmt.Fprintf(&g, "  - {principal: \"operator://u%d\", actions: [{action: \"kind7:verb7\"}, {action: \"kind%d:other\"}]}\n", i, i)
		}
		g.WriteString("  - {principal: \"*\", actions: [{action: \"kind7:verb7\"}]}\n")
		g.WriteString("  - {principal: \"operator://u7\", actions: [{action: \"kind7:*\"}, {action: \"*\"}]}\n")
		s := mustLoad(t, nil, oneGrant(g.String()))
		c, err := ast.CompileModulesWithOpt(map[string]string{"grants.rego": s.GrantsRego()}, ast.CompileOpts{ParserOptions: ast.ParserOptions{RegoVersion: ast.RegoV1}})
		if err != nil {
			t.Fatal(err)
		}
		in, err := inputValue(input("kind7:verb7", "operator://nobody", "operator://u7"), ast.NullValue)
		if err != nil {
			t.Fatal(err)
		}
		r := &countingResolver{input: in}
		res, err := c.RuleIndex(ast.MustParseRef("data.gated.grants.candidates")).Lookup(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, rule := range res.Rules {
			rules = append(rules, rule.Head.Key.String())
		}
		return r.calls, rules
	}
	fewCalls, few := lookup(10)
	manyCalls, many := lookup(1000)
	// u7's grant on the action, the `*` grant, u7's kind7:* and * grants.
	if len(few) != 4 || len(many) != 4 {
		t.Fatalf("the index found %d and %d rules, want 4 each:\n%s\n%s", len(few), len(many), strings.Join(few, "\n"), strings.Join(many, "\n"))
	}
	if fewCalls != manyCalls {
		t.Fatalf("the index resolved %d input refs for 10 grants and %d for 1,000: it scans the action's grants", fewCalls, manyCalls)
	}
}

// Grants of several principals on one action: each request principal
// finds its own, `*` grants are found for everyone, and the best candidate
// still decides.
func TestGrantsAcrossPrincipals(t *testing.T) {
	t.Parallel()
	grants := `  - {principal: "a", actions: [{action: "storage:read"}], revoked: true}
  - {principal: "b", actions: [{action: "storage:read"}]}
  - {principal: "*", actions: [{action: "storage:read"}], conditions: [{kind: ip-range, cidr: 10.0.0.0/8}]}
  - {principal: "c", actions: [{action: "storage:*"}], ttl_seconds: 60}
`
	for i := range 50 {
		grants += fmt.Sprintf("  - {principal: \"d%d\", actions: [{action: \"storage:read\"}]}\n", i)
	}
	s := mustLoad(t, nil, oneGrant(grants))
	cases := []struct {
		action     string
		principals []string
		want       route.Route
		blocker    string
		grant      int // -1: none
		principal  string
	}{
		{"storage:read", []string{"a", "b"}, route.Accept, "", 1, "b"},
		{"storage:read", []string{"b", "a"}, route.Accept, "", 1, "b"},
		{"storage:read", []string{"x", "d49", "a"}, route.Accept, "", 53, "d49"},
		{"storage:read", []string{"d7"}, route.Accept, "", 11, "d7"},
		{"storage:read", []string{"a"}, route.Refuse, route.CodePolicyConditionFailed, 2, "a"},
		{"storage:read", nil, route.Refuse, route.CodePolicyConditionFailed, 2, "*"},
		{"storage:write", []string{"c"}, route.Refuse, route.CodePolicyTTLExpired, 3, "c"},
		{"storage:write", []string{"a", "b", "d7"}, route.Refuse, route.CodePolicyNoGrant, -1, "a"},
	}
	for _, c := range cases {
		var blockers []string
		if c.blocker != "" {
			blockers = []string{c.blocker}
		}
		name := fmt.Sprintf("%s %v", c.action, c.principals)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := assertOutcome(t, s, input(c.action, c.principals...), c.want, blockers...)
			b := res.Block
			switch {
			case c.grant < 0 && b.Grant != nil, c.grant >= 0 && (b.Grant == nil || b.Grant.Index != c.grant):
				t.Fatalf("grant %+v, want %d", b.Grant, c.grant)
			case b.Principal != c.principal:
				t.Fatalf("principal %q, want %q", b.Principal, c.principal)
			}
		})
	}
}
