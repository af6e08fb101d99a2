package server

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Hosts says which names a request's Host, and its Origin when present,
// may carry. A gated on loopback without tokens answers any page the user
// opens: a page whose own name resolves to 127.0.0.1 (DNS rebinding) talks
// to gated as if same-origin, and its requests name its own host. Checking
// the names refuses them.
type Hosts struct {
	// Enforce turns the check on: gated's CLI sets it for a loopback
	// listener, and for any listener given allowed hosts.
	Enforce bool
	// Allowed are further host names or addresses (no port), matched
	// case-insensitively; loopback names and addresses are always allowed.
	Allowed []string
}

// allows reports whether host (a Host header or an Origin's host, with or
// without a port) is a loopback name or address or an allowed name.
func (h Hosts) allows(host string) bool {
	name := host
	if n, _, err := net.SplitHostPort(host); err == nil {
		name = n
	}
	name = strings.TrimSuffix(strings.ToLower(strings.Trim(name, "[]")), ".")
	if name == "" {
		return false
	}
	for _, allowed := range h.Allowed {
		if strings.EqualFold(name, strings.Trim(allowed, "[]")) {
			return true
		}
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true // RFC 6761: these names always resolve to loopback
	}
	a, err := netip.ParseAddr(name)
	return err == nil && a.Unmap().IsLoopback()
}

// check returns why r may not be served, or "" when it may.
func (h Hosts) check(r *http.Request) string {
	if !h.Enforce {
		return ""
	}
	if !h.allows(r.Host) {
		return "forbidden host: gated answers only requests addressed to a loopback name or an allowed host (--allowed-hosts)"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !h.allows(u.Host) {
		return "forbidden origin: gated answers no cross-site requests; the Origin must be a loopback name or an allowed host"
	}
	return ""
}

// hostGuard refuses requests whose Host or Origin h does not allow.
func hostGuard(h Hosts, fail failWriter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if !h.Enforce {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if why := h.check(r); why != "" {
				fail(w, http.StatusForbidden, why)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// GuardHosts serves next only to requests h allows (for listeners outside
// the main surface, such as --metrics-addr).
func GuardHosts(h Hosts, next http.Handler) http.Handler { return hostGuard(h, writeError)(next) }
