package policy_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
)

// specExample is the "Example — standalone POLICY.md" of AIP-38, read from
// the spec text itself, so the test follows the text rather than a copy.
func specExample(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../spec/agentproto/aip-38-policy-md.mdx")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "## Example — standalone POLICY.md")
	if !ok {
		t.Fatal("AIP-38 has no standalone POLICY.md example")
	}
	_, rest, _ = strings.Cut(rest, "```md\n")
	md, _, ok := strings.Cut(rest, "\n```")
	if !ok || !strings.Contains(md, `id: "@acme/policies/marketing-team"`) {
		t.Fatalf("the example is not the marketing-team policy:\n%s", md)
	}
	return md + "\n"
}

// AIP-38's own example, whose id has a path (@owner/<path>/slug), loads
// against the standard actions and decides as the text says.
func TestAIP38MarketingExample(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "POLICY.md"), []byte(specExample(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load([]string{"../../spec/agentproto/standard-actions"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := policy.Load([]string{dir}, cat, policy.WithEvalBudget(time.Minute))
	if err != nil {
		t.Fatalf("the AIP-38 example does not load: %v", err)
	}
	now := time.Date(2026, 5, 4, 16, 0, 0, 0, time.UTC) // inside Eve's week from 2026-05-03
	decide := func(limiter *policy.Limiter, action string, principals ...string) (route.Route, []string) {
		ev := &route.Event{ToolName: "storage", ToolCategory: route.Write, AuthorizationState: route.AuthValidated}
		o := route.Combine(s.Evaluate(context.Background(), policy.Input{
			Event: ev, Category: route.Write, ActionID: action, Principals: principals, Now: now, Limiter: limiter,
		}).Findings)
		return o.Route, o.HardBlockers
	}
	for _, c := range []struct {
		why       string
		principal string
		action    string
		allowed   bool
	}{
		{"marketing operators read storage", "@acme/groups/marketing-operators", "storage:read", true},
		{"marketing operators write storage", "@acme/groups/marketing-operators", "storage:write", true},
		{"marketing operators commit", "@acme/groups/marketing-operators", "storage:commit", true},
		{"but do not push", "@acme/groups/marketing-operators", "storage:push", false},
		{"Bob pushes", "operator://bob", "storage:push", true},
		{"Bob's grant is push and swap-branch only", "operator://bob", "storage:write", false},
		{"the acting user reads everything", "user://current", "storage:read", true},
		{"default deny for anyone else", "operator://mallory", "storage:read", false},
	} {
		r, blockers := decide(policy.NewLimiter(), c.action, c.principal)
		if (r == route.Accept) != c.allowed {
			t.Errorf("%s: %s doing %s got %s %v, want allowed=%v", c.why, c.principal, c.action, r, blockers, c.allowed)
		}
	}

	// limits: rate-tool-calls, 100 per minute.
	limiter := policy.NewLimiter()
	for i := range 100 {
		if r, blockers := decide(limiter, "storage:read", "user://current"); r != route.Accept {
			t.Fatalf("call %d of the 100 a minute allows: %s %v", i+1, r, blockers)
		}
	}
	if r, blockers := decide(limiter, "storage:read", "user://current"); r == route.Accept || !slices.ContainsFunc(blockers, func(b string) bool { return strings.Contains(b, "limit") }) {
		t.Errorf("the 101st call within the minute: %s %v, want it held by the rate limit", r, blockers)
	}
}

// AIP-38's ids are @owner/slug or @owner/<path>/slug; anything else that
// is not a well-formed id is still a load error at /id.
func TestPolicyIDs(t *testing.T) {
	t.Parallel()
	for id, ok := range map[string]bool{
		"@acme/marketing":                 true,
		"@acme/policies/marketing-team":   true,
		"@acme/policies/eu/marketing-1":   true,
		"@acme":                           false,
		"@acme/":                          false,
		"@acme//marketing":                false,
		"@acme/policies/":                 false,
		"@Acme/marketing":                 false,
		"acme/marketing":                  false,
		"@acme/policies/../marketing":     false,
		"@acme/-marketing":                false,
		"@acme/policies/marketing team":   false,
		"@acme/policies/marketing-team\n": false,
	} {
		dir := t.TempDir()
		md := "---\nschema: policy/v1\nid: " + strconv.Quote(id) + "\nversion: 1.0.0\ndefault: deny\n---\n"
		if err := os.WriteFile(filepath.Join(dir, "POLICY.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := policy.Load([]string{dir}, nil)
		if ok && err != nil {
			t.Errorf("id %q: %v, want it to load", id, err)
		}
		if !ok && (err == nil || !strings.Contains(err.Error(), "/id")) {
			t.Errorf("id %q: %v, want a problem at /id", id, err)
		}
	}
}
