package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/gatedhq/gated/internal/adapter/hook/wire"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/server"
)

// firstAnswer sends the head of a request that declares a body of length
// bytes and asks "Expect: 100-continue", sends no body, and returns the
// first response gated writes: a "100 Continue" when it means to read.
func firstAnswer(t *testing.T, addr, target string, length int64, hdr map[string]string) *response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A guard against hanging the suite, not a timing assertion.
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	var head strings.Builder
	fmt.Fprintf(&head, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\nExpect: 100-continue\r\n", target, length)
	for k, v := range hdr {
		fmt.Fprintf(&head, "%s: %s\r\n", k, v)
	}
	head.WriteString("\r\n")
	if _, err := io.WriteString(conn, head.String()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s: no answer to the request head: %v", target, err)
	}
	defer resp.Body.Close()
	res := &response{status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode == http.StatusContinue {
		return res
	}
	if res.raw, err = io.ReadAll(resp.Body); err != nil {
		t.Fatalf("%s: read answer: %v", target, err)
	}
	if err := json.Unmarshal(res.raw, &res.body); err != nil {
		t.Fatalf("%s: answer is not a JSON object: %q", target, res.raw)
	}
	return res
}

// A body declared larger than its route's limit is refused before it is
// read: no "100 Continue" that would have the caller send 100 MB, or hold
// the connection until the read timeout. Each route keeps its own limit.
func TestDeclaredOversizeBodyRefusedBeforeContinue(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	runtime := map[string]string{"Authorization": "Bearer " + runtimeSecret}
	mcpHdr := map[string]string{"Authorization": "Bearer " + runtimeSecret, "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2025-06-18"}
	const huge = 100 << 20

	for _, target := range []string{"/pre-tool-check", "/v1/pre-tool-check", "/tool-precheck", "/validate-tool-precheck", "/mcp"} {
		t.Run(target, func(t *testing.T) {
			hdr := runtime
			if target == "/mcp" {
				hdr = mcpHdr
			}
			res := firstAnswer(t, addr, target, huge, hdr)
			if res.status != http.StatusRequestEntityTooLarge {
				t.Fatalf("first answer %d, want 413 before any 100 Continue", res.status)
			}
			if res.str("route") != "refuse" || res.body["execute"] != false || !strings.Contains(res.str("error"), "exceeds") {
				t.Errorf("413 body %s", res.raw)
			}
			conform(t, request{method: http.MethodPost, target: target}, res)
		})
	}
	for _, target := range []string{"/v1/hooks/claude-code", "/v1/hooks/codex", "/v1/hooks/copilot"} {
		t.Run(target, func(t *testing.T) {
			res := firstAnswer(t, addr, target, huge, runtime)
			out, _ := res.body["hookSpecificOutput"].(map[string]any)
			if res.status != http.StatusOK || out["permissionDecision"] != "deny" {
				t.Fatalf("first answer %d %s, want a 200 deny before any 100 Continue", res.status, res.raw)
			}
			if why, _ := out["permissionDecisionReason"].(string); !strings.Contains(why, "exceeds") {
				t.Errorf("reason %q", why)
			}
			conform(t, request{method: http.MethodPost, target: target}, res)
		})
	}
	t.Run("each route its own limit", func(t *testing.T) {
		// Within the limit gated does read: the probe sees 100 Continue.
		if res := firstAnswer(t, addr, "/pre-tool-check", server.DefaultMaxBodyBytes, runtime); res.status != http.StatusContinue {
			t.Errorf("event at the limit: %d, want 100", res.status)
		}
		if res := firstAnswer(t, addr, "/pre-tool-check", server.DefaultMaxBodyBytes+1, runtime); res.status != http.StatusRequestEntityTooLarge {
			t.Errorf("event one byte over: %d, want 413", res.status)
		}
		// Hook inputs carry file contents: more than an event may.
		if res := firstAnswer(t, addr, "/v1/hooks/claude-code", server.DefaultMaxBodyBytes+1, runtime); res.status != http.StatusContinue {
			t.Errorf("hook call over the event limit: %d, want 100", res.status)
		}
		if res := firstAnswer(t, addr, "/v1/hooks/claude-code", wire.MaxInputBytes+1, runtime); res.status != http.StatusOK {
			t.Errorf("hook call over its limit: %d, want a 200 deny", res.status)
		}
		// /mcp has room for the JSON-RPC envelope around an event.
		if res := firstAnswer(t, addr, "/mcp", server.DefaultMaxBodyBytes+1, mcpHdr); res.status != http.StatusContinue {
			t.Errorf("mcp over the event limit: %d, want 100", res.status)
		}
	})
	t.Run("unauthenticated", func(t *testing.T) {
		if res := firstAnswer(t, addr, "/pre-tool-check", huge, nil); res.status != http.StatusUnauthorized || res.str("route") != "refuse" {
			t.Errorf("first answer %d %s, want 401", res.status, res.raw)
		}
	})
	t.Run("configured limits", func(t *testing.T) {
		small := httptest.NewServer(newServer(t, func(d *server.Deps) { d.MaxBodyBytes, d.HookMaxBodyBytes = 1000, 2000 }).h)
		t.Cleanup(small.Close)
		a := small.Listener.Addr().String()
		for _, c := range []struct {
			target string
			length int64
			want   int
		}{
			{"/pre-tool-check", 1000, http.StatusContinue},
			{"/pre-tool-check", 1001, http.StatusRequestEntityTooLarge},
			{"/v1/hooks/codex", 2000, http.StatusContinue},
			{"/v1/hooks/codex", 2001, http.StatusOK},
		} {
			if res := firstAnswer(t, a, c.target, c.length, runtime); res.status != c.want {
				t.Errorf("%s declaring %d bytes: %d, want %d", c.target, c.length, res.status, c.want)
			}
		}
	})
}

// postFrom sends validEvent to /pre-tool-check from remote with token ("" for none).
func (f *fixture) postFrom(remote, token, xff string) *response {
	f.t.Helper()
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	if xff != "" {
		h["X-Forwarded-For"] = xff
	}
	return f.do(request{method: http.MethodPost, target: "/pre-tool-check", body: strings.NewReader(validEvent), remote: remote, header: h})
}

// checkAuthLimited asserts the 429 of an address that failed too often.
func checkAuthLimited(t *testing.T, res *response) {
	t.Helper()
	checkRateLimited(t, res)
	if !strings.Contains(res.str("error"), "failed authentication") {
		t.Errorf("error %q", res.str("error"))
	}
}

// Failed authentications are limited per client address, so tokens cannot
// be guessed at line rate. Once an address is limited even the right token
// is refused from it: answering a right guess differently would tell the
// guesser which one was right.
func TestAuthFailureLimit(t *testing.T) {
	t.Parallel()
	f := newServer(t, func(d *server.Deps) {
		d.AuthFailureLimit = 3
		d.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	})
	const attacker = "192.0.2.10:4000"
	// Successful calls spend nothing.
	for i := range 5 {
		if res := f.postFrom(attacker, runtimeSecret, ""); res.status != http.StatusOK {
			t.Fatalf("valid call %d: %d", i, res.status)
		}
	}
	for i := range 3 {
		if res := f.postFrom(attacker, fmt.Sprintf("guess-%d", i), ""); res.status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d %s, want 401", i, res.status, res.raw)
		}
	}
	checkAuthLimited(t, f.postFrom(attacker, "guess-3", ""))
	checkAuthLimited(t, f.postFrom("192.0.2.10:4001", "", "")) // another port, no token
	checkAuthLimited(t, f.postFrom(attacker, runtimeSecret, ""))
	checkAuthLimited(t, f.do(request{method: http.MethodGet, target: "/v1/catalog", remote: attacker,
		header: map[string]string{"Authorization": "Bearer " + readerSecret}}))
	// A hook call from it is a 200 deny, with Retry-After.
	hook := f.do(request{method: http.MethodPost, target: "/v1/hooks/claude-code", remote: attacker,
		body:   strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{}}`),
		header: map[string]string{"Authorization": "Bearer " + runtimeSecret}})
	out, _ := hook.body["hookSpecificOutput"].(map[string]any)
	if why, _ := out["permissionDecisionReason"].(string); hook.status != http.StatusOK || out["permissionDecision"] != "deny" ||
		!strings.Contains(why, "failed authentication") || hook.header.Get("Retry-After") == "" {
		t.Errorf("hook from a limited address: %d %v %s", hook.status, hook.header, hook.raw)
	}

	// Other addresses keep their own budgets.
	if res := f.postFrom("192.0.2.11:4000", "guess", ""); res.status != http.StatusUnauthorized {
		t.Errorf("other address, bad token: %d", res.status)
	}
	if res := f.postFrom("192.0.2.11:4000", runtimeSecret, ""); res.status != http.StatusOK {
		t.Errorf("other address, valid token: %d", res.status)
	}

	// An IPv6 client counts by its /64: a fresh address there is no fresh budget.
	for i := range 3 {
		if res := f.postFrom(fmt.Sprintf("[2001:db8:0:1::%x]:443", i+1), "guess", ""); res.status != http.StatusUnauthorized {
			t.Fatalf("IPv6 guess %d: %d", i, res.status)
		}
	}
	checkAuthLimited(t, f.postFrom("[2001:db8:0:1::ffff]:443", runtimeSecret, ""))
	if res := f.postFrom("[2001:db8:0:2::1]:443", runtimeSecret, ""); res.status != http.StatusOK {
		t.Errorf("another /64: %d", res.status)
	}

	// Behind a trusted proxy each forwarded client has its own budget; an
	// untrusted peer cannot escape its own with X-Forwarded-For.
	for i := range 3 {
		if res := f.postFrom("10.0.0.5:1000", "guess", "198.51.100.20"); res.status != http.StatusUnauthorized {
			t.Fatalf("proxied guess %d: %d", i, res.status)
		}
	}
	checkAuthLimited(t, f.postFrom("10.0.0.5:1000", "guess", "198.51.100.20"))
	if res := f.postFrom("10.0.0.5:1000", runtimeSecret, "198.51.100.21"); res.status != http.StatusOK {
		t.Errorf("another client behind the proxy: %d", res.status)
	}
	checkAuthLimited(t, f.postFrom(attacker, runtimeSecret, "198.51.100.22"))
}

// The failure limit is on unless turned off: DefaultAuthFailureLimit when
// left zero, none when negative.
func TestAuthFailureLimitDefault(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	for i := range server.DefaultAuthFailureLimit {
		if res := f.postFrom("192.0.2.20:1", "guess", ""); res.status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, res.status)
		}
	}
	checkAuthLimited(t, f.postFrom("192.0.2.20:1", "guess", ""))

	off := newServer(t, func(d *server.Deps) { d.AuthFailureLimit = -1 })
	for i := range server.DefaultAuthFailureLimit + 5 {
		if res := off.postFrom("192.0.2.20:1", "guess", ""); res.status != http.StatusUnauthorized {
			t.Fatalf("limit off, guess %d: %d", i, res.status)
		}
	}
}

// Per-request shadow lets the tool run whatever the route, so it needs
// scope shadow, or --allow-request-shadow on an open gated. Anyone else's
// ?shadow_mode=true is ignored: the call is enforced, and says so.
func TestShadowNeedsScope(t *testing.T) {
	t.Parallel()
	refused := eventWith(t, map[string]string{"recommended_route": `"refuse"`})
	withTokens := newServer(t, nil)
	tokensAndFlag := newServer(t, func(d *server.Deps) { d.AllowRequestShadow = true }) // the flag is for open gated only
	open := newServer(t, func(d *server.Deps) { d.Tokens = nil })
	openAllowed := newServer(t, func(d *server.Deps) { d.Tokens, d.AllowRequestShadow = nil, true })
	serverWide := newServer(t, func(d *server.Deps) {
		d.Engine = gate.New(gate.WithClock(func() time.Time { return fixedNow }), gate.WithShadow(true))
	})
	for _, tt := range []struct {
		name            string
		f               *fixture
		token, query    string
		shadow, ignored bool
	}{
		{"token without scope shadow", withTokens, runtimeSecret, "?shadow_mode=true", false, true},
		{"token with scope shadow", withTokens, shadowSecret, "?shadow_mode=true", true, false},
		{"token without scope, flag set", tokensAndFlag, runtimeSecret, "?shadow_mode=true", false, true},
		{"open", open, "", "?shadow_mode=true", false, true},
		{"open with --allow-request-shadow", openAllowed, "", "?shadow_mode=true", true, false},
		{"serve --shadow", serverWide, runtimeSecret, "?shadow_mode=true", true, false},
		{"not asked", withTokens, runtimeSecret, "", false, false},
		{"asked false", withTokens, runtimeSecret, "?shadow_mode=false", false, false},
	} {
		for _, path := range []string{"/pre-tool-check", "/v1/pre-tool-check", "/tool-precheck"} {
			t.Run(tt.name+path, func(t *testing.T) {
				h := map[string]string{}
				if tt.token != "" {
					h["Authorization"] = "Bearer " + tt.token
				}
				res := tt.f.do(request{method: http.MethodPost, target: path + tt.query, body: strings.NewReader(refused), header: h})
				if res.status != http.StatusOK || res.str("route") != "refuse" {
					t.Fatalf("%d %.300s", res.status, res.raw)
				}
				ep, _ := res.body["execution_policy"].(map[string]any)
				if res.body["shadow"] != tt.shadow || res.body["execute"] != tt.shadow || ep["execution_allowed"] != tt.shadow {
					t.Errorf("shadow %v execute %v execution_allowed %v, want all %v",
						res.body["shadow"], res.body["execute"], ep["execution_allowed"], tt.shadow)
				}
				if ignored, present := res.body["shadow_ignored"]; present != tt.ignored || (present && ignored != true) {
					t.Errorf("shadow_ignored %v (present %v), want present %v", ignored, present, tt.ignored)
				}
			})
		}
	}
}

// Hooks and MCP take the shadow flag from the same place, under the same rule.
func TestShadowNeedsScopeOnHooksAndMCP(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	bash := `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf build"},"tool_use_id":"t1"}`
	for _, rt := range []string{"claude-code", "codex", "copilot"} {
		for token, allowed := range map[string]bool{runtimeSecret: false, shadowSecret: true} {
			res := f.do(request{method: http.MethodPost, target: "/v1/hooks/" + rt + "?shadow_mode=true", body: strings.NewReader(bash),
				header: map[string]string{"Authorization": "Bearer " + token}})
			out, _ := res.body["hookSpecificOutput"].(map[string]any)
			if res.status != http.StatusOK || (out["permissionDecision"] == "allow") != allowed {
				t.Errorf("%s with %s: %d %s, want allowed %v", rt, token, res.status, res.raw, allowed)
			}
		}
	}

	refused := eventWith(t, map[string]string{"recommended_route": `"refuse"`})
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"aana_pre_tool_check","arguments":` + refused + `}}`
	for token, shadow := range map[string]bool{runtimeSecret: false, shadowSecret: true} {
		res := f.do(request{method: http.MethodPost, target: "/mcp?shadow_mode=true", body: strings.NewReader(call),
			header: map[string]string{"Authorization": "Bearer " + token, "Accept": "application/json, text/event-stream",
				"Mcp-Protocol-Version": "2025-06-18"}})
		var rpc struct {
			Result struct {
				StructuredContent map[string]any `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(res.raw, &rpc); err != nil || rpc.Result.StructuredContent == nil {
			t.Fatalf("mcp: %d %.300s", res.status, res.raw)
		}
		d := rpc.Result.StructuredContent
		if d["route"] != "refuse" || d["shadow"] != shadow || d["execute"] != shadow || (d["shadow_ignored"] == true) == shadow {
			t.Errorf("mcp with %s: route %v shadow %v execute %v shadow_ignored %v", token, d["route"], d["shadow"], d["execute"], d["shadow_ignored"])
		}
	}
}

