package policy

import "github.com/gatedhq/gated/internal/route"

// Principals computes who a request acts for. The bearer token's principals
// always count. The event's own claims — bot://<agent_id>, and
// user://<subject_ref> plus user://current when authorization_state is
// authenticated or higher — count only when trustEvent (the token has
// trust_event_principals, or gated runs without tokens): otherwise an agent
// could gain grants by writing a name into its own event.
func Principals(tokenPrincipals []string, trustEvent bool, ev *route.Event) []string {
	var out []string
	add := func(p string) {
		for _, q := range out {
			if q == p {
				return
			}
		}
		out = append(out, p)
	}
	for _, p := range tokenPrincipals {
		if p != "" {
			add(p)
		}
	}
	if !trustEvent || ev == nil {
		return out
	}
	if ev.AgentID != "" {
		add("bot://" + ev.AgentID)
	}
	if s := ev.AuthorizationSubject; s != nil && s.SubjectRef != "" && ev.AuthorizationState >= route.AuthAuthenticated {
		add("user://" + s.SubjectRef)
		add("user://current")
	}
	return out
}
