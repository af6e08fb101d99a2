// Package console is gated's web console at /ui/: the approvals queue
// (live), approval history and decisions, the decisions explorer over the
// audit store, and the loaded catalog and policy.
//
// It is server-rendered html/template with its CSS, a small script and an
// icon embedded in the binary: no CDN, no external fonts, and every page
// works with scripts off (forms post, pages render on the server; the
// script only keeps the approvals queue live and ages current).
//
// A person signs in with a bearer token from the tokens file. The token is
// exchanged for a session cookie that holds no secret: the token's name, a
// keyed fingerprint of its hash, an expiry and a random session id, signed
// with HMAC-SHA256 under the console key. So any replica holding the same
// key accepts the session (stateless), and a token removed from or
// rotated in the tokens file ends its sessions. Every page shows only what
// the token's scopes allow, checked on every request.
//
// Forms carry a CSRF token derived from the session id; every POST checks
// it, and net/http's CrossOriginProtection refuses cross-origin POSTs
// before that. Pages are sent with a strict Content-Security-Policy (no
// inline script or style), no framing, no referrer and no caching.
package console

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/policy"
)

// Prefix is where the console is served; Handler expects full paths under it.
const Prefix = "/ui/"

// Approvals is what the console reads and does with approvals:
// internal/approval/postgres.Store's methods, or a wrapper around them
// that also notifies the webhook when one is decided.
type Approvals interface {
	Get(ctx context.Context, id string) (*approval.Approval, error)
	// List returns approvals newest first, those with status ("" for all),
	// a page of limit, after the cursor before; and the next cursor.
	List(ctx context.Context, status approval.Status, limit int, before string) ([]approval.Approval, string, error)
	// Decide approves or denies; a refusal is an *approval.Error.
	Decide(ctx context.Context, id string, approver approval.Identity, approve bool, reason string, now time.Time) (*approval.Approval, error)
	// Subscribe returns the ids of approvals as they change ("" means
	// re-read everything), closed when ctx ends.
	Subscribe(ctx context.Context) <-chan string
}

// Decisions reads the audit store (internal/audit/postgres.Store).
type Decisions interface {
	Get(ctx context.Context, id string) (*audit.Record, error)
	List(ctx context.Context, f audit.Filter) (audit.Page, error)
	Outcome(ctx context.Context, id string) (*audit.Outcome, error)
}

// Kills lists the kill switches (internal/kill/postgres.Store); with all,
// lifted and expired ones too.
type Kills interface {
	List(ctx context.Context, all bool) ([]kill.Kill, error)
}

// Tokens authenticates the token a person signs in with, and finds it again
// by name for each request of the session (*auth.Tokens).
type Tokens interface {
	Verify(secret string) (*auth.Token, bool)
	Named(name string) (*auth.Token, bool)
}

// Options are what the console shows and how it keeps sessions. Approvals,
// Decisions, Catalog and Policy may each be nil: that part of gated is not
// configured, and its page says so.
type Options struct {
	// Tokens, when nil, leaves the console closed: nobody can sign in.
	Tokens    Tokens
	Approvals Approvals
	Decisions Decisions
	// Kills, when set, is shown on the kill switch page (scope admin).
	Kills Kills
	// Candidate, when set, is the candidate policy: its page lists the
	// Disagreements (scope decisions_read).
	Candidate     Candidate
	Disagreements Disagreements
	// Catalog and Policy return what GET /v1/catalog and /v1/policy serve.
	Catalog func() catalog.Document
	Policy  func() policy.Summary
	// Key signs session cookies and derives CSRF tokens; at least 32
	// bytes. Replicas behind one address need the same key. Empty means a
	// random key for this process: sessions end when it restarts.
	Key []byte
	// SecureCookies marks cookies Secure even on plain-HTTP requests, for a
	// console behind a TLS-terminating proxy (requests over TLS always are).
	SecureCookies bool
	// SessionTTL is how long a sign-in lasts; zero means DefaultSessionTTL.
	SessionTTL time.Duration
	// FailureLimit is failed sign-ins a minute per client address; zero
	// means 60, negative disables it.
	FailureLimit int
	// ClientIP finds a request's client address (gated's trusted-proxy
	// rule); nil uses the peer address.
	ClientIP func(*http.Request) netip.Addr
	// Stopping, when closed, ends the event streams: gated is shutting
	// down, and a stream left open would hold the graceful shutdown for
	// its whole timeout.
	Stopping <-chan struct{}
	// Version is shown in the footer.
	Version string
	Logger  *zap.Logger
	// Now is the clock, for tests; nil means time.Now.
	Now func() time.Time
}

// DefaultSessionTTL is how long a sign-in lasts: a working day.
const DefaultSessionTTL = 12 * time.Hour

// MinKeyBytes is the shortest console key accepted.
const MinKeyBytes = 32

// Console is the web console's handler.
type Console struct {
	opt      Options
	sessions *sessions
	pages    *pages
	failures *failures
	mux      *http.ServeMux
	root     http.Handler
}

