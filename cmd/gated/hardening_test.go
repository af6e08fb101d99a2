package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/server"
)

// Tokens of the hardening tests' tokens file.
const (
	hardAgent   = "hardening-agent-token-0123456789"
	hardShadow  = "hardening-shadow-token-012345678"
	hardScraper = "hardening-scraper-token-01234567"
)

func hardeningTokens(t *testing.T) string {
	t.Helper()
	return tokensFile(t, token{"agent", hardAgent, "[pre_tool_check]", ""},
		token{"shadow", hardShadow, "[pre_tool_check, shadow]", ""}, token{"scraper", hardScraper, "[metrics]", ""})
}

// rawFirstAnswer sends only the head of a POST that declares length body
// bytes and expects 100-continue, and returns the first status line's code
// and, for a final answer, its body.
func rawFirstAnswer(t *testing.T, base, target string, length int64) (int, map[string]any) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A guard against hanging the suite, not a timing assertion.
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n", target, length)
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s: no answer to the request head: %v", target, err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if resp.StatusCode != http.StatusContinue {
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatalf("%s: answer %d is not JSON: %v", target, resp.StatusCode, err)
		}
	}
	return resp.StatusCode, body
}

// A real gated serve answers a declared oversize body at once, by the
// limits its flags set, instead of "100 Continue" and a wait for 100 MB.
func TestServeRefusesDeclaredOversizeBody(t *testing.T) {
	t.Parallel()
	base, _ := startServe(t, []string{"--max-body-bytes", "1000", "--max-hook-body-bytes", "2000"}, nil)
	for _, c := range []struct {
		target string
		length int64
		want   int
	}{
		{"/pre-tool-check", 100 << 20, http.StatusRequestEntityTooLarge},
		{"/pre-tool-check", 1001, http.StatusRequestEntityTooLarge},
		{"/pre-tool-check", 1000, http.StatusContinue},
		{"/mcp", 100 << 20, http.StatusRequestEntityTooLarge},
		{"/v1/hooks/claude-code", 100 << 20, http.StatusOK},
		{"/v1/hooks/claude-code", 2001, http.StatusOK},
		{"/v1/hooks/claude-code", 2000, http.StatusContinue},
	} {
		code, body := rawFirstAnswer(t, base, c.target, c.length)
		if code != c.want {
			t.Errorf("%s declaring %d bytes: first answer %d, want %d", c.target, c.length, code, c.want)
			continue
		}
		switch code {
		case http.StatusRequestEntityTooLarge:
			if body["route"] != "refuse" || body["execute"] != false {
				t.Errorf("%s: 413 body %v", c.target, body)
			}
		case http.StatusOK:
			out, _ := body["hookSpecificOutput"].(map[string]any)
			if out["permissionDecision"] != "deny" {
				t.Errorf("%s: hook answer %v, want deny", c.target, body)
			}
		}
	}
}

