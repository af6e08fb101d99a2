package policy

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"net/netip"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/route"
)

// TestMain makes every test of the package a differential test: each
// decision the native evaluator makes, whatever test asked for it, is
// made again by the Rego query and must come out the same. Benchmarks
// measure the native evaluator alone.
func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() != "" {
		os.Exit(m.Run())
	}
	var mu sync.Mutex
	var mismatches []string
	afterNative = func(ctx context.Context, s *Set, in Input, out *evalOutput, err error) {
		rout, rerr := s.evalRego(ctx, in)
		if ctx.Err() != nil {
			return // the request ended meanwhile: Rego refuses for that alone
		}
		if d := diffEval(out, err, rout, rerr); d != "" {
			mu.Lock()
			mismatches = append(mismatches, fmt.Sprintf("%s %v: %s", in.ActionID, in.Principals, d))
			mu.Unlock()
		}
	}
	code := m.Run()
	if len(mismatches) > 0 {
		fmt.Fprintf(os.Stderr, "the native evaluator disagreed with Rego %d time(s):\n%s\n", len(mismatches), strings.Join(mismatches, "\n"))
		code = 1
	}
	os.Exit(code)
}

// diffEval describes how two evaluations differ, "" when they do not:
// the same error, or the same set of candidates and no custom findings.
// A Rego evaluation stopped by its budget compares with nothing: the
// budget is the process's (its memory, an overrunning evaluation of
// another test), which the native evaluator has no part in.
func diffEval(nout *evalOutput, nerr error, rout *evalOutput, rerr error) string {
	var be *budgetError
	switch {
	case errors.As(rerr, &be):
		return ""
	case (nerr == nil) != (rerr == nil):
		return fmt.Sprintf("native error %v, Rego error %v", nerr, rerr)
	case nerr != nil:
		if nerr.Error() != rerr.Error() {
			return fmt.Sprintf("native error %q, Rego error %q", nerr, rerr)
		}
		return ""
	}
	n, r := sortedCandidates(nout.Candidates), sortedCandidates(rout.Candidates)
	if !slices.Equal(n, r) {
		return fmt.Sprintf("native candidates %+v, Rego candidates %+v", n, r)
	}
	if len(nout.Findings) != len(rout.Findings) || nout.Malformed != rout.Malformed || nout.Total != rout.Total {
		return fmt.Sprintf("native findings %+v, Rego findings %+v", nout, rout)
	}
	return ""
}

// overBudget: the decision was refused by the Rego evaluation's budget
// (see diffEval).
func overBudget(res Result) bool {
	return slices.ContainsFunc(res.Findings, func(f route.Finding) bool { return f.Code == route.CodePolicyBudgetExceeded })
}

func sortedCandidates(cs []candidate) []candidate {
	cs = slices.Clone(cs)
	slices.SortFunc(cs, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.Layer, b.Layer), cmp.Compare(a.Grant, b.Grant), strings.Compare(a.Principal, b.Principal))
	})
	return cs
}

