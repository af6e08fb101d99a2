package gate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/route"
)

// An approval is bound to the subject the call acts for, as it is to the
// agent: a runtime whose token vouches for its events' subjects (a gateway
// serving many people) must not spend the approval a person gave alice's
// call on bob's identical one, by its ref or by its digest.
func TestApprovalBindsTheAuthorizationSubject(t *testing.T) {
	t.Parallel()
	f := newApprovals(t, "")
	of := func(subject string) map[string]any {
		return event(t, strings.Replace(refundEvent, `"agent_id":"agent-7",`,
			`"agent_id":"agent-7","authorization_subject":{"subject_type":"user","subject_ref":"`+subject+`"},`, 1))
	}
	gateway := runtimeA
	gateway.TrustEventPrincipals = true

	ask := f.decide(t, gateway, of("alice"))
	p := askedWith(t, ask)
	if _, err := f.store.Decide(context.Background(), p, alice, true, "for alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	refusedWith(t, f.decide(t, gateway, withRef(of("bob"), refOf(t, ask.Approval))), route.CodeApprovalDigestMismatch)
	askedWith(t, f.decide(t, byDigest(gateway), of("bob")), p)
	if ok := f.decide(t, gateway, withRef(of("alice"), refOf(t, ask.Approval))); ok.Route != route.Accept || ok.ApprovalID != p {
		t.Fatalf("alice's retry: route %s blockers %v approval %q", ok.Route, ok.HardBlockers, ok.ApprovalID)
	}
}