// Failed authentications are limited per address, on by default.
func TestServeAuthFailureLimit(t *testing.T) {
	t.Parallel()
	tokens := hardeningTokens(t)
	ev := readExample(t, "search_docs_accept.json")
	guess := map[string]string{"Authorization": "Bearer guess"}
	valid := map[string]string{"Authorization": "Bearer " + hardAgent}

	base, _ := startServe(t, []string{"--tokens", tokens, "--auth-failure-limit", "2"}, nil)
	for i := range 2 {
		if code, _ := post(t, base+"/pre-tool-check", ev, guess); code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, code)
		}
	}
	for _, hdr := range []map[string]string{guess, valid} {
		status, raw := send(t, http.MethodPost, base+"/pre-tool-check", strings.NewReader(ev), hdr)
		var d map[string]any
		_ = json.Unmarshal(raw, &d)
		if status != http.StatusTooManyRequests || d["route"] != "refuse" {
			t.Fatalf("%v after 2 failures: %d %s, want 429", hdr, status, raw)
		}
	}
	resp, err := http.Post(base+"/pre-tool-check", "application/json", strings.NewReader(ev))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != http.StatusTooManyRequests || err != nil || n < 1 {
		t.Errorf("no token after 2 failures: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	// Without the flag the default applies; 0 (here from the environment) turns it off.
	def, _ := startServe(t, []string{"--tokens", tokens}, nil)
	off, _ := startServe(t, []string{"--tokens", tokens}, map[string]string{"GATED_AUTH_FAILURE_LIMIT": "0"})
	for i := range server.DefaultAuthFailureLimit {
		if code, _ := post(t, def+"/pre-tool-check", ev, guess); code != http.StatusUnauthorized {
			t.Fatalf("default, guess %d: %d", i, code)
		}
	}
	if code, _ := post(t, def+"/pre-tool-check", ev, guess); code != http.StatusTooManyRequests {
		t.Errorf("default, guess %d: %d, want 429", server.DefaultAuthFailureLimit, code)
	}
	for i := range server.DefaultAuthFailureLimit + 5 {
		if code, _ := post(t, off+"/pre-tool-check", ev, guess); code != http.StatusUnauthorized {
			t.Fatalf("limit off, guess %d: %d", i, code)
		}
	}
}

// ?shadow_mode=true takes effect for a token with scope shadow, or on an
// open gated started with --allow-request-shadow; otherwise it is enforced.
func TestServeRequestShadow(t *testing.T) {
	t.Parallel()
	ev := readExample(t, "delete_database_refuse.json")
	withTokens, _ := startServe(t, []string{"--tokens", hardeningTokens(t)}, nil)
	open, _ := startServe(t, nil, nil)
	openAllowed, _ := startServe(t, []string{"--allow-request-shadow"}, nil)
	for _, c := range []struct {
		name            string
		base            string
		hdr             map[string]string
		shadow, ignored bool
	}{
		{"token without scope shadow", withTokens, map[string]string{"Authorization": "Bearer " + hardAgent}, false, true},
		{"token with scope shadow", withTokens, map[string]string{"Authorization": "Bearer " + hardShadow}, true, false},
		{"open", open, nil, false, true},
		{"open with --allow-request-shadow", openAllowed, nil, true, false},
	} {
		code, d := post(t, c.base+"/pre-tool-check?shadow_mode=true", ev, c.hdr)
		if code != http.StatusOK || d["route"] != "refuse" || d["shadow"] != c.shadow || d["execute"] != c.shadow || (d["shadow_ignored"] == true) != c.ignored {
			t.Errorf("%s: %d route %v shadow %v execute %v shadow_ignored %v", c.name, code, d["route"], d["shadow"], d["execute"], d["shadow_ignored"])
		}
	}
	// The command hook's --shadow asks the same way, and is enforced without the right.
	code, out, stderr := runCommandHook(t, hookInput("Bash", map[string]any{"command": "rm -rf build"}), nil, "--shadow", "--url", open)
	if code != 0 || out.HookSpecificOutput.PermissionDecision == "allow" {
		t.Errorf("gated hook --shadow against a gated without --allow-request-shadow: exit %d %+v %s", code, out.HookSpecificOutput, stderr)
	}
}

// With tokens, /metrics needs scope metrics on the API listener; on its
// own --metrics-addr listener it needs none and the API listener has none.
func TestServeMetricsAccess(t *testing.T) {
	t.Parallel()
	tokens := hardeningTokens(t)
	base, _ := startServe(t, []string{"--tokens", tokens}, nil)
	for _, c := range []struct {
		hdr  map[string]string
		want int
	}{
		{nil, http.StatusUnauthorized},
		{map[string]string{"Authorization": "Bearer " + hardAgent}, http.StatusForbidden},
		{map[string]string{"Authorization": "Bearer " + hardScraper}, http.StatusOK},
	} {
		if code, raw := send(t, http.MethodGet, base+"/metrics", nil, c.hdr); code != c.want {
			t.Errorf("%v: %d %.200s, want %d", c.hdr, code, raw, c.want)
		}
	}

	maddr := freeAddr(t)
	base, _ = startServe(t, []string{"--tokens", tokens, "--metrics-addr", maddr}, nil)
	if code, _ := send(t, http.MethodGet, base+"/metrics", nil, map[string]string{"Authorization": "Bearer " + hardScraper}); code != http.StatusNotFound {
		t.Errorf("API listener with --metrics-addr: %d, want 404", code)
	}
	// The metrics listener opens just after the API one: wait for it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + maddr + "/metrics")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("metrics listener: %d, want 200 without a token", resp.StatusCode)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics listener never answered: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServeHardeningFlagErrors(t *testing.T) {
	t.Parallel()
	tokens := hardeningTokens(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--auth-failure-limit", "-1"}, "--auth-failure-limit"},
		{[]string{"--allow-request-shadow", "--tokens", tokens}, "scope shadow"},
	} {
		err := run(context.Background(), append([]string{"gated", "serve", "--addr", freeAddr(t)}, c.args...), env(nil), nil, io.Discard, io.Discard)
		var ex exitError
		if !errors.As(err, &ex) || ex.code != exitUsage || !strings.Contains(ex.msg, c.want) {
			t.Errorf("%v: got %v, want a usage error naming %s", c.args, err, c.want)
		}
	}
}
