package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/auth"
)

// TestConsoleSessionsAcrossReplicas: gated serves the console at /ui/
// behind the Host guard, and a session signed by one replica holds on
// another that shares --console-key (the cookie is stateless), not on one
// with a key of its own.
func TestConsoleSessionsAcrossReplicas(t *testing.T) {
	t.Parallel()
	const secret = "console-reader-0123456789abcdef0123456789"
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("- name: reader\n  sha256: "+auth.Hash(secret)+"\n  scopes: [decisions_read]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	key := map[string]string{"GATED_CONSOLE_KEY": strings.Repeat("k", 32)}
	a, _ := startServe(t, []string{"--tokens", tokens}, key)
	b, _ := startServe(t, []string{"--tokens", tokens}, key)
	c, _ := startServe(t, []string{"--tokens", tokens}, nil)

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string, cookies ...*http.Cookie) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		for _, ck := range cookies {
			req.AddCookie(ck)
		}
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, string(body)
	}

	res, form := get(a + "/ui/login")
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(form)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("sign-in form: %d\n%s", res.StatusCode, form)
	}
	req, _ := http.NewRequest(http.MethodPost, a+"/ui/login", strings.NewReader(url.Values{"csrf": {m[1]}, "token": {secret}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", a)
	for _, ck := range res.Cookies() {
		req.AddCookie(ck)
	}
	signed, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	signed.Body.Close()
	var session *http.Cookie
	for _, ck := range signed.Cookies() {
		if ck.Name == "gated_session" {
			session = ck
		}
	}
	if signed.StatusCode != http.StatusSeeOther || session == nil {
		t.Fatalf("sign-in: %d, cookies %v", signed.StatusCode, signed.Cookies())
	}
	for base, want := range map[string]int{a: http.StatusOK, b: http.StatusOK, c: http.StatusSeeOther} {
		if res, body := get(base+"/ui/decisions", session); res.StatusCode != want {
			t.Errorf("%s: %d, want %d\n%s", base, res.StatusCode, want, body)
		}
	}

	// The console is behind the same Host guard as the API.
	req, _ = http.NewRequest(http.MethodGet, a+"/ui/login", nil)
	req.Host = "rebound.example"
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("a foreign Host: %v %v", res, err)
	} else {
		res.Body.Close()
	}
}

func TestConsoleKeyTooShort(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"gated", "serve", "--console-key", "short"}, env(nil), nil, io.Discard, io.Discard)
	var ex exitError
	if !errors.As(err, &ex) || ex.code != exitUsage || !strings.Contains(ex.msg, "--console-key") {
		t.Fatalf("got %v", err)
	}
}
