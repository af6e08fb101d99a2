package policy

import (
	"context"
	"testing"
	"time"

	keyed "github.com/gatedhq/gated/internal/limit"
	"github.com/gatedhq/gated/internal/route"
)

func withRequirements(reqs string) map[string]string {
	return map[string]string{"POLICY.md": policyMD(`schema: policy/v1
id: "@acme/team"
grants:
  - {principal: "*", actions: [{action: "*"}]}
requirements:
` + reqs)}
}

func approval(tier string) route.EvidenceRef {
	return route.EvidenceRef{SourceID: "approval:1", Kind: "approval", TrustTier: tier}
}

func TestMFARequirement(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, withRequirements("  - {kind: mfa-recent, within_seconds: 600, applies_to: [\"secrets:*\"]}\n"))
	assertOutcome(t, s, input("secrets:reveal", "x"), route.Ask, "policy_requirement_failed:mfa-recent")
	in := input("secrets:reveal", "x")
	in.Event.EvidenceRefs = []route.EvidenceRef{authEvent("verified", t0.Add(-time.Minute))}
	assertOutcome(t, s, in, route.Accept)
	in.Event.EvidenceRefs = []route.EvidenceRef{authEvent("verified", t0.Add(-11*time.Minute))}
	res := assertOutcome(t, s, in, route.Ask, "policy_requirement_failed:mfa-recent")
	if res.Block.Decision != "deny" || res.Block.Reason != ReasonRequirementFailed {
		t.Fatalf("block %+v", res.Block)
	}
	assertOutcome(t, s, input("storage:read", "x"), route.Accept) // not in applies_to
}

func TestApprovalRequirement(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, withRequirements("  - {kind: approval-from, count: 2, role: engineer, applies_to: [storage:push]}\n  - {kind: approval-from}\n"))
	in := input("storage:push", "x")
	in.Event.EvidenceRefs = []route.EvidenceRef{approval("verified"), approval("runtime")}
	assertOutcome(t, s, in, route.Defer, "policy_requirement_failed:approval-from")
	in.Event.EvidenceRefs = append(in.Event.EvidenceRefs, approval("verified"))
	assertOutcome(t, s, in, route.Accept)
	// The second requirement applies to every action, with count 1 by default.
	assertOutcome(t, s, input("storage:read", "x"), route.Defer, "policy_requirement_failed:approval-from")
}

func TestUnknownRequirementDefers(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, withRequirements("  - {kind: signed-by, role: admin, applies_to: [sandbox:network-egress]}\n"))
	if !hasProblem(s.Warnings(), "requirement_unknown") {
		t.Fatalf("warnings %v lack requirement_unknown", s.Warnings())
	}
	assertOutcome(t, s, input("sandbox:network-egress", "x"), route.Defer, "policy_requirement_failed:signed-by")
	assertOutcome(t, s, input("sandbox:execute", "x"), route.Accept)
}

func TestRequirementRefsMustResolve(t *testing.T) {
	t.Parallel()
	files := withRequirements("  - {kind: mfa-recent, within_seconds: 60, applies_to: [\"@agentik/actions/standard/secrets-rotate\"]}\n")
	_, err := Load([]string{writeDir(t, files)}, nil)
	assertProblems(t, err, "action_ref_unresolved")
	s := mustLoad(t, fakeResolver{"@agentik/actions/standard/secrets-rotate": "secrets:rotate"}, files)
	assertOutcome(t, s, input("secrets:rotate", "x"), route.Ask, "policy_requirement_failed:mfa-recent")
}

func TestRequirementsSkippedWhenGrantRefuses(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, map[string]string{"POLICY.md": policyMD("schema: policy/v1\nid: \"@a/b\"\nrequirements:\n  - {kind: mfa-recent, within_seconds: 60}\n")})
	assertOutcome(t, s, input("storage:read", "x"), route.Refuse, route.CodePolicyNoGrant)
}

