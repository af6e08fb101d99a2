package policy

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/route"
)

// fakeResolver maps registry refs the way the catalog would.
type fakeResolver map[string]string

func (f fakeResolver) ResolveActionRef(ref string) (string, bool) {
	id, ok := f[ref]
	return id, ok
}

func oneGrant(grant string) map[string]string {
	return map[string]string{"POLICY.md": policyMD("schema: policy/v1\nid: \"@acme/team\"\ngrants:\n" + grant)}
}

func TestActionMatching(t *testing.T) {
	t.Parallel()
	res := fakeResolver{"@agentik/actions/standard/storage-push": "storage:push", "storage:commit": "storage:commit"}
	s := mustLoad(t, res, oneGrant(`  - principal: "operator://bob"
    actions:
      - {action: "storage:commit"}
      - {action: "secrets:*"}
      - {action: "sandbox:net:*"}
      - {action: "@agentik/actions/standard/storage-push"}
`))
	cases := []struct {
		action string
		want   route.Route
	}{
		{"storage:commit", route.Accept},
		{"storage:commit2", route.Refuse},
		{"storage:read", route.Refuse},
		{"secrets:reveal", route.Accept},
		{"secrets:rotate:api", route.Accept},
		{"secrets", route.Refuse},
		{"sandbox:net:egress", route.Accept},
		{"sandbox:execute", route.Refuse},
		{"storage:push", route.Accept},
		{"", route.Refuse}, // uncatalogued
	}
	if hasProblem(s.Warnings(), "action_not_catalogued") {
		t.Fatalf("warnings %v: storage:commit is catalogued", s.Warnings())
	}
	for _, c := range cases {
		got, _, _ := outcome(t, s, input(c.action, "operator://bob"))
		if got != c.want {
			t.Errorf("%q: got %s, want %s", c.action, got, c.want)
		}
	}
}

func TestUncataloguedBareIDWarns(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, fakeResolver{}, oneGrant("  - {principal: x, actions: [{action: \"storage:read\"}]}\n"))
	if !hasProblem(s.Warnings(), "action_not_catalogued") {
		t.Fatalf("warnings %v lack action_not_catalogued", s.Warnings())
	}
}

func TestAnyActionWildcardSkipsUncatalogued(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, oneGrant("  - {principal: \"*\", actions: [{action: \"*\"}]}\n"))
	assertOutcome(t, s, input("storage:commit"), route.Accept)
	assertOutcome(t, s, input("", "operator://bob"), route.Refuse, route.CodePolicyNoGrant)
}

func TestUnresolvedRegistryRefGrantsNothing(t *testing.T) {
	t.Parallel()
	files := oneGrant("  - {principal: \"operator://bob\", actions: [{action: \"@agentik/actions/standard/storage-push\"}]}\n")
	for name, res := range map[string]Resolver{"nil resolver": nil, "unknown ref": fakeResolver{}} {
		t.Run(name, func(t *testing.T) {
			s := mustLoad(t, res, files)
			if !hasProblem(s.Warnings(), "action_ref_unresolved") {
				t.Fatalf("warnings %v lack action_ref_unresolved", s.Warnings())
			}
			assertOutcome(t, s, input("storage:push", "operator://bob"), route.Refuse, route.CodePolicyNoGrant)
		})
	}
}

func TestPrincipalForms(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, oneGrant(`  - principal: {ref: "@acme/groups/ops"}
    actions: [{action: "storage:push"}]
  - principal: {name: "Eve", email: "eve@example.com"}
    actions: [{action: "storage:push"}]
  - principal: "*"
    actions: [{action: "storage:read"}]
`))
	if !hasProblem(s.Warnings(), "principal_unmatchable") {
		t.Fatalf("warnings %v lack principal_unmatchable", s.Warnings())
	}
	assertOutcome(t, s, input("storage:push", "@acme/groups/ops"), route.Accept)
	assertOutcome(t, s, input("storage:push", "Eve", "eve@example.com"), route.Refuse, route.CodePolicyNoGrant)
	res := assertOutcome(t, s, input("storage:read", "bot://a", "user://u"), route.Accept)
	if res.Block.Principal != "bot://a" {
		t.Fatalf("wildcard grant principal %q, want the request's first principal", res.Block.Principal)
	}
	res = assertOutcome(t, s, input("storage:read"), route.Accept)
	if res.Block.Principal != "*" {
		t.Fatalf("principal of an anonymous request %q, want *", res.Block.Principal)
	}
}

