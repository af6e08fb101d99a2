package policy

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	keyed "github.com/gatedhq/gated/internal/limit"
	"github.com/gatedhq/gated/internal/route"
)

func limitedSet(t *testing.T) *Set {
	t.Helper()
	return mustLoad(t, nil, map[string]string{"POLICY.md": policyMD(`schema: policy/v1
id: "@acme/open"
grants:
  - {principal: "*", actions: [{action: "storage:commit"}]}
limits:
  - {kind: rate-tool-calls, value: 2, per: minute}
`)})
}

// openCall is a call of a gated running without tokens: the event's own
// agent_id counts as a principal, and only the client address is known.
func openCall(lim *Limiter, agent, client string) Input {
	ev := baseEvent()
	ev.AgentID = agent
	return Input{Event: ev, Category: route.Write, ActionID: "storage:commit",
		Principals: Principals(nil, true, ev), ClientIP: netip.MustParseAddr(client), Now: t0, Limiter: lim}
}

// Running open, a caller who writes a new agent_id into every event still
// spends one budget: its client address's.
func TestRateLimitIgnoresRotatedAgentID(t *testing.T) {
	t.Parallel()
	s, lim := limitedSet(t), NewLimiter()
	assertOutcome(t, s, openCall(lim, "agent-1", "192.0.2.7"), route.Accept)
	assertOutcome(t, s, openCall(lim, "agent-2", "192.0.2.7"), route.Accept)
	for i := 3; i <= 6; i++ {
		assertOutcome(t, s, openCall(lim, fmt.Sprintf("agent-%d", i), "192.0.2.7"), route.Defer, route.CodePolicyLimitExceeded)
	}
	// Another client has a budget of its own.
	assertOutcome(t, s, openCall(lim, "agent-1", "192.0.2.8"), route.Accept)
	// Rotating the low bits of an IPv6 address does not help either: a
	// host usually holds a whole /64.
	assertOutcome(t, s, openCall(lim, "a", "2001:db8:1:2::1"), route.Accept)
	assertOutcome(t, s, openCall(lim, "b", "2001:db8:1:2::2"), route.Accept)
	assertOutcome(t, s, openCall(lim, "c", "2001:db8:1:2:ffff::3"), route.Defer, route.CodePolicyLimitExceeded)
	assertOutcome(t, s, openCall(lim, "c", "2001:db8:1:3::3"), route.Accept)
	// An IPv4 client seen through an IPv4-mapped IPv6 address is the same client.
	assertOutcome(t, s, openCall(lim, "d", "::ffff:192.0.2.7"), route.Defer, route.CodePolicyLimitExceeded)
}

// With tokens the token is the caller: rotating agent_id (a token that
// vouches for event principals) or the client address does not reset it,
// and two tokens do not share a budget unless they share a principal.
func TestRateLimitKeyedByToken(t *testing.T) {
	t.Parallel()
	s, lim := limitedSet(t), NewLimiter()
	call := func(token, agent, client string, tokenPrincipals ...string) Input {
		in := openCall(lim, agent, client)
		in.TokenName = token
		in.Principals = Principals(tokenPrincipals, true, in.Event)
		return in
	}
	assertOutcome(t, s, call("runtime-a", "x1", "192.0.2.1"), route.Accept)
	assertOutcome(t, s, call("runtime-a", "x2", "192.0.2.2"), route.Accept)
	assertOutcome(t, s, call("runtime-a", "x3", "192.0.2.3"), route.Defer, route.CodePolicyLimitExceeded)
	assertOutcome(t, s, call("runtime-b", "x3", "192.0.2.3"), route.Accept)

	// A principal the operator put into two tokens is one budget, as before.
	assertOutcome(t, s, call("ops-1", "", "192.0.2.9", "group://ops"), route.Accept)
	assertOutcome(t, s, call("ops-2", "", "192.0.2.9", "group://ops"), route.Accept)
	assertOutcome(t, s, call("ops-3", "", "192.0.2.9", "group://ops"), route.Defer, route.CodePolicyLimitExceeded)
}

// The limiter's memory is bounded whoever calls: past its bucket cap a new
// caller is deferred (never let through unlimited) until idle buckets
// expire, while callers it already tracks go on as before.
func TestLimiterBucketCap(t *testing.T) {
	t.Parallel()
	// Three callers: an open call's agent_id keys no bucket of its own.
	s, lim := limitedSet(t), newLimiterCap(3)
	for _, c := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
		assertOutcome(t, s, openCall(lim, "a", c), route.Accept)
	}
	res := assertOutcome(t, s, openCall(lim, "a", "192.0.2.4"), route.Defer, route.CodePolicyLimitExceeded)
	if msg := res.Findings[0].Message; !strings.Contains(msg, "rate buckets already") {
		t.Fatalf("message %q", msg)
	}
	assertOutcome(t, s, openCall(lim, "b", "192.0.2.1"), route.Accept)
	if lim.keys.(*keyed.Keyed).Len() != 3 {
		t.Fatalf("%d buckets, want 3", lim.keys.(*keyed.Keyed).Len())
	}
	// A period later the idle buckets are gone and the new caller is served.
	later := openCall(lim, "a", "192.0.2.4")
	later.Now = t0.Add(2 * time.Minute)
	assertOutcome(t, s, later, route.Accept)
}

// A call counted already (the first pass of the same decision) spends
// nothing, and says so; one not yet counted spends and says it did.
func TestRateLimitCountsACallOnce(t *testing.T) {
	t.Parallel()
	s, lim := limitedSet(t), NewLimiter()
	first := openCall(lim, "a", "192.0.2.7")
	if res := s.Evaluate(t.Context(), first); !res.Counted {
		t.Fatal("a call evaluated under a limit is not reported counted")
	}
	again := openCall(lim, "a", "192.0.2.7")
	again.Counted = true
	for range 3 {
		if res := s.Evaluate(t.Context(), again); res.Counted || len(res.Findings) != 0 {
			t.Fatalf("a counted call is counted again: %+v", res)
		}
	}
	assertOutcome(t, s, openCall(lim, "a", "192.0.2.7"), route.Accept)
	assertOutcome(t, s, openCall(lim, "a", "192.0.2.7"), route.Defer, route.CodePolicyLimitExceeded)
}