func TestApprovalPolicy(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"a.POLICY.md": policyMD("schema: policy/v1\nid: \"@acme/base\"\ngrants:\n  - {principal: \"*\", actions: [{action: \"*\"}]}\n"),
		"b.POLICY.md": policyMD("schema: policy/v1\nid: \"@acme/approvers\"\ngrants:\n  - {principal: \"operator://lead\", actions: [{action: \"storage:push\"}]}\n"),
	}
	s := mustLoad(t, nil, files)
	in := input("storage:push", "operator://dev")
	in.ApprovalPolicyRef = "@acme/approvers"
	assertOutcome(t, s, in, route.Defer, route.CodePolicyApprovalNotGranted)
	in.Principals = []string{"operator://lead"}
	assertOutcome(t, s, in, route.Accept)
	in.ApprovalPolicyRef = "policy:approvers" // a bare slug names the policy whose id ends in it
	assertOutcome(t, s, in, route.Accept)
	in.ApprovalPolicyRef = "policy:@acme/missing"
	assertOutcome(t, s, in, route.Defer, route.CodeApprovalPolicyUnresolvable)

	// A slug two policies share is ambiguous, so it does not resolve.
	files["c.POLICY.md"] = policyMD("schema: policy/v1\nid: \"@other/approvers\"\n")
	ambiguous := mustLoad(t, nil, files)
	in.ApprovalPolicyRef = "approvers"
	assertOutcome(t, ambiguous, in, route.Defer, route.CodeApprovalPolicyUnresolvable)

	// Without any POLICY.md the reference cannot resolve either.
	none := mustLoad(t, nil, map[string]string{})
	in.ApprovalPolicyRef = "@acme/approvers"
	assertOutcome(t, none, in, route.Defer, route.CodeApprovalPolicyUnresolvable)
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	files := map[string]string{"POLICY.md": policyMD(`schema: policy/v1
id: "@acme/team"
grants:
  - {principal: "*", actions: [{action: "*"}]}
limits:
  - {kind: rate-tool-calls, value: 2, per: minute, applies_to: ["storage:commit"]}
  - {kind: max-concurrent-sandboxes, value: 5, scope: user}
`)}
	s := mustLoad(t, nil, files)
	if !hasProblem(s.Warnings(), "limit_ignored") {
		t.Fatalf("warnings %v lack limit_ignored", s.Warnings())
	}
	lim := NewLimiter()
	call := func(s *Set, action, who string, at time.Time) Input {
		in := input(action, who)
		in.Limiter, in.Now, in.TokenName = lim, at, who+"-token"
		return in
	}
	assertOutcome(t, s, call(s, "storage:commit", "bob", t0), route.Accept)
	assertOutcome(t, s, call(s, "storage:commit", "bob", t0), route.Accept)
	res := assertOutcome(t, s, call(s, "storage:commit", "bob", t0), route.Defer, route.CodePolicyLimitExceeded)
	if res.Block.Reason != ReasonLimitExceeded {
		t.Fatalf("block %+v", res.Block)
	}
	assertOutcome(t, s, call(s, "storage:commit", "eve", t0), route.Accept) // per principal
	in := call(s, "storage:commit", "carol", t0)
	in.Principals = []string{"carol", "bob"} // the first principal keys a wildcard grant's limit
	assertOutcome(t, s, in, route.Accept)
	in = call(s, "storage:commit", "bob", t0)
	in.TokenName = "another-token-of-bob" // a new caller, but bob's budget is spent
	assertOutcome(t, s, in, route.Defer, route.CodePolicyLimitExceeded)
	assertOutcome(t, s, call(s, "storage:read", "bob", t0), route.Accept) // not in applies_to

	// A reload that keeps the limit keeps its state.
	files["extra.POLICY.md"] = policyMD("schema: policy/v1\nid: \"@acme/extra\"\n")
	reloaded := mustLoad(t, nil, files)
	assertOutcome(t, reloaded, call(reloaded, "storage:commit", "bob", t0.Add(time.Second)), route.Defer, route.CodePolicyLimitExceeded)
	// One call refills every 30 s.
	assertOutcome(t, reloaded, call(reloaded, "storage:commit", "bob", t0.Add(31*time.Second)), route.Accept)

	in = input("storage:commit", "bob")
	in.Limiter = nil
	assertOutcome(t, s, in, route.Refuse, route.CodePolicyEvaluationError)
}

func TestLimiterSweepsIdleBuckets(t *testing.T) {
	t.Parallel()
	l := NewLimiter()
	l.allow(context.Background(), 1, time.Second, t0, "a")
	l.allow(context.Background(), 1, time.Hour, t0, "b")
	l.allow(context.Background(), 1, time.Second, t0.Add(2*time.Minute), "c") // triggers a sweep
	if l.keys.(*keyed.Keyed).Has("a") {
		t.Fatal("idle bucket a survived the sweep")
	}
	if !l.keys.(*keyed.Keyed).Has("b") {
		t.Fatal("bucket b, still within its period, was swept")
	}
	if ok, _, _ := l.allow(context.Background(), 1, time.Hour, t0.Add(2*time.Minute), "b"); ok {
		t.Fatal("bucket b lost its state")
	}
}

func TestRateLimitKeyIsTheMatchedPrincipal(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, map[string]string{"POLICY.md": policyMD(`schema: policy/v1
id: "@acme/team"
grants:
  - {principal: "operator://bob", actions: [{action: "storage:push"}]}
limits:
  - {kind: rate-tool-calls, value: 1, per: hour}
`)})
	in := input("storage:push", "group://ops", "operator://bob")
	in.TokenName = "ops-token"
	assertOutcome(t, s, in, route.Accept)
	alone := input("storage:push", "operator://bob")
	alone.Limiter, alone.TokenName = in.Limiter, "bob-token" // another caller: only bob's principal budget is shared
	res := assertOutcome(t, s, alone, route.Defer, route.CodePolicyLimitExceeded)
	if res.Block.Principal != "operator://bob" {
		t.Fatalf("block principal %q", res.Block.Principal)
	}
}