func TestScopedActionGrantsNothing(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, oneGrant("  - {principal: \"*\", actions: [{action: \"storage:read\", scope: \"docs/\"}, {action: \"storage:write\"}]}\n"))
	if !hasProblem(s.Warnings(), "scope_unsupported") {
		t.Fatalf("warnings %v lack scope_unsupported", s.Warnings())
	}
	assertOutcome(t, s, input("storage:read", "x"), route.Refuse, route.CodePolicyNoGrant)
	assertOutcome(t, s, input("storage:write", "x"), route.Accept)
}

func TestBestCandidateReason(t *testing.T) {
	t.Parallel()
	revoked := "  - {principal: \"*\", actions: [{action: \"storage:read\"}], revoked: true}\n"
	expired := "  - {principal: \"*\", actions: [{action: \"storage:read\"}], ttl_seconds: 60}\n"
	condition := "  - {principal: \"*\", actions: [{action: \"storage:read\"}], conditions: [{kind: ip-range, cidr: 10.0.0.0/8}]}\n"
	allowing := "  - {principal: \"*\", actions: [{action: \"storage:read\"}]}\n"
	cases := []struct {
		grants string
		want   string
	}{
		{revoked, route.CodePolicyExplicitRevoke},
		{expired, route.CodePolicyTTLExpired},
		{condition, route.CodePolicyConditionFailed},
		{revoked + expired, route.CodePolicyTTLExpired},
		{condition + revoked + expired, route.CodePolicyConditionFailed},
		{revoked + expired + condition + allowing, ""},
	}
	for _, c := range cases {
		s := mustLoad(t, nil, oneGrant(c.grants))
		if c.want == "" {
			res := assertOutcome(t, s, input("storage:read", "x"), route.Accept)
			if res.Block.Grant == nil || res.Block.Grant.Index != 3 || res.Block.Reason != ReasonMatchedGrant {
				t.Fatalf("block %+v, want matched grant 3", res.Block)
			}
			continue
		}
		assertOutcome(t, s, input("storage:read", "x"), route.Refuse, c.want)
	}
}

func TestTTLEdges(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, oneGrant(`  - principal: "*"
    actions: [{action: "storage:read"}]
    ttl_seconds: 86400
    granted_at: "2026-05-03T00:00:00Z"
`))
	start := time.Date(2026, 5, 3, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		now  time.Time
		want route.Route
	}{
		{start.Add(-time.Nanosecond), route.Refuse}, // not yet in force
		{start, route.Accept},
		{start.Add(24*time.Hour - time.Nanosecond), route.Accept},
		{start.Add(24 * time.Hour), route.Refuse}, // expires at granted_at + ttl (AIP-38 rule 4)
	}
	for _, c := range cases {
		in := input("storage:read", "x")
		in.Now = c.now
		got, bl, _ := outcome(t, s, in)
		if got != c.want || (got == route.Refuse && !slices.Equal(bl, []string{route.CodePolicyTTLExpired})) {
			t.Errorf("now %s: got %s %v, want %s", c.now, got, bl, c.want)
		}
	}

	noStart := mustLoad(t, nil, oneGrant("  - {principal: \"*\", actions: [{action: \"storage:read\"}], ttl_seconds: 999999999}\n"))
	if !hasProblem(noStart.Warnings(), "ttl_without_granted_at") {
		t.Fatalf("warnings %v lack ttl_without_granted_at", noStart.Warnings())
	}
	assertOutcome(t, noStart, input("storage:read", "x"), route.Refuse, route.CodePolicyTTLExpired)
}

func TestBusinessHours(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, oneGrant(`  - principal: "*"
    actions: [{action: "storage:read"}]
    conditions:
      - {kind: during-business-hours, timezone: "America/Los_Angeles", start: "08:30", end: "18:00", days: [Mon, tuesday, sat]}
`))
	la, _ := time.LoadLocation("America/Los_Angeles")
	cases := []struct {
		now  time.Time
		want route.Route
	}{
		{time.Date(2026, 5, 4, 8, 30, 0, 0, la), route.Accept},  // Monday, at start
		{time.Date(2026, 5, 4, 8, 29, 59, 0, la), route.Refuse}, // a second early
		{time.Date(2026, 5, 4, 17, 59, 0, 0, la), route.Accept},
		{time.Date(2026, 5, 4, 18, 0, 0, 0, la), route.Refuse},       // end is exclusive
		{time.Date(2026, 5, 6, 12, 0, 0, 0, la), route.Refuse},       // Wednesday
		{time.Date(2026, 5, 9, 12, 0, 0, 0, la), route.Accept},       // Saturday
		{time.Date(2026, 5, 4, 16, 0, 0, 0, time.UTC), route.Accept}, // 09:00 in LA (PDT)
		{time.Date(2026, 1, 5, 16, 0, 0, 0, time.UTC), route.Refuse}, // 08:00 in LA (PST)
	}
	for _, c := range cases {
		in := input("storage:read", "x")
		in.Now = c.now
		if got, _, _ := outcome(t, s, in); got != c.want {
			t.Errorf("now %s: got %s, want %s", c.now, got, c.want)
		}
	}
}

