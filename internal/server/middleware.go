package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/redact"
)

type ctxKey int

const tokenKey ctxKey = iota

// tokenFrom returns the token that authenticated the request, nil when open.
func tokenFrom(ctx context.Context) *auth.Token {
	t, _ := ctx.Value(tokenKey).(*auth.Token)
	return t
}

// failWriter answers a request the middleware stops: writeError for the
// API, a 2xx deny for hooks (whose runtimes run the tool on any non-2xx).
type failWriter func(w http.ResponseWriter, status int, msg string)

// anyScope, given to authenticate, takes any valid token: the handler
// decides what the token may see.
const anyScope = ""

// authenticate requires a bearer token holding scope (anyScope: any
// token) when tokens are configured. The reference's X-AANA-Token header
// is accepted too.
//
// Failed attempts are counted per client address in failures. Once an
// address has spent its budget every attempt from it is answered 429,
// including one whose token is valid: answering a right guess differently
// would let brute force go on at line rate, learning from the answers.
func authenticate(d *Deps, failures *limiter, scope string, fail failWriter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if d.Tokens == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t, ok := d.Tokens.Verify(bearer(r))
			if failures != nil {
				key, now := failureKey(clientIP(r, d.TrustedProxies)), time.Now()
				var allowed bool
				var wait time.Duration
				var err error
				if ok {
					// A valid token spends nothing, but waits like a guess.
					var limited bool
					limited, wait, err = failures.blocked(r.Context(), key, now)
					allowed = !limited
				} else {
					// A failure takes from the budget atomically, so
					// concurrent guesses cannot overdraw it.
					allowed, wait, err = failures.allow(r.Context(), key, 1, now)
				}
				if err != nil {
					limitUnavailable(w, fail)
					return
				}
				if !allowed {
					secs := retryAfterSeconds(wait)
					w.Header().Set("Retry-After", strconv.Itoa(secs))
					fail(w, http.StatusTooManyRequests, fmt.Sprintf(
						"too many failed authentication attempts from this address (at most %d a minute); try again in %v",
						failures.perMinute, time.Duration(secs)*time.Second))
					return
				}
			}
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="gated"`)
				fail(w, http.StatusUnauthorized, "unauthorized: a valid bearer token is required")
				return
			}
			if scope != anyScope && !t.Has(scope) {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="gated", error="insufficient_scope", scope=%q`, scope))
				fail(w, http.StatusForbidden, "insufficient_scope: this token lacks scope "+scope)
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tokenKey, t)))
		})
	}
}

// failureKey is the address whose failed authentications count together:
// an IPv6 client by its /64, since one host commonly holds a whole /64 and
// could otherwise take a fresh address, and a fresh budget, per guess.
func failureKey(a netip.Addr) string {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

func bearer(r *http.Request) string {
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return r.Header.Get("X-AANA-Token")
}

// rateLimit applies the per-caller limit: by token name, or by client
// address when gated runs open.
func rateLimit(l *limiter, d *Deps, fail failWriter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if l == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if limitRequest(w, r, l, d, 1, fail) {
				next.ServeHTTP(w, r)
			}
		})
	}
}

// limitRequest takes n requests from the caller's limit (by token name, or
// by client address when gated runs open) and reports whether they were
// taken; when not, it has answered 429 with fail.
func limitRequest(w http.ResponseWriter, r *http.Request, l *limiter, d *Deps, n int, fail failWriter) bool {
	key := "ip:" + clientIP(r, d.TrustedProxies).String()
	if t := tokenFrom(r.Context()); t != nil {
		key = "token:" + t.Name
	}
	ok, wait, err := l.allow(r.Context(), key, n, time.Now())
	if err != nil {
		limitUnavailable(w, fail)
		return false
	}
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
		fail(w, http.StatusTooManyRequests, fmt.Sprintf("rate limit of %d requests per minute exceeded", l.perMinute))
	}
	return ok
}

// limitUnavailable refuses a request whose limit could not be counted
// (the shared store is down and limits fail closed): not knowing whether
// the caller is within its limit is not a reason to let it through. It is
// a 429 like any limited request, so callers retry as they already do,
// and a decision endpoint never answers 5xx. The backend counts each such
// call in gated_limit_backend_errors_total, rather than a log line per
// request through an outage.
func limitUnavailable(w http.ResponseWriter, fail failWriter) {
	w.Header().Set("Retry-After", "1")
	fail(w, http.StatusTooManyRequests, "rate_limit_unavailable: the shared rate-limit store cannot be reached, so the request is refused")
}

// ClientIP returns the client-address rule of a listener trusting
// proxies, for handlers outside this package (the console's sign-in limit).
func ClientIP(trusted []netip.Prefix) func(*http.Request) netip.Addr {
	return func(r *http.Request) netip.Addr { return clientIP(r, trusted) }
}

// clientIP is the peer address, or — when the peer is a trusted proxy — the
// right-most X-Forwarded-For address that is not itself a trusted proxy.
func clientIP(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer := addrOf(r.RemoteAddr)
	if !isTrusted(peer, trusted) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer
		}
		a = a.Unmap()
		if !isTrusted(a, trusted) {
			return a
		}
	}
	return peer
}

func addrOf(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// recoverer turns a panic into a refusal: the connection still gets an
// answer that says refuse, and the panic is logged without request data.
func recoverer(log *zap.Logger, fail failWriter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					log.Error("panic in handler", zap.String("path", r.URL.Path), zap.Any("panic", v))
					fail(w, http.StatusInternalServerError, "internal error")
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// requestID takes the caller's X-Request-Id when it is a plain correlation
// id, and makes one otherwise. The id is logged and stored, so one that is
// long, oddly shaped, or looks like a secret or personal data is replaced.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(middleware.RequestIDHeader)
		if !plainID(id) || redact.HasSecret(id) || redact.HasPII(id) {
			id = uuid.NewString()
		}
		w.Header().Set(middleware.RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), middleware.RequestIDKey, id)))
	})
}

func plainID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:/-", c) >= 0) {
			return false
		}
	}
	return true
}