// /v1/action-check and the AuthZEN routes say so too when they ignore a
// shadow request, each in its own naming: enforced without a word, a
// caller believing it shadowed would take gated's refusals for its own.
func TestShadowIgnoredOnActionAndAuthZEN(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	for token, shadow := range map[string]bool{runtimeSecret: false, shadowSecret: true} {
		res := f.do(request{method: http.MethodPost, target: "/v1/action-check?shadow_mode=true", body: strings.NewReader(specPlan),
			header: map[string]string{"Authorization": "Bearer " + token}})
		if ignored, present := res.body["shadowIgnored"]; res.status != http.StatusOK || res.body["shadow"] != shadow ||
			present == shadow || (present && ignored != true) {
			t.Errorf("action-check with %s: %d %.300s", token, res.status, res.raw)
		}
	}
	if res := f.plan(specPlan); res.status != http.StatusOK || res.body["shadowIgnored"] != nil {
		t.Errorf("action-check not asking for shadow: %d %.300s", res.status, res.raw)
	}

	a := authzenServer(t, nil, nil)
	one := `{"subject":{"type":"user","id":"alice"},"action":{"name":"read"},"resource":{"type":"record","id":"record-1"}}`
	batch := `{"subject":{"type":"user","id":"alice"},"action":{"name":"read"},"evaluations":[{"resource":{"type":"record","id":"record-1"}}]}`
	for _, tt := range []struct {
		path, body, query string
		ignored           bool
	}{
		{authzenEvaluation, one, "?shadow_mode=true", true},
		{authzenEvaluations, batch, "?shadow_mode=true", true},
		{authzenEvaluation, one, "", false},
	} {
		res := a.authzen(tt.path+tt.query, tt.body, nil)
		ctx := res.body
		if evs, ok := res.body["evaluations"].([]any); ok && len(evs) == 1 {
			ctx = evs[0].(map[string]any)
		}
		c, _ := ctx["context"].(map[string]any)
		if ignored, present := c["shadow_ignored"]; res.status != http.StatusOK || c["route"] == nil || present != tt.ignored ||
			(present && ignored != true) || c["shadow"] != nil {
			t.Errorf("%s%s: %d %.300s, want shadow_ignored %v", tt.path, tt.query, res.status, res.raw, tt.ignored)
		}
	}
}