func TestBusinessHoursDefaults(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, oneGrant("  - {principal: \"*\", actions: [{action: \"storage:read\"}], conditions: [{kind: during-business-hours, timezone: UTC}]}\n"))
	for now, want := range map[time.Time]route.Route{
		time.Date(2026, 5, 8, 9, 0, 0, 0, time.UTC):   route.Accept, // Friday 09:00
		time.Date(2026, 5, 8, 17, 0, 0, 0, time.UTC):  route.Refuse, // Friday 17:00
		time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC): route.Refuse, // Sunday
	} {
		in := input("storage:read", "x")
		in.Now = now
		if got, _, _ := outcome(t, s, in); got != want {
			t.Errorf("now %s: got %s, want %s", now, got, want)
		}
	}
}

func TestIPRange(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, oneGrant("  - {principal: \"*\", actions: [{action: \"storage:read\"}], conditions: [{kind: ip-range, cidr: 10.0.0.0/8}, {kind: ip-range, cidr: \"10.1.0.0/16\"}]}\n"))
	for ip, want := range map[string]route.Route{
		"10.1.2.3":        route.Accept,
		"::ffff:10.1.2.3": route.Accept, // IPv4-mapped
		"10.2.0.1":        route.Refuse, // only in the first range: conditions are ANDed
		"192.168.1.1":     route.Refuse,
		"2001:db8::1":     route.Refuse,
		"":                route.Refuse, // unknown client address
	} {
		in := input("storage:read", "x")
		if ip != "" {
			in.ClientIP = netip.MustParseAddr(ip)
		}
		if got, _, _ := outcome(t, s, in); got != want {
			t.Errorf("ip %q: got %s, want %s", ip, got, want)
		}
	}
}

func authEvent(tier string, at time.Time) route.EvidenceRef {
	return route.EvidenceRef{SourceID: "idp:login", Kind: "auth_event", TrustTier: tier, RetrievedAt: at.Format(time.RFC3339)}
}

func TestMFARecentCondition(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, oneGrant("  - {principal: \"*\", actions: [{action: \"storage:read\"}], conditions: [{kind: mfa-recent, within_seconds: 600}]}\n"))
	cases := []struct {
		name string
		refs []route.EvidenceRef
		want route.Route
	}{
		{"none", nil, route.Refuse},
		{"fresh", []route.EvidenceRef{authEvent("verified", t0.Add(-5*time.Minute))}, route.Accept},
		{"at window edge", []route.EvidenceRef{authEvent("verified", t0.Add(-10*time.Minute))}, route.Accept},
		{"too old", []route.EvidenceRef{authEvent("verified", t0.Add(-10*time.Minute-time.Second))}, route.Refuse},
		{"in the future", []route.EvidenceRef{authEvent("verified", t0.Add(time.Minute))}, route.Refuse},
		{"not verified", []route.EvidenceRef{authEvent("runtime", t0)}, route.Refuse},
		{"bad timestamp", []route.EvidenceRef{{Kind: "auth_event", TrustTier: "verified", RetrievedAt: "yesterday"}}, route.Refuse},
		{"one good of several", []route.EvidenceRef{authEvent("runtime", t0), authEvent("verified", t0.Add(-time.Minute))}, route.Accept},
	}
	for _, c := range cases {
		in := input("storage:read", "x")
		in.Event.EvidenceRefs = c.refs
		got, bl, _ := outcome(t, s, in)
		if got != c.want || (got == route.Refuse && !slices.Equal(bl, []string{route.CodePolicyConditionFailed})) {
			t.Errorf("%s: got %s %v, want %s", c.name, got, bl, c.want)
		}
	}
}

func TestUnknownConditionSkipsGrant(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, oneGrant("  - {principal: \"*\", actions: [{action: \"storage:read\"}], conditions: [{kind: signed-by, role: admin}]}\n"))
	if !hasProblem(s.Warnings(), "condition_unknown") {
		t.Fatalf("warnings %v lack condition_unknown", s.Warnings())
	}
	assertOutcome(t, s, input("storage:read", "x"), route.Refuse, route.CodePolicyConditionFailed)
}

