package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gatedhq/gated/api"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/server"
)

func TestAuthMatrix(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	tests := []struct {
		name   string
		header map[string]string
		status int
		scope  bool // WWW-Authenticate names insufficient_scope
	}{
		{"no token", nil, http.StatusUnauthorized, false},
		{"bad bearer", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized, false},
		{"empty bearer", map[string]string{"Authorization": "Bearer "}, http.StatusUnauthorized, false},
		{"basic scheme", map[string]string{"Authorization": "Basic " + runtimeSecret}, http.StatusUnauthorized, false},
		{"raw token without scheme", map[string]string{"Authorization": runtimeSecret}, http.StatusUnauthorized, false},
		{"bad X-AANA-Token", map[string]string{"X-AANA-Token": "nope"}, http.StatusUnauthorized, false},
		{"hash instead of secret", map[string]string{"Authorization": "Bearer " + strings.Repeat("0", 64)}, http.StatusUnauthorized, false},
		{"wrong scope bearer", map[string]string{"Authorization": "Bearer " + readerSecret}, http.StatusForbidden, true},
		{"wrong scope X-AANA-Token", map[string]string{"X-AANA-Token": readerSecret}, http.StatusForbidden, true},
		{"right scope bearer", map[string]string{"Authorization": "Bearer " + runtimeSecret}, http.StatusOK, false},
		{"right scope lower-case scheme", map[string]string{"Authorization": "bearer " + runtimeSecret}, http.StatusOK, false},
		{"right scope X-AANA-Token", map[string]string{"X-AANA-Token": runtimeSecret}, http.StatusOK, false},
		{"second token", map[string]string{"Authorization": "Bearer " + otherSecret}, http.StatusOK, false},
	}
	for _, tt := range tests {
		for _, path := range []string{"/pre-tool-check", "/v1/pre-tool-check"} {
			t.Run(tt.name+path, func(t *testing.T) {
				res := f.do(request{method: http.MethodPost, target: path, body: strings.NewReader(validEvent), header: tt.header})
				if res.status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.status, tt.status, res.raw)
				}
				if tt.status == http.StatusOK {
					if res.str("route") != "accept" {
						t.Errorf("route %s", res.str("route"))
					}
					return
				}
				wa := res.header.Get("WWW-Authenticate")
				if !strings.HasPrefix(wa, "Bearer") || strings.Contains(wa, "insufficient_scope") != tt.scope {
					t.Errorf("WWW-Authenticate %q", wa)
				}
				if tt.scope && !strings.Contains(res.str("error"), "insufficient_scope") {
					t.Errorf("error %q", res.str("error"))
				}
			})
		}
	}
}

// Open mode (no tokens file) decides without a token.
func TestOpenMode(t *testing.T) {
	t.Parallel()
	f := newServer(t, func(d *server.Deps) { d.Tokens = nil })
	res := f.do(request{method: http.MethodPost, target: "/pre-tool-check", body: strings.NewReader(validEvent)})
	if res.status != http.StatusOK || res.str("route") != "accept" {
		t.Errorf("%d %s", res.status, res.raw)
	}
}

func TestMethodsAndPaths(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		for _, path := range []string{"/pre-tool-check", "/v1/pre-tool-check"} {
			res := f.do(request{method: m, target: path, header: map[string]string{"Authorization": "Bearer " + runtimeSecret}})
			if res.status != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %d", m, path, res.status)
			}
		}
	}
	res := f.do(request{method: http.MethodGet, target: "/nope"})
	if res.status != http.StatusNotFound || res.str("route") != "refuse" {
		t.Errorf("404: %d %s", res.status, res.raw)
	}
}