// A set of POLICY.md alone evaluates natively, with Rego coverage asked or
// not (it traces custom rules); custom modules keep the Rego query. Either
// way `gated policy compile` has the Rego.
func TestEvaluatorChoice(t *testing.T) {
	t.Parallel()
	grants := oneGrant("  - {principal: \"operator://bob\", actions: [{action: \"storage:commit\"}]}\n")
	s := mustLoad(t, nil, grants)
	if name, why := s.Evaluator(); name != EvaluatorNative || why == "" {
		t.Fatalf("grants only: evaluator %s (%s), want native", name, why)
	}
	if !strings.Contains(s.GrantsRego(), "candidates contains") {
		t.Fatalf("the Rego of a native set is not generated:\n%s", s.GrantsRego())
	}
	in := input("storage:commit", "operator://bob")
	if _, decided, err := s.evalNative(context.Background(), in, s.native); !decided || err != nil {
		t.Fatalf("the native evaluator did not decide (%v, %v)", decided, err)
	}
	assertOutcome(t, s, in, route.Accept)

	withModule := map[string]string{"rules/x.rego": "package gated.custom\n\nfindings contains {\"code\": \"x\", \"route\": \"accept\", \"blocking\": false, \"message\": \"\"} if false\n"}
	for k, v := range grants {
		withModule[k] = v
	}
	if name, why := mustLoad(t, nil, withModule).Evaluator(); name != EvaluatorRego || !strings.Contains(why, "custom Rego") {
		t.Fatalf("with a custom module: evaluator %s (%s), want rego", name, why)
	}
	traced, err := Load([]string{writeDir(t, grants)}, nil, WithRegoCoverage(NewRegoCoverage()))
	if err != nil {
		t.Fatal(err)
	}
	if name, _ := traced.Evaluator(); name != EvaluatorNative {
		t.Fatalf("with coverage traced (custom rules only): evaluator %s, want native", name)
	}
}

// A condition the Rego builtins would fail on (which the load's checks
// never let through: here the document skips them) is left to the Rego
// evaluation, for the decisions that match its grant.
func TestNativeLeavesUnloadableConditionsToRego(t *testing.T) {
	t.Parallel()
	d := &Document{File: "POLICY.md", ID: "@acme/team", Default: "deny", Grants: []Grant{
		{Principal: "x", Actions: []ActionGrant{{Action: "a:tz"}}, Conditions: []Condition{{Kind: condBusinessHours, Timezone: "utc", endMin: 24 * 60, weekdays: []string{"Monday"}}}},
		{Principal: "x", Actions: []ActionGrant{{Action: "a:cidr"}}, Conditions: []Condition{{Kind: condIPRange, CIDR: "1.2.3.4/+8"}}},
		{Principal: "x", Actions: []ActionGrant{{Action: "a:fine"}}},
	}}
	s := &Set{docs: []*Document{d}, byID: map[string]*Document{d.ID: d}, budget: time.Minute, steps: DefaultEvalSteps, memory: DefaultEvalMemory}
	if errs := s.compileRules(nil); len(errs) > 0 {
		t.Fatal(errs)
	}
	var native *nativeGrants
	s.grantsModule, native, _ = generateGrants(s.docs, nil)
	if errs := s.prepare(nil); len(errs) > 0 {
		t.Fatal(errs)
	}
	s.chooseEvaluator(native)
	for action, leftToRego := range map[string]bool{"a:tz": true, "a:cidr": true, "a:fine": false} {
		in := input(action, "x")
		in.ClientIP = netip.MustParseAddr("1.2.3.4")
		if _, decided, _ := s.evalNative(context.Background(), in, s.native); decided == leftToRego {
			t.Errorf("%s: the native evaluator decided: %v, want %v", action, decided, !leftToRego)
		}
		native, rego := s.evaluate(context.Background(), in, s.native), s.evaluate(context.Background(), in, nil)
		if !reflect.DeepEqual(native, rego) {
			t.Errorf("%s: native %+v, Rego %+v", action, native, rego)
		}
		if leftToRego && !slices.Equal(route.Combine(native.Findings).HardBlockers, []string{route.CodePolicyEvaluationError}) {
			t.Errorf("%s: %+v, want the Rego's evaluation error", action, native.Findings)
		}
	}
}

