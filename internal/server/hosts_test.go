package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/gatedhq/gated/internal/adapter/hook/wire"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/server"
)

// TestRebindingRefusedOnEveryRoute walks every route gated serves and sends
// the shapes of a DNS rebinding attack and of a cross-site page to each:
// all are refused before they reach a handler — a 4xx carrying a route, or
// on hook paths a 200 deny.
func TestRebindingRefusedOnEveryRoute(t *testing.T) {
	t.Parallel()
	h := server.New(server.Deps{Engine: gate.New(), Hosts: server.Hosts{Enforce: true, Allowed: []string{"gated.internal", "10.0.0.7"}}})
	var routes [][2]string
	err := chi.Walk(h.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routes = append(routes, [2]string{method, strings.Replace(route, "{id}", "x", 1)})
		return nil
	})
	if err != nil || len(routes) < 15 {
		t.Fatalf("walked %d routes: %v", len(routes), err)
	}
	attacks := []struct {
		name, host, origin string
	}{
		{"rebinding: foreign Host, no Origin", "evil.example.com", ""},
		{"rebinding: foreign Host and Origin", "evil.example.com:8080", "http://evil.example.com:8080"},
		{"cross-site page: loopback Host, foreign Origin", "127.0.0.1:8080", "https://evil.example.com"},
		{"opaque origin", "127.0.0.1:8080", "null"},
		{"private address is not loopback", "192.168.1.10:8080", ""},
	}
	for _, rt := range routes {
		for _, a := range attacks {
			t.Run(rt[0]+" "+rt[1]+"/"+a.name, func(t *testing.T) {
				req := httptest.NewRequest(rt[0], rt[1], strings.NewReader(`{"tool_name":"x"}`))
				req.Host = a.host
				req.Header.Set("Content-Type", "application/json")
				if a.origin != "" {
					req.Header.Set("Origin", a.origin)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				var body map[string]any
				_ = json.Unmarshal(rec.Body.Bytes(), &body)
				if strings.HasPrefix(rt[1], "/v1/hooks/") {
					if rec.Code != http.StatusOK || hookVerdict(t, rt[1], rec.Body.Bytes()) != wire.Deny {
						t.Fatalf("hook answered %d %s; want a 200 deny", rec.Code, rec.Body)
					}
					return
				}
				if rec.Code != http.StatusForbidden || body["route"] != "refuse" {
					t.Fatalf("answered %d %s; want 403 with route refuse", rec.Code, rec.Body)
				}
			})
		}
	}
	// Loopback names and allowed hosts pass.
	for _, host := range []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080", "gated.internal", "GATED.INTERNAL:443", "app.localhost", "10.0.0.7:8080"} {
		req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		req.Host = host
		req.Header.Set("Origin", "http://"+host)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("Host %s: %d %s", host, rec.Code, rec.Body)
		}
	}
}

// TestCrossSiteContentTypesRefused: a page can post text/plain or a form
// across sites without a preflight; gated decides only JSON bodies.
func TestCrossSiteContentTypesRefused(t *testing.T) {
	t.Parallel()
	f := newServer(t, func(d *server.Deps) { d.Tokens = nil })
	for _, target := range []string{"/pre-tool-check", "/tool-precheck", "/validate-tool-precheck"} {
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
			r := f.do(request{method: http.MethodPost, target: target, body: strings.NewReader(validEvent), header: map[string]string{"Content-Type": ct}})
			if r.status != http.StatusUnsupportedMediaType || r.str("route") != "refuse" {
				t.Errorf("%s with %q: %d %.200s", target, ct, r.status, r.raw)
			}
		}
	}
	if r := f.do(request{method: http.MethodPost, target: "/pre-tool-check", body: strings.NewReader(validEvent),
		header: map[string]string{"Content-Type": "application/json; charset=utf-8"}}); r.status != http.StatusOK {
		t.Errorf("application/json with a charset: %d", r.status)
	}
	r := f.do(request{method: http.MethodPost, target: "/v1/hooks/claude-code", body: strings.NewReader(`{"tool_name":"Read"}`), header: map[string]string{"Content-Type": "text/plain"}})
	if r.status != http.StatusOK || !strings.Contains(string(r.raw), `"deny"`) {
		t.Errorf("hook with text/plain: %d %s", r.status, r.raw)
	}
}

// A hook call over the rate limit is a 200 deny, not a 429 the runtime
// would run the tool on.
func TestHookRateLimitDenies(t *testing.T) {
	t.Parallel()
	f := newServer(t, func(d *server.Deps) { d.RateLimit = 1; d.Tokens = nil })
	call := `{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"a"}}`
	var last *response
	for range 2 {
		last = f.do(request{method: http.MethodPost, target: "/v1/hooks/claude-code", body: strings.NewReader(call)})
	}
	if last.status != http.StatusOK || !strings.Contains(string(last.raw), `"deny"`) || !strings.Contains(string(last.raw), "rate limit") {
		t.Fatalf("second call: %d %s", last.status, last.raw)
	}
}