// Every 405 names the methods its path takes in Allow, as RFC 9110
// requires: walked over every route gated serves, so a new one cannot
// miss it.
func TestMethodNotAllowedSaysAllow(t *testing.T) {
	t.Parallel()
	d := server.Deps{Engine: gate.New(), Metrics: metrics.New("test"), Console: http.NotFoundHandler()}
	h := server.New(d)
	allowed := map[string][]string{}
	err := chi.Walk(h.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		allowed[route] = append(allowed[route], method)
		return nil
	})
	if err != nil || len(allowed) < 15 {
		t.Fatalf("walked %d routes: %v", len(allowed), err)
	}
	for route, methods := range allowed {
		if slices.Contains(methods, http.MethodPatch) {
			continue // a handler of every method (/mcp, the console)
		}
		target := strings.ReplaceAll(route, "{id}", "x")
		req := httptest.NewRequest(http.MethodPatch, target, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("PATCH %s: %d, want 405", target, rec.Code)
			continue
		}
		got := strings.Split(rec.Header().Get("Allow"), ", ")
		slices.Sort(got)
		slices.Sort(methods)
		if !slices.Equal(got, methods) {
			t.Errorf("PATCH %s: Allow %q, want %v", target, rec.Header().Get("Allow"), methods)
		}
	}
	// As the newcomer saw them, through the whole stack.
	f := newServer(t, nil)
	for _, c := range []struct{ method, target, allow string }{
		{http.MethodPut, "/pre-tool-check", "POST"},
		{http.MethodGet, "/access/v1/evaluation", "POST"},
		{http.MethodPut, "/v1/kill", "GET, POST"},
		{http.MethodPost, "/healthz", "GET"},
	} {
		res := f.do(request{method: c.method, target: c.target, header: map[string]string{"Authorization": "Bearer " + runtimeSecret}})
		if res.status != http.StatusMethodNotAllowed || res.header.Get("Allow") != c.allow || res.str("route") != "refuse" {
			t.Errorf("%s %s: %d Allow %q %s, want 405 Allow %q", c.method, c.target, res.status, res.header.Get("Allow"), res.raw, c.allow)
		}
	}
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	res := f.do(request{method: http.MethodGet, target: "/healthz"})
	if res.status != http.StatusOK || res.str("status") != "ok" {
		t.Errorf("healthz %d %s", res.status, res.raw)
	}
	res = f.do(request{method: http.MethodGet, target: "/readyz"})
	if res.status != http.StatusOK || res.str("status") != "ready" {
		t.Errorf("readyz %d %s", res.status, res.raw)
	}

	notReady := newServer(t, func(d *server.Deps) {
		d.Ready = func(context.Context) error { return errors.New("policy not loaded") }
	})
	res = notReady.do(request{method: http.MethodGet, target: "/readyz"})
	if res.status != http.StatusServiceUnavailable || res.str("status") != "not_ready" || res.str("error") != "policy not loaded" {
		t.Errorf("not ready: %d %s", res.status, res.raw)
	}
	// Liveness does not depend on readiness.
	if res := notReady.do(request{method: http.MethodGet, target: "/healthz"}); res.status != http.StatusOK {
		t.Errorf("healthz while not ready: %d", res.status)
	}
}

func TestServesOpenAPI(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	res := f.do(request{method: http.MethodGet, target: "/openapi.yaml"})
	if res.status != http.StatusOK || !bytes.Equal(res.raw, api.OpenAPI) {
		t.Errorf("openapi.yaml: %d, %d bytes", res.status, len(res.raw))
	}
	if ct := res.header.Get("Content-Type"); ct != "application/yaml" {
		t.Errorf("content type %q", ct)
	}
}

// A token with scope shadow may ask for shadow mode per request.
func TestShadowMode(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	refused := eventWith(t, map[string]string{"recommended_route": `"refuse"`})
	for _, tt := range []struct {
		query  string
		shadow bool
	}{{"?shadow_mode=true", true}, {"?shadow_mode=false", false}, {"?shadow_mode=1", false}, {"", false}} {
		t.Run(tt.query, func(t *testing.T) {
			res := f.do(request{method: http.MethodPost, target: "/pre-tool-check" + tt.query, body: strings.NewReader(refused),
				header: map[string]string{"Authorization": "Bearer " + shadowSecret}})
			if res.status != http.StatusOK {
				t.Fatalf("%d %s", res.status, res.raw)
			}
			// The would-be route is reported unchanged.
			if res.str("route") != "refuse" || res.str("gate_decision") != "fail" {
				t.Errorf("route %s gate_decision %s", res.str("route"), res.str("gate_decision"))
			}
			ep, _ := res.body["execution_policy"].(map[string]any)
			if res.body["shadow"] != tt.shadow || res.body["execute"] != tt.shadow || ep["execution_allowed"] != tt.shadow {
				t.Errorf("shadow %v execute %v execution_allowed %v, want all %v", res.body["shadow"], res.body["execute"], ep["execution_allowed"], tt.shadow)
			}
			if tt.shadow && (ep["mode"] != "shadow" || ep["reason"] != "shadow_mode_observe_only") {
				t.Errorf("execution_policy %v", ep)
			}
			if _, ok := res.body["shadow_ignored"]; ok {
				t.Errorf("shadow_ignored present for a caller allowed shadow: %s", res.raw)
			}
		})
	}
}

// checkRateLimited asserts a 429 that says refuse and when to retry.
func checkRateLimited(t *testing.T, res *response) {
	t.Helper()
	if res.status != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429: %s", res.status, res.raw)
	}
	if res.str("route") != "refuse" || res.body["execute"] != false {
		t.Errorf("429 body %s", res.raw)
	}
	if n, err := strconv.Atoi(res.header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("Retry-After %q", res.header.Get("Retry-After"))
	}
}

