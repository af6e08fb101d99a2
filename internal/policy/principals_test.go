package policy

import (
	"slices"
	"testing"

	"github.com/gatedhq/gated/internal/route"
)

func TestPrincipalsTrustRule(t *testing.T) {
	t.Parallel()
	ev := func(state route.AuthState) *route.Event {
		return &route.Event{AgentID: "support-bot", AuthorizationState: state,
			AuthorizationSubject: &route.Subject{SubjectType: "user", SubjectRef: "u-42"}}
	}
	type principalCase struct {
		name  string
		token []string
		trust bool
		ev    *route.Event
		want  []string
	}
	cases := []principalCase{
		{"untrusted event adds nothing", []string{"operator://ci"}, false, ev(route.AuthConfirmed), []string{"operator://ci"}},
		{"trusted, authenticated", []string{"operator://ci"}, true, ev(route.AuthAuthenticated),
			[]string{"operator://ci", "bot://support-bot", "user://u-42", "user://current"}},
		{"trusted, only user_claimed", nil, true, ev(route.AuthUserClaimed), []string{"bot://support-bot"}},
		{"duplicates and blanks dropped", []string{"bot://support-bot", "", "bot://support-bot"}, true, ev(route.AuthNone), []string{"bot://support-bot"}},
		{"no subject", nil, true, &route.Event{AuthorizationState: route.AuthConfirmed}, nil},
		{"no event", []string{"a"}, true, nil, []string{"a"}},
	}
	subject := func(typ string) *route.Event {
		return &route.Event{AuthorizationState: route.AuthAuthenticated, AuthorizationSubject: &route.Subject{SubjectType: typ, SubjectRef: "alice"}}
	}
	// A subject's ref is scoped to its type: only a person is user://.
	for _, typ := range []string{"user", "employee", "student", "patient"} {
		cases = append(cases, principalCase{"person " + typ, nil, true, subject(typ), []string{"user://alice", "user://current"}})
	}
	for _, typ := range []string{"account", "client", "service", "case"} {
		cases = append(cases, principalCase{"entity " + typ, nil, true, subject(typ), []string{typ + "://alice"}})
	}
	for _, typ := range []string{"unknown", "", "group", "User"} {
		cases = append(cases, principalCase{"no principal for type " + typ, []string{"operator://ci"}, true, subject(typ), []string{"operator://ci"}})
	}
	for _, c := range cases {
		if got := Principals(c.token, c.trust, c.ev); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// An agent that writes a granted name into its own event gains nothing
// unless its token is trusted for event principals.
func TestEventClaimsNeedTrust(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, nil, oneGrant("  - {principal: \"user://current\", actions: [{action: \"storage:read\"}]}\n  - {principal: \"bot://admin\", actions: [{action: \"secrets:reveal\"}]}\n"))
	ev := &route.Event{AgentID: "admin", AuthorizationState: route.AuthAuthenticated, AuthorizationSubject: &route.Subject{SubjectType: "user", SubjectRef: "u-1"}}
	for _, trust := range []bool{false, true} {
		want := route.Refuse
		if trust {
			want = route.Accept
		}
		for _, action := range []string{"storage:read", "secrets:reveal"} {
			in := input(action)
			in.Event, in.Principals = ev, Principals([]string{"operator://agent-token"}, trust, ev)
			if got, _, _ := outcome(t, s, in); got != want {
				t.Errorf("trust=%v %s: got %s, want %s", trust, action, got, want)
			}
		}
	}
}
