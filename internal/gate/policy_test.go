package gate

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
)

func policyEngine(t *testing.T) *Engine {
	t.Helper()
	c := exampleCatalog(t)
	ps, err := policy.Load([]string{"testdata/policy"}, c)
	if err != nil {
		t.Fatal(err)
	}
	return New(WithClock(func() time.Time { return fixedNow }),
		WithCatalog(func() *catalog.Catalog { return c }, UnknownDefer, catalog.ArgumentsEnforce),
		WithPolicy(func() *policy.Set { return ps }, policy.NewLimiter()))
}

func TestPolicyGrantsByAuthenticatedPrincipal(t *testing.T) {
	t.Parallel()
	e := policyEngine(t)
	d := e.Decide(context.Background(), Request{Event: decode(t, []byte(confirmedEmail)), Principals: []string{"bot://support-agent"}})
	if d.Route != route.Accept || d.Policy == nil || d.Policy.Decision != "allow" || d.Revisions.Policy == "" {
		t.Fatalf("route %s blockers %v policy %+v revisions %+v", d.Route, d.HardBlockers, d.Policy, d.Revisions)
	}
	d = e.Decide(context.Background(), Request{Event: decode(t, []byte(confirmedEmail)), Principals: []string{"bot://other"}})
	if d.Route != route.Refuse || !slices.Contains(d.HardBlockers, "policy_no_grant") {
		t.Fatalf("route %s blockers %v", d.Route, d.HardBlockers)
	}
}

// An agent must not gain a grant by writing a name into its own event: the
// event's agent_id counts only when the token vouches for it.
func TestPolicyEventPrincipalsNeedTrust(t *testing.T) {
	t.Parallel()
	e := policyEngine(t)
	ev := decode(t, []byte(confirmedEmail))
	ev["agent_id"] = "support-agent"
	d := e.Decide(context.Background(), Request{Event: ev, Principals: []string{"bot://other"}})
	if d.Route != route.Refuse || !slices.Contains(d.HardBlockers, "policy_no_grant") {
		t.Fatalf("untrusted event principal: route %s blockers %v", d.Route, d.HardBlockers)
	}
	d = e.Decide(context.Background(), Request{Event: ev, TrustEventPrincipals: true})
	if d.Route != route.Accept {
		t.Fatalf("trusted event principal: route %s blockers %v", d.Route, d.HardBlockers)
	}
}
