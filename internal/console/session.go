package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/limit"
)

// The console's cookies. Both are HttpOnly, SameSite=Strict and scoped to
// Prefix; neither holds a secret in clear.
const (
	sessionCookie = "gated_session"
	// loginCookie holds a random nonce from the sign-in form's CSRF token,
	// so a foreign page cannot sign a browser in under its own token.
	loginCookie = "gated_login"
	loginTTL    = time.Hour
)

// sessions signs and checks session cookies. Sign-out is remembered in
// memory until the session would have expired: on this replica, and until
// it restarts, a signed-out cookie replayed is refused; elsewhere it lasts
// to its expiry (the browser deletes it at sign-out either way).
type sessions struct {
	key []byte
	ttl time.Duration

	mu      sync.Mutex
	revoked map[string]time.Time // session id → its expiry
}

func newSessions(key []byte, ttl time.Duration) (*sessions, error) {
	if len(key) == 0 {
		key = make([]byte, MinKeyBytes)
		_, _ = rand.Read(key) // never fails (crypto/rand)
	}
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("the console key must be at least %d bytes, got %d", MinKeyBytes, len(key))
	}
	return &sessions{key: append([]byte(nil), key...), ttl: ttl, revoked: map[string]time.Time{}}, nil
}

// mac is the HMAC-SHA256 of parts under the key for purpose: each use of
// the key has a purpose of its own, so no value made for one is accepted
// for another.
func (s *sessions) mac(purpose string, parts ...string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(purpose))
	for _, p := range parts {
		m.Write([]byte{0})
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// claims are what a session cookie says, signed.
type claims struct {
	Name string `json:"n"` // the token's name
	// FP is a keyed fingerprint of the token's configured hash: a token
	// rotated under the same name does not inherit the sessions.
	FP  string `json:"f"`
	Exp int64  `json:"e"` // unix seconds
	SID string `json:"s"` // 256 random bits
}

// user is the signed-in person of one request.
type user struct {
	token *auth.Token
	sid   string
	csrf  string
	exp   time.Time
}

func (s *sessions) fingerprint(t *auth.Token) string {
	return b64(s.mac("token", strings.ToLower(t.SHA256))[:16])
}

// issue returns a new session's cookie value for t at now.
func (s *sessions) issue(t *auth.Token, now time.Time) (string, time.Time) {
	sid := make([]byte, 32)
	_, _ = rand.Read(sid)
	exp := now.Add(s.ttl)
	payload, _ := json.Marshal(claims{Name: t.Name, FP: s.fingerprint(t), Exp: exp.Unix(), SID: b64(sid)})
	p := b64(payload)
	return p + "." + b64(s.mac("session", p)), exp
}

// user returns the signed-in user of r, or nil: no cookie, a bad
// signature, expired or signed out, or a token no longer configured as it
// was.
func (s *sessions) user(r *http.Request, tokens Tokens, now time.Time) *user {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || tokens == nil {
		return nil
	}
	p, sig, ok := strings.Cut(ck.Value, ".")
	if !ok {
		return nil
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac("session", p)) {
		return nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return nil
	}
	var c claims
	if json.Unmarshal(raw, &c) != nil || c.SID == "" {
		return nil
	}
	exp := time.Unix(c.Exp, 0)
	if !now.Before(exp) || s.isRevoked(c.SID) {
		return nil
	}
	t, ok := tokens.Named(c.Name)
	if !ok || !hmac.Equal([]byte(s.fingerprint(t)), []byte(c.FP)) {
		return nil
	}
	return &user{token: t, sid: c.SID, csrf: b64(s.mac("csrf", c.SID)), exp: exp}
}

func (s *sessions) checkCSRF(u *user, got string) bool {
	return got != "" && hmac.Equal([]byte(got), []byte(u.csrf))
}

// revoke remembers that session sid, valid until exp, signed out.
func (s *sessions) revoke(sid string, exp, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, e := range s.revoked {
		if !now.Before(e) {
			delete(s.revoked, id)
		}
	}
	s.revoked[sid] = exp
}

func (s *sessions) isRevoked(sid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.revoked[sid]
	return ok
}

// loginCSRF is the sign-in form's CSRF token for the nonce in loginCookie.
func (s *sessions) loginCSRF(nonce string) string { return b64(s.mac("login", nonce)) }

// cookie returns a console cookie: HttpOnly, SameSite=Strict, Path /ui,
// Secure over TLS or when told to. maxAge < 0 deletes it.
func (c *Console) cookie(r *http.Request, name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/ui", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || c.opt.SecureCookies}
}

// loginView is the sign-in page's data.
type loginView struct {
	Next   string
	Closed bool // no tokens are configured: nobody can sign in
}

func (c *Console) loginForm(w http.ResponseWriter, r *http.Request) {
	if u := c.sessions.user(r, c.opt.Tokens, c.opt.Now()); u != nil {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	c.renderLogin(w, r, http.StatusOK, "")
}

// renderLogin shows the sign-in form with a fresh nonce and, when set, why
// the last attempt failed.
func (c *Console) renderLogin(w http.ResponseWriter, r *http.Request, status int, problem string) {
	nonce := make([]byte, 32)
	_, _ = rand.Read(nonce)
	http.SetCookie(w, c.cookie(r, loginCookie, b64(nonce), int(loginTTL/time.Second)))
	next := r.URL.Query().Get("next")
	if r.Method == http.MethodPost {
		next = r.PostForm.Get("next")
	}
	v := &view{Title: "Sign in", CSRF: c.sessions.loginCSRF(b64(nonce)), Error: problem,
		Data: loginView{Next: safeNext(next), Closed: c.opt.Tokens == nil}}
	c.render(w, r, status, "login", v)
}

// login exchanges a token for a session. Failed attempts count against the
// client address like failed API authentications; past the limit every
// attempt is refused, a right guess included, so guessing learns nothing.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		c.renderLogin(w, r, http.StatusBadRequest, "The form could not be read.")
		return
	}
	ck, err := r.Cookie(loginCookie)
	if err != nil || !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(c.sessions.loginCSRF(ck.Value))) {
		c.renderLogin(w, r, http.StatusForbidden, "The sign-in form was stale or your browser refused its cookie. Try again; the console needs cookies.")
		return
	}
	if c.opt.Tokens == nil {
		c.renderLogin(w, r, http.StatusForbidden, "This gated has no tokens file, so nobody can sign in.")
		return
	}
	now := c.opt.Now()
	key := c.opt.ClientIP(r).String()
	t, ok := c.opt.Tokens.Verify(strings.TrimSpace(r.PostForm.Get("token")))
	if wait, limited := c.failures.check(key, ok, now); limited {
		w.Header().Set("Retry-After", fmt.Sprint(int(math.Ceil(wait.Seconds()))))
		c.renderLogin(w, r, http.StatusTooManyRequests, fmt.Sprintf(
			"Too many failed sign-ins from this address. Try again in %d seconds.", int(math.Ceil(wait.Seconds()))))
		return
	}
	switch {
	case !ok:
		c.renderLogin(w, r, http.StatusUnauthorized, "That token is not one this gated knows.")
		return
	case !canConsole(t):
		c.renderLogin(w, r, http.StatusForbidden, "That token has none of the scopes the console shows (approve, decisions_read, catalog_read, policy_read).")
		return
	}
	value, exp := c.sessions.issue(t, now)
	http.SetCookie(w, c.cookie(r, sessionCookie, value, int(exp.Sub(now)/time.Second)))
	http.SetCookie(w, c.cookie(r, loginCookie, "", -1))
	c.opt.Logger.Info("console sign-in", zap.String("token", t.Name))
	http.Redirect(w, r, safeNext(r.PostForm.Get("next")), http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, u *user) {
	c.sessions.revoke(u.sid, u.exp, c.opt.Now())
	http.SetCookie(w, c.cookie(r, sessionCookie, "", -1))
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
}

