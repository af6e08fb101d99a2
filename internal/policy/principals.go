package policy

import "github.com/gatedhq/gated/internal/route"

// Principals computes who a request acts for. The bearer token's principals
// always count. The event's own claims — bot://<agent_id>, and its
// authorization subject when authorization_state is authenticated or
// higher — count only when trustEvent (the token has
// trust_event_principals, or gated runs without tokens): otherwise an agent
// could gain grants by writing a name into its own event. A subject's ref
// is scoped to its type (subjectPrincipals), so a service named alice is
// never the person alice.
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
		for _, p := range subjectPrincipals(s) {
			add(p)
		}
	}
	return out
}

// personTypes are the contract's subject types that name a person: the
// person is user://<ref>, and the person the request acts for,
// user://current.
var personTypes = map[string]bool{"user": true, "employee": true, "student": true, "patient": true}

// entityTypes are the contract's subject types that name something other
// than a person, each a principal scheme of its own: <type>://<ref>.
var entityTypes = map[string]bool{"account": true, "client": true, "service": true, "case": true}

// subjectPrincipals is the principals an authorization subject stands for.
// A subject of type unknown, of a type outside the contract's enum, or of
// no type is none: gated cannot tell whom it names.
func subjectPrincipals(s *route.Subject) []string {
	switch {
	case personTypes[s.SubjectType]:
		return []string{"user://" + s.SubjectRef, "user://current"}
	case entityTypes[s.SubjectType]:
		return []string{s.SubjectType + "://" + s.SubjectRef}
	}
	return nil
}