// The native evaluator leaves to Rego what Rego fails on, so a decision
// refuses with the same words either way.
func TestNativeLeavesFailuresToRego(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, oneGrant("  - {principal: \"*\", actions: [{action: \"a:b\"}], conditions: [{kind: ip-range, cidr: 10.0.0.0/8}]}\n"))
	for name, in := range map[string]Input{
		"an argument that is no number": func() Input {
			in := input("a:b", "x")
			in.Event.ProposedArguments = map[string]any{"n": json.Number("1e999")}
			return in
		}(),
		"a NaN freshness": func() Input {
			in := input("a:b", "x")
			nan := math.NaN()
			in.Event.EvidenceRefs = []route.EvidenceRef{{Kind: "note", Freshness: route.Freshness{Status: "fresh", AgeHours: &nan}}}
			return in
		}(),
		"an action view JSON cannot encode": func() Input {
			in := input("a:b", "x")
			in.Action = map[string]any{"c": make(chan int)}
			return in
		}(),
		"a zoned client address": func() Input {
			in := input("a:b", "x")
			in.ClientIP = netip.MustParseAddr("fe80::1%eth0")
			return in
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			native := s.evaluate(context.Background(), in, s.native)
			rego := s.evaluate(context.Background(), in, nil)
			if !reflect.DeepEqual(native, rego) {
				t.Fatalf("native %+v\nRego %+v", native, rego)
			}
			if o := route.Combine(native.Findings); o.Route != route.Refuse || !slices.Equal(o.HardBlockers, []string{route.CodePolicyEvaluationError}) {
				t.Fatalf("got %s %v, want a refusal naming the evaluation error", o.Route, o.HardBlockers)
			}
		})
	}
}

// shapes turns bytes into a policy and decisions: every grant shape of
// POLICY.md (principal forms, exact, wildcard, registry and unresolved
// action refs, scopes, TTLs, revocation, each condition kind, defaults,
// requirements, limits, several policies) against requests that match
// them or miss, at times in and out of their windows.
type shapes struct {
	data []byte
	i    int
}

func (b *shapes) next() int {
	if b.i >= len(b.data) {
		return 0
	}
	b.i++
	return int(b.data[b.i-1])
}

func pick[T any](b *shapes, options ...T) T { return options[b.next()%len(options)] }

var (
	shapePrincipals = []string{`"*"`, `"operator://a"`, `"operator://b"`, `"bot://x"`, `"user://current"`, `{ref: "@acme/groups/g"}`, `{name: Eve, email: eve@example.com}`}
	shapeActions    = []string{`"storage:commit"`, `"storage:*"`, `"storage:push"`, `"secrets:rotate:*"`, `"*"`, `"kind:verb"`,
		`"@agentik/actions/standard/storage-push"`, `"@agentik/actions/unknown"`, `"storage:read", scope: "repo:x"`}
	shapeConditions = []string{
		`{kind: during-business-hours, timezone: UTC}`,
		`{kind: during-business-hours, timezone: America/New_York, start: "08:30", end: "18:00", days: [mon, tue, sat]}`,
		`{kind: during-business-hours, timezone: Asia/Kolkata, start: "00:00", end: "24:00", days: [sun, saturday]}`,
		`{kind: during-business-hours, timezone: Local}`,
		`{kind: ip-range, cidr: 10.0.0.0/8}`,
		`{kind: ip-range, cidr: "::/0"}`,
		`{kind: ip-range, cidr: "2001:db8::/32"}`,
		`{kind: ip-range, cidr: "::ffff:10.0.0.0/104"}`,
		`{kind: ip-range, cidr: 192.168.1.7/32}`,
		`{kind: mfa-recent, within_seconds: 60}`,
		`{kind: mfa-recent, within_seconds: 9223372036854775807}`,
		`{kind: geo-fence, region: eu}`,
	}
	shapeGrantedAt = []string{"2026-05-04T14:30:00Z", "2026-05-01T00:00:00Z", "1500-01-01T00:00:00Z", "2300-01-01T00:00:00Z"}
	shapeTTLs      = []string{"60", "86400", "9223372036854775807"}
	shapeRefs      = []string{`"storage:*"`, `"secrets:rotate:*"`, `"storage:commit"`, `"*"`}
)

