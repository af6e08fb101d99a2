package console

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/auth"
)

func tokens(t *testing.T, secret string) *auth.Tokens {
	t.Helper()
	ts, err := auth.Parse(fmt.Appendf(nil, "- {name: ops, sha256: %s, scopes: [approve]}\n", auth.Hash(secret)))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func withCookie(value string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/ui/approvals", nil)
	r.AddCookie(&http.Cookie{Name: sessionCookie, Value: value})
	return r
}

// TestSessionCookie: a session holds only while its cookie is as signed,
// unexpired, not signed out, and its token is configured as it was.
func TestSessionCookie(t *testing.T) {
	t.Parallel()
	key := []byte(strings.Repeat("k", MinKeyBytes))
	s, err := newSessions(key, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ts := tokens(t, "first-secret")
	tok, _ := ts.Named("ops")
	now := time.Now()
	value, exp := s.issue(tok, now)
	if exp != now.Add(time.Hour) {
		t.Fatalf("expiry %v", exp)
	}
	u := s.user(withCookie(value), ts, now)
	if u == nil || u.token.Name != "ops" || u.csrf == "" {
		t.Fatalf("a fresh session: %+v", u)
	}
	if !s.checkCSRF(u, u.csrf) || s.checkCSRF(u, "") || s.checkCSRF(u, u.csrf+"x") {
		t.Error("the CSRF check")
	}

	payload, sig, _ := strings.Cut(value, ".")
	other, _ := newSessions([]byte(strings.Repeat("o", MinKeyBytes)), time.Hour)
	forged, _ := other.issue(tok, now)
	for name, v := range map[string]string{
		"tampered payload":   payload[:len(payload)-2] + "AA." + sig,
		"tampered signature": payload + "." + sig[:len(sig)-2] + "AA",
		"no signature":       payload,
		"another key":        forged,
		"empty":              "",
	} {
		if s.user(withCookie(v), ts, now) != nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if s.user(withCookie(value), ts, exp) != nil {
		t.Error("an expired session is accepted")
	}
	// The same name with another secret: the old sessions end.
	if s.user(withCookie(value), tokens(t, "rotated-secret"), now) != nil {
		t.Error("a session outlives its token's rotation")
	}
	if s.user(withCookie(value), nil, now) != nil {
		t.Error("a session works without tokens")
	}
	s.revoke(u.sid, u.exp, now)
	if s.user(withCookie(value), ts, now) != nil {
		t.Error("a signed-out session is accepted")
	}
}

func TestSafeNext(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]string{
		"/ui/approvals?x=1":        "/ui/approvals?x=1",
		"":                         "/ui/",
		"//evil.example/ui/":       "/ui/",
		"https://evil.example/ui/": "/ui/",
		"/ui\\evil":                "/ui/",
		"/elsewhere":               "/ui/",
		"/ui/\r\nSet-Cookie: x":    "/ui/",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}