// safeNext is where to go after signing in: a console path, never another
// site ("//evil", "/\evil" and absolute URLs are dropped).
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || next == "" || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(next, Prefix) ||
		strings.ContainsAny(next, "\\\r\n") || strings.HasPrefix(next, "//") {
		return Prefix
	}
	return next
}

// failures counts failed sign-ins per client address.
type failures struct {
	rate limit.Rate
	keys *limit.Keyed
}

func newFailures(perMinute int) *failures {
	if perMinute == 0 {
		perMinute = 60
	}
	if perMinute < 0 {
		return nil
	}
	return &failures{
		rate: limit.Rate{Limit: rate.Limit(float64(perMinute) / 60), Burst: perMinute, Idle: 5 * time.Minute},
		keys: limit.New(limit.Config{SweepEvery: 5 * time.Minute, MaxKeys: 100_000}),
	}
}

// check spends one failure for key unless ok, and reports whether the
// attempt must be refused and for how long.
func (f *failures) check(key string, ok bool, now time.Time) (time.Duration, bool) {
	if f == nil {
		return 0, false
	}
	// A Keyed limiter counts in this process and never fails.
	var res limit.Result
	if ok {
		res, _ = f.keys.Peek(context.Background(), now, f.rate, key)
	} else {
		res, _ = f.keys.Allow(context.Background(), now, f.rate, key)
	}
	return res.Wait, !res.OK
}