// With tokens, /metrics needs scope metrics; open, it stays open; with
// --metrics-addr it is not on the API listener at all.
func TestMetricsNeedScope(t *testing.T) {
	t.Parallel()
	m := metrics.New("test")
	f := newServer(t, func(d *server.Deps) { d.Metrics = m })
	for _, tt := range []struct {
		token string
		want  int
	}{
		{"", http.StatusUnauthorized},
		{"guess", http.StatusUnauthorized},
		{readerSecret, http.StatusForbidden},
		{runtimeSecret, http.StatusForbidden},
		{scraperSecret, http.StatusOK},
	} {
		h := map[string]string{}
		if tt.token != "" {
			h["Authorization"] = "Bearer " + tt.token
		}
		res := f.do(request{method: http.MethodGet, target: "/metrics", header: h})
		if res.status != tt.want {
			t.Errorf("token %q: %d, want %d", tt.token, res.status, tt.want)
		}
		if tt.want != http.StatusOK && res.str("route") != "refuse" {
			t.Errorf("token %q: body %s", tt.token, res.raw)
		}
		if tt.want == http.StatusOK && !strings.Contains(string(res.raw), "gated_http_requests_total") {
			t.Errorf("scrape lacks gated_http_requests_total: %.300s", res.raw)
		}
	}
	open := newServer(t, func(d *server.Deps) { d.Tokens, d.Metrics = nil, m })
	if res := open.do(request{method: http.MethodGet, target: "/metrics"}); res.status != http.StatusOK {
		t.Errorf("open: %d", res.status)
	}
	elsewhere := newServer(t, func(d *server.Deps) { d.Metrics, d.MetricsElsewhere = m, true })
	if res := elsewhere.do(request{method: http.MethodGet, target: "/metrics", header: map[string]string{"Authorization": "Bearer " + scraperSecret}}); res.status != http.StatusNotFound {
		t.Errorf("with --metrics-addr, /metrics on the API listener: %d, want 404", res.status)
	}
}