// New returns the console.
func New(opt Options) (*Console, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Logger == nil {
		opt.Logger = zap.NewNop()
	}
	if opt.SessionTTL <= 0 {
		opt.SessionTTL = DefaultSessionTTL
	}
	if opt.ClientIP == nil {
		opt.ClientIP = peerAddr
	}
	// A nil *auth.Tokens (gated without --tokens) is no tokens: the
	// console is closed, not open.
	if ts, ok := opt.Tokens.(*auth.Tokens); ok && ts == nil {
		opt.Tokens = nil
	}
	s, err := newSessions(opt.Key, opt.SessionTTL)
	if err != nil {
		return nil, err
	}
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	c := &Console{opt: opt, sessions: s, pages: p, failures: newFailures(opt.FailureLimit), mux: http.NewServeMux()}
	c.routes()
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, nil, http.StatusForbidden, "This form was sent from another site, so it was refused.")
	}))
	c.root = secureHeaders(cop.Handler(c.mux))
	return c, nil
}

// ServeHTTP serves the console's pages; the path is the full request path,
// so mount the console at Prefix without stripping it.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) { c.root.ServeHTTP(w, r) }

// access is what a page needs of the signed-in token.
type access func(*auth.Token) bool

func hasScope(scope string) access { return func(t *auth.Token) bool { return t.Has(scope) } }

var (
	canApprove   = hasScope(auth.ScopeApprove)
	canDecisions = hasScope(auth.ScopeDecisionsRead)
	canCatalog   = func(t *auth.Token) bool { return t.Has(auth.ScopeCatalogRead) || t.Has(auth.ScopePolicyRead) }
	canKills     = hasScope(auth.ScopeAdmin)
	// canConsole is any page at all: a token without one cannot sign in.
	canConsole = func(t *auth.Token) bool { return canApprove(t) || canDecisions(t) || canCatalog(t) || canKills(t) }
)

func (c *Console) routes() {
	m := c.mux
	m.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
	})
	m.Handle("GET /ui/{$}", c.page(canConsole, c.home))
	m.HandleFunc("GET /ui/login", c.loginForm)
	m.HandleFunc("POST /ui/login", c.login)
	m.Handle("POST /ui/logout", c.page(nil, c.logout))
	m.HandleFunc("GET /ui/static/{file}", serveStatic)

	m.Handle("GET /ui/approvals", c.page(canApprove, c.queue))
	m.Handle("GET /ui/approvals/history", c.page(canApprove, c.history))
	m.Handle("GET /ui/approvals/events", c.page(canApprove, c.events))
	m.Handle("GET /ui/approvals/{id}", c.page(canApprove, c.approvalPage))
	m.Handle("POST /ui/approvals/{id}/approve", c.page(canApprove, c.decide(true)))
	m.Handle("POST /ui/approvals/{id}/deny", c.page(canApprove, c.decide(false)))

	m.Handle("GET /ui/decisions", c.page(canDecisions, c.decisions))
	m.Handle("GET /ui/decisions/{id}", c.page(canDecisions, c.decisionPage))
	m.Handle("GET /ui/candidate", c.page(canDecisions, c.candidatePage))

	m.Handle("GET /ui/catalog", c.page(canCatalog, c.catalogPage))
	m.Handle("GET /ui/kill", c.page(canKills, c.killPage))
	// Anything else under the console's mount is its own 404 page.
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, c.sessions.user(r, c.opt.Tokens, c.opt.Now()), http.StatusNotFound, "There is no such page.")
	})
}

// home sends a person to the first page their token may see.
func (c *Console) home(w http.ResponseWriter, r *http.Request, u *user) {
	to := "/ui/catalog"
	switch {
	case canApprove(u.token):
		to = "/ui/approvals"
	case canDecisions(u.token):
		to = "/ui/decisions"
	case canKills(u.token) && !canCatalog(u.token):
		to = "/ui/kill"
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// page wraps a handler that needs a signed-in user whom allow lets in
// (nil: any user). Without a session a GET goes to the sign-in page and
// comes back; a POST is refused (its form would be lost anyway). Every
// POST must carry the session's CSRF token.
func (c *Console) page(allow access, h func(http.ResponseWriter, *http.Request, *user)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := c.sessions.user(r, c.opt.Tokens, c.opt.Now())
		if u == nil {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/ui/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			c.fail(w, r, nil, http.StatusForbidden, "Your session has ended. Sign in again, then repeat what you were doing.")
			return
		}
		if allow != nil && !allow(u.token) {
			c.fail(w, r, u, http.StatusForbidden, "Your token's scopes do not include this page.")
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := r.ParseForm(); err != nil {
				c.fail(w, r, u, http.StatusBadRequest, "The form could not be read.")
				return
			}
			if !c.sessions.checkCSRF(u, r.PostForm.Get("csrf")) {
				c.fail(w, r, u, http.StatusForbidden, "The form's security token is missing or stale. Reload the page and try again.")
				return
			}
		}
		h(w, r, u)
	})
}

// maxFormBytes bounds a posted form: a token, a reason, a CSRF token.
const maxFormBytes = 16 << 10

// secureHeaders sets what every console response carries: no script,
// style or connection from anywhere but gated itself, no framing, no
// referrer leaving with an approval's URL, and pages never cached (they
// show what a token may see; a shared cache must not keep them).
//
// The referrer policy is same-origin, not no-referrer: under no-referrer
// browsers send a form's POST with "Origin: null", which the Host/Origin
// guard (rightly) refuses. same-origin sends no referrer to any other
// site all the same.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
			"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if !strings.HasPrefix(r.URL.Path, "/ui/static/") {
			h.Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}

// peerAddr is the request's peer address, when no proxy rule is given.
func peerAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}