func (b *shapes) policy(n int) string {
	var p strings.Builder
	fmt.Fprintf(&p, "schema: policy/v1\nid: \"@acme/p%d\"\ndefault: %s\ngrants:\n", n, pick(b, "deny", "deny", "deny", "allow"))
	for range 1 + b.next()%6 {
		fmt.Fprintf(&p, "  - principal: %s\n    actions:\n", pick(b, shapePrincipals...))
		for range 1 + b.next()%3 {
			fmt.Fprintf(&p, "      - {action: %s}\n", pick(b, shapeActions...))
		}
		if k := b.next() % 4; k > 0 {
			p.WriteString("    conditions:\n")
			for range k {
				fmt.Fprintf(&p, "      - %s\n", pick(b, shapeConditions...))
			}
		}
		switch b.next() % 4 {
		case 1:
			fmt.Fprintf(&p, "    ttl_seconds: %s\n", pick(b, shapeTTLs...))
		case 2:
			fmt.Fprintf(&p, "    ttl_seconds: %s\n    granted_at: %q\n", pick(b, shapeTTLs...), pick(b, shapeGrantedAt...))
		}
		if b.next()%5 == 0 {
			p.WriteString("    revoked: true\n")
		}
	}
	switch b.next() % 5 {
	case 1:
		fmt.Fprintf(&p, "requirements:\n  - {kind: mfa-recent, within_seconds: 120, applies_to: [%s]}\n", pick(b, shapeRefs...))
	case 2:
		fmt.Fprintf(&p, "requirements:\n  - {kind: approval-from, applies_to: [%s]}\n  - {kind: quorum}\n", pick(b, shapeRefs...))
	case 3:
		fmt.Fprintf(&p, "limits:\n  - {kind: rate-tool-calls, value: 2, per: minute, applies_to: [%s]}\n", pick(b, shapeRefs...))
	}
	return policyMD(p.String())
}

var (
	shapeRequestActions = []string{"storage:commit", "storage:push", "storage:read", "secrets:rotate:api", "secrets:rotate", "kind:verb", "", "other:x"}
	shapeRequestNames   = []string{"operator://a", "operator://b", "operator://c", "bot://x", "user://current", "@acme/groups/g", "*"}
	shapeTimes          = []time.Time{
		t0,                                   // Monday 15:00 UTC
		t0.Add(-12 * time.Hour),              // Monday 03:00 UTC
		t0.Add(5*24*time.Hour - 3*time.Hour), // Saturday 12:00 UTC
		time.Date(2026, 5, 4, 14, 30, 59, 999999999, time.UTC),
		time.Date(2026, 5, 4, 14, 31, 0, 0, time.UTC),
		time.Date(2026, 5, 4, 14, 29, 59, 0, time.UTC),
		time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC),
		// The edges of the business-hours windows above.
		t0.Add(2 * time.Hour),                    // 17:00 UTC, the default end
		t0.Add(2*time.Hour - time.Nanosecond),    // just before it
		t0.Add(-6 * time.Hour),                   // 09:00 UTC, the default start
		t0.Add(7 * time.Hour),                    // 18:00 in New York
		t0.Add(-150 * time.Minute),               // 08:30 in New York
		t0.Add(5*24*time.Hour + 210*time.Minute), // Sunday 00:00 in Kolkata
	}
	shapeIPs = []netip.Addr{{}, netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("::ffff:10.1.2.3"),
		netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("192.168.1.7"), netip.MustParseAddr("fe80::1%eth0")}
	shapeApprovalRefs = []string{"", "", "policy:@acme/p0", "policy:p1", "policy:nowhere"}
)