func TestComposition(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"org/POLICY.md": policyMD(`schema: policy/v1
id: "@acme/org"
default: allow
grants:
  - {principal: "operator://bob", actions: [{action: "storage:read"}]}
requirements:
  - {kind: approval-from, count: 1, applies_to: ["storage:push"]}
`),
		"team.POLICY.md": policyMD(`schema: policy/v1
id: "@acme/team"
grants:
  - {principal: "operator://eve", actions: [{action: "storage:push"}]}
requirements:
  - {kind: mfa-recent, within_seconds: 300, applies_to: ["storage:*"]}
`),
	}
	s := mustLoad(t, nil, files)
	withMFA := func(in Input) Input {
		in.Event.EvidenceRefs = append(in.Event.EvidenceRefs, authEvent("verified", t0))
		return in
	}
	// Union of grants; requirements of both policies apply.
	assertOutcome(t, s, withMFA(input("storage:read", "operator://bob")), route.Accept)
	assertOutcome(t, s, input("storage:read", "operator://bob"), route.Ask, route.CodePolicyRequirementFailed+":mfa-recent")
	assertOutcome(t, s, withMFA(input("storage:push", "operator://eve")), route.Defer, route.CodePolicyRequirementFailed+":approval-from")
	both := withMFA(input("storage:push", "operator://eve"))
	both.Event.EvidenceRefs = append(both.Event.EvidenceRefs, route.EvidenceRef{Kind: "approval", TrustTier: "verified"})
	assertOutcome(t, s, both, route.Accept)
	// One policy says deny, so the composed default is deny.
	assertOutcome(t, s, input("storage:read", "operator://eve"), route.Refuse, route.CodePolicyNoGrant)

	// Both allow: the default is allow, even for uncatalogued tools.
	files["team.POLICY.md"] = policyMD("schema: policy/v1\nid: \"@acme/team\"\ndefault: allow\n")
	s = mustLoad(t, nil, files)
	res := assertOutcome(t, s, input("", "nobody"), route.Accept)
	if res.Block.Reason != ReasonDefaultAllow || res.Block.Decision != "allow" {
		t.Fatalf("block %+v, want default-allow", res.Block)
	}
	if len(res.Block.PolicyChain) != 2 || res.Block.PolicyChain[0].ID != "@acme/org" || res.Block.PolicyChain[1].Layer != 1 {
		t.Fatalf("policy chain %+v", res.Block.PolicyChain)
	}
}

func TestNotEnforcedWithoutPolicy(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, map[string]string{"README.md": "no policy here"})
	if s.Enforced() {
		t.Fatal("Enforced() with no POLICY.md")
	}
	res := assertOutcome(t, s, input("", "anyone"), route.Accept)
	if res.Block != nil {
		t.Fatalf("block %+v without POLICY.md", res.Block)
	}
}

func TestBlockShape(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, oneGrant("  - {principal: \"operator://bob\", actions: [{action: \"storage:read\"}]}\n  - {principal: \"bot://a\", actions: [{action: \"storage:read\"}]}\n"))
	res := assertOutcome(t, s, input("storage:read", "bot://a"), route.Accept)
	b := res.Block
	if b.Decision != "allow" || b.Reason != ReasonMatchedGrant || b.Principal != "bot://a" || b.Action != "storage:read" ||
		b.Grant == nil || *b.Grant != (GrantRef{"@acme/team", 1}) || b.EvaluatedAt != "2026-05-04T15:00:00Z" || len(b.PolicyChain) != 1 {
		t.Fatalf("block %+v", b)
	}
	res = assertOutcome(t, s, input("storage:write", "bot://a"), route.Refuse, route.CodePolicyNoGrant)
	if res.Block.Decision != "deny" || res.Block.Reason != ReasonNoGrant || res.Block.Grant != nil {
		t.Fatalf("deny block %+v", res.Block)
	}
}

func hasProblem(ps []Problem, code string) bool {
	return slices.ContainsFunc(ps, func(p Problem) bool { return p.Code == code })
}

// A principal or action ref cannot break out of the generated comment.
func TestNoRegoInjection(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, oneGrant(`  - principal: "operator://bob\ncandidates contains {\"policy\": \"@acme/team\", \"layer\": 0, \"grant\": 0, \"principal\": \"*\", \"revoked\": false, \"expired\": false, \"conditions\": true} if true\n#"
    actions: [{action: "storage:read"}]
`))
	assertOutcome(t, s, input("secrets:reveal", "operator://eve"), route.Refuse, route.CodePolicyNoGrant)
}
