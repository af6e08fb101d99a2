package policy

import (
	"net/netip"
	"strings"

	"github.com/gatedhq/gated/internal/route"
)

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

// ClientIP is the address ip-range conditions check: the peer address,
// unless the peer is a trusted proxy, in which case X-Forwarded-For is read
// right to left and the first hop that is not a trusted proxy wins. An
// unparseable hop stops the walk at the last address known to be genuine.
func ClientIP(remoteAddr string, forwardedFor []string, trusted []netip.Prefix) netip.Addr {
	addr := parseHost(remoteAddr)
	var hops []string
	for _, h := range forwardedFor {
		hops = append(hops, strings.Split(h, ",")...)
	}
	for i := len(hops) - 1; i >= 0 && isTrusted(addr, trusted); i-- {
		next := parseHost(strings.TrimSpace(hops[i]))
		if !next.IsValid() {
			break
		}
		addr = next
	}
	return addr
}

func parseHost(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if a.IsValid() && p.Contains(a) {
			return true
		}
	}
	return false
}