func (b *shapes) input() Input {
	in := input(pick(b, shapeRequestActions...))
	for range b.next() % 4 {
		in.Principals = append(in.Principals, pick(b, shapeRequestNames...))
	}
	in.Now = pick(b, shapeTimes...)
	in.ClientIP = pick(b, shapeIPs...)
	in.ApprovalPolicyRef = pick(b, shapeApprovalRefs...)
	for range b.next() % 3 {
		ref := route.EvidenceRef{Kind: pick(b, "auth_event", "auth_event", "approval"), TrustTier: pick(b, "verified", "verified", "unverified")}
		ref.RetrievedAt = pick(b, in.Now.Add(-30*time.Second), in.Now.Add(-time.Hour), in.Now.Add(time.Minute), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)).Format(time.RFC3339Nano)
		in.Event.EvidenceRefs = append(in.Event.EvidenceRefs, ref)
	}
	switch b.next() % 8 {
	case 1:
		in.Event.ProposedArguments = map[string]any{"n": json.Number("12"), "s": []any{"x", 1.5, nil, true}}
	case 2:
		in.Event.ProposedArguments = map[string]any{"n": json.Number("1e999")}
	case 3:
		in.Action = &benchAction{ActionID: in.ActionID}
	}
	return in
}

var shapeResolver = fakeResolver{"@agentik/actions/standard/storage-push": "storage:push", "storage:commit": "storage:commit"}

// checkShapes loads the policies data describes and decides its requests
// both ways; it reports whether the set loaded and how many decisions the
// native evaluator made itself.
func checkShapes(t *testing.T, data []byte) (loaded bool, native int) {
	b := &shapes{data: data}
	files := map[string]string{}
	for n := range 1 + b.next()%3 {
		files[fmt.Sprintf("p%d/POLICY.md", n)] = b.policy(n)
	}
	s, err := Load([]string{writeDir(t, files)}, shapeResolver, WithEvalBudget(time.Minute))
	if err != nil {
		return false, 0
	}
	if name, why := s.Evaluator(); name != EvaluatorNative {
		t.Fatalf("evaluator %s (%s) for POLICY.md alone", name, why)
	}
	ctx := context.Background()
	nativeLimiter, regoLimiter := NewLimiter(), NewLimiter()
	for range 8 {
		in := b.input()
		// The candidates at every instant of shapeTimes, windows' edges
		// included.
		for _, now := range shapeTimes {
			at := in
			at.Now = now
			nout, decided, nerr := s.evalNative(ctx, at, s.native)
			if !decided {
				continue
			}
			native++
			rout, rerr := s.evalRego(ctx, at)
			if d := diffEval(nout, nerr, rout, rerr); d != "" {
				t.Fatalf("%s\n%+v: %s", strings.Join(slices.Collect(maps.Values(files)), "\n"), at, d)
			}
		}
		// The whole decision too, requirements and limits included,
		// each path with its own limiter.
		nin, rin := in, in
		nin.Limiter, rin.Limiter = nativeLimiter, regoLimiter
		if nres, rres := s.evaluate(ctx, nin, s.native), s.evaluate(ctx, rin, nil); !overBudget(rres) && !reflect.DeepEqual(nres, rres) {
			t.Fatalf("%v\n%+v:\nnative %+v %+v\nRego   %+v %+v", files, in, nres, nres.Block, rres, rres.Block)
		}
	}
	return true, native
}

// FuzzNativeMatchesRego: for any policy of POLICY.md grants and any
// request, the native evaluator and the Rego query find the same
// candidates, or fail alike, and decide alike.
func FuzzNativeMatchesRego(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 1, 1, 0, 0, 0})
	f.Add([]byte{1, 0, 3, 5, 2, 1, 3, 4, 9, 2, 2, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte("native and rego agree on every grant shape"))
	f.Fuzz(func(t *testing.T, data []byte) { checkShapes(t, data) })
}

// TestNativeMatchesRegoGenerated runs FuzzNativeMatchesRego's check over
// a fixed set of generated policies, so every test run covers them.
func TestNativeMatchesRegoGenerated(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(38, 30))
	loaded, decided := 0, 0
	for range 150 {
		data := make([]byte, 96)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		ok, n := checkShapes(t, data)
		if ok {
			loaded++
		}
		decided += n
	}
	// Most generated policies load (a few shapes are load errors on
	// purpose), and most decisions are the native evaluator's own.
	if loaded < 140 || decided < loaded*len(shapeTimes)*6 {
		t.Fatalf("%d of 150 policies loaded, %d decisions were native: the generator no longer covers the shapes", loaded, decided)
	}
}