func TestRateLimitPerToken(t *testing.T) {
	t.Parallel()
	f := newServer(t, func(d *server.Deps) { d.RateLimit = 2 })
	for i := range 2 {
		if res := f.post(validEvent); res.status != http.StatusOK {
			t.Fatalf("request %d: %d", i, res.status)
		}
	}
	checkRateLimited(t, f.post(validEvent))
	// The same token by the other header shares the bucket.
	checkRateLimited(t, f.do(request{method: http.MethodPost, target: "/v1/pre-tool-check", body: strings.NewReader(validEvent),
		header: map[string]string{"X-AANA-Token": runtimeSecret}}))
	// Another token, even from the same address, has its own.
	res := f.do(request{method: http.MethodPost, target: "/pre-tool-check", body: strings.NewReader(validEvent),
		header: map[string]string{"Authorization": "Bearer " + otherSecret}})
	if res.status != http.StatusOK {
		t.Errorf("other token: %d", res.status)
	}
	// Unauthenticated requests are refused before they reach the limiter.
	if res := f.do(request{method: http.MethodPost, target: "/pre-tool-check", body: strings.NewReader(validEvent)}); res.status != http.StatusUnauthorized {
		t.Errorf("no token: %d", res.status)
	}
}

func TestRateLimitPerClientWhenOpen(t *testing.T) {
	t.Parallel()
	f := newServer(t, func(d *server.Deps) {
		d.Tokens, d.RateLimit = nil, 1
		d.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	})
	send := func(remote, xff string) *response {
		h := map[string]string{}
		if xff != "" {
			h["X-Forwarded-For"] = xff
		}
		return f.do(request{method: http.MethodPost, target: "/pre-tool-check", body: strings.NewReader(validEvent), remote: remote, header: h})
	}
	if res := send("192.0.2.1:1000", ""); res.status != http.StatusOK {
		t.Fatalf("first: %d", res.status)
	}
	checkRateLimited(t, send("192.0.2.1:2000", ""))
	// An untrusted peer cannot escape its bucket with X-Forwarded-For.
	checkRateLimited(t, send("192.0.2.1:3000", "198.51.100.7"))
	if res := send("192.0.2.2:1000", ""); res.status != http.StatusOK {
		t.Errorf("second client: %d", res.status)
	}
	// Behind a trusted proxy each forwarded client has its own bucket.
	if res := send("10.0.0.5:1000", "198.51.100.8"); res.status != http.StatusOK {
		t.Errorf("proxied client a: %d", res.status)
	}
	if res := send("10.0.0.5:1000", "198.51.100.9"); res.status != http.StatusOK {
		t.Errorf("proxied client b: %d", res.status)
	}
	checkRateLimited(t, send("10.0.0.6:1000", "203.0.113.1, 198.51.100.8"))
}

// A panic outside the decision path is answered 500 with route refuse.
func TestRecoverer(t *testing.T) {
	t.Parallel()
	f := newServer(t, func(d *server.Deps) {
		d.Ready = func(context.Context) error { panic("boom") }
	})
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), `"route":"refuse"`) {
		t.Errorf("%d %s", rec.Code, rec.Body)
	}
}

// Decision logs and answers carry names and codes only: never argument
// values, evidence text or the token.
func TestLogsCarryNoSecrets(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.DebugLevel)
	f := newServer(t, func(d *server.Deps) { d.Logger = zap.New(core) })
	secrets := []string{"sk-abcdefghijklmnopqrst", "ann@example.com", "4111111111111111"}
	res := f.post(eventWith(t, map[string]string{
		"proposed_arguments": `{"note":"sk-abcdefghijklmnopqrst","to":"ann@example.com"}`,
		"evidence_refs": `[{"source_id":"doc.1","kind":"other","trust_tier":"verified","redaction_status":"public",` +
			`"summary":"card 4111111111111111","freshness":{"status":"fresh"},"provenance":"fixture"}]`,
	}))
	if res.str("route") != "refuse" {
		t.Errorf("route %s", res.str("route"))
	}
	// The answer names blockers, not the values behind them.
	for _, s := range secrets {
		if strings.Contains(string(res.raw), s) {
			t.Errorf("the answer holds %q", s)
		}
	}
	if logs.Len() == 0 {
		t.Fatal("no decision was logged at debug level")
	}
	for _, e := range logs.All() {
		line := e.Message
		for k, v := range e.ContextMap() {
			line += " " + k + "=" + strings.TrimSpace(strings.ReplaceAll(fmt.Sprint(v), "\n", " "))
		}
		for _, s := range append(secrets, runtimeSecret) {
			if strings.Contains(line, s) {
				t.Errorf("log line holds %q: %s", s, line)
			}
		}
	}
}