// The edges of each grant shape decide as AIP-38 says, on the native path
// (which TestMain holds to the Rego's): windows are [from, until), time
// saturates at what int64 nanoseconds hold, and MFA ages are exact.
func TestGrantEdges(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, oneGrant(`  - {principal: a, actions: [{action: "mfa:huge"}], conditions: [{kind: mfa-recent, within_seconds: 9223372036854775807}]}
  - {principal: a, actions: [{action: "hours:utc"}], conditions: [{kind: during-business-hours, timezone: UTC}]}
  - {principal: a, actions: [{action: "ttl:minute"}], ttl_seconds: 60, granted_at: "2026-05-04T14:30:00Z"}
  - {principal: a, actions: [{action: "ttl:forever"}], ttl_seconds: 9223372036854775807, granted_at: "2026-05-01T00:00:00Z"}
  - {principal: a, actions: [{action: "ip:mapped"}], conditions: [{kind: ip-range, cidr: "::ffff:10.0.0.0/104"}]}
`))
	if name, _ := s.Evaluator(); name != EvaluatorNative {
		t.Fatalf("evaluator %s, want native", name)
	}
	auth := func(at time.Time) []route.EvidenceRef {
		return []route.EvidenceRef{{Kind: "auth_event", TrustTier: "verified", RetrievedAt: at.Format(time.RFC3339Nano)}}
	}
	for _, c := range []struct {
		why     string
		action  string
		now     time.Time
		auth    []route.EvidenceRef
		ip      netip.Addr
		blocker string // "" for allowed
	}{
		{"an MFA 30 s old is within any window", "mfa:huge", t0, auth(t0.Add(-30 * time.Second)), netip.Addr{}, ""},
		{"an MFA from year 1 is older than int64 nanoseconds reach", "mfa:huge", t0, auth(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)), netip.Addr{}, route.CodePolicyConditionFailed},
		{"an MFA after now does not count", "mfa:huge", t0, auth(t0.Add(time.Nanosecond)), netip.Addr{}, route.CodePolicyConditionFailed},
		{"business hours start at 09:00", "hours:utc", t0.Add(-6 * time.Hour), nil, netip.Addr{}, ""},
		{"and hold until just before 17:00", "hours:utc", t0.Add(2*time.Hour - time.Nanosecond), nil, netip.Addr{}, ""},
		{"not at 17:00", "hours:utc", t0.Add(2 * time.Hour), nil, netip.Addr{}, route.CodePolicyConditionFailed},
		{"nor at 08:59", "hours:utc", t0.Add(-6*time.Hour - time.Minute), nil, netip.Addr{}, route.CodePolicyConditionFailed},
		{"a TTL starts at granted_at", "ttl:minute", time.Date(2026, 5, 4, 14, 30, 0, 0, time.UTC), nil, netip.Addr{}, ""},
		{"and ends just before its last second", "ttl:minute", time.Date(2026, 5, 4, 14, 30, 59, 999999999, time.UTC), nil, netip.Addr{}, ""},
		{"not at it", "ttl:minute", time.Date(2026, 5, 4, 14, 31, 0, 0, time.UTC), nil, netip.Addr{}, route.CodePolicyTTLExpired},
		{"nor before granted_at", "ttl:minute", time.Date(2026, 5, 4, 14, 29, 59, 999999999, time.UTC), nil, netip.Addr{}, route.CodePolicyTTLExpired},
		{"a TTL past int64 nanoseconds ends where they do", "ttl:forever", time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC), nil, netip.Addr{}, route.CodePolicyTTLExpired},
		{"and holds until then", "ttl:forever", t0, nil, netip.Addr{}, ""},
		{"an IPv4-mapped range holds IPv4 clients, as net.cidr_contains reads it", "ip:mapped", t0, nil, netip.MustParseAddr("10.1.2.3"), ""},
		{"and not others", "ip:mapped", t0, nil, netip.MustParseAddr("11.1.2.3"), route.CodePolicyConditionFailed},
		{"nor a request without an address", "ip:mapped", t0, nil, netip.Addr{}, route.CodePolicyConditionFailed},
	} {
		in := input(c.action, "a")
		in.Now, in.ClientIP, in.Event.EvidenceRefs = c.now, c.ip, c.auth
		want, blockers := route.Accept, []string(nil)
		if c.blocker != "" {
			want, blockers = route.Refuse, []string{c.blocker}
		}
		t.Run(c.why, func(t *testing.T) { assertOutcome(t, s, in, want, blockers...) })
	}
}

// The shipped example policies (their POLICY.md files: the custom module
// beside them would keep them on Rego) decide alike both ways, for each
// principal and action they name and a stranger, at times in and out of
// their windows, with and without MFA and approvals.
func TestNativeMatchesRegoOnExamples(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for _, name := range []string{"POLICY.md", "devops.POLICY.md", "production-deploys.POLICY.md"} {
		raw, err := os.ReadFile("../../examples/policy/" + name)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(raw)
	}
	cat, err := catalog.Load([]string{"../../examples/catalog"})
	if err != nil {
		t.Fatal(err)
	}
	s := mustLoad(t, cat, files)
	if name, why := s.Evaluator(); name != EvaluatorNative {
		t.Fatalf("evaluator %s (%s), want native", name, why)
	}
	principals, actions := []string{"operator://stranger"}, []string{"", "unknown:action"}
	var times []time.Time
	for _, d := range s.docs {
		for _, g := range d.Grants {
			principals = append(principals, g.Principal)
			for _, a := range g.Actions {
				p, _ := resolve(a.Action, cat)
				actions = append(actions, p.exact, p.prefix+"x")
			}
			if g.GrantedAt != nil {
				end := g.GrantedAt.Add(time.Duration(g.TTLSeconds) * time.Second)
				times = append(times, *g.GrantedAt, g.GrantedAt.Add(-time.Nanosecond), end, end.Add(-time.Nanosecond))
			}
		}
	}
	times = append(times, t0, t0.Add(-12*time.Hour), t0.Add(5*24*time.Hour))
	ctx := context.Background()
	decided := 0
	for _, action := range actions {
		for _, p := range principals {
			for _, now := range times {
				for _, refs := range [][]route.EvidenceRef{nil, {
					{Kind: "auth_event", TrustTier: "verified", RetrievedAt: now.Add(-time.Minute).Format(time.RFC3339Nano)},
					{Kind: "approval", TrustTier: "verified"},
				}} {
					in := input(action, p)
					in.Now, in.Event.EvidenceRefs = now, refs
					if nout, ok, nerr := s.evalNative(ctx, in, s.native); ok {
						decided++
						rout, rerr := s.evalRego(ctx, in)
						if d := diffEval(nout, nerr, rout, rerr); d != "" {
							t.Fatalf("%s %s at %s: %s", action, p, now, d)
						}
					}
					nin, rin := in, in
					rin.Limiter = NewLimiter()
					if nres, rres := s.evaluate(ctx, nin, s.native), s.evaluate(ctx, rin, nil); !overBudget(rres) && !reflect.DeepEqual(nres, rres) {
						t.Fatalf("%s %s at %s:\nnative %+v %+v\nRego   %+v %+v", action, p, now, nres, nres.Block, rres, rres.Block)
					}
				}
			}
		}
	}
	if decided == 0 {
		t.Fatal("the native evaluator decided nothing")
	}
}
