package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/gatedhq/gated/internal/hookcmd"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/testgated"
)

const claudeCatalog = "../../examples/claude-code/catalog"

// hookInput is a Claude Code PreToolUse hook input with every documented field.
func hookInput(tool string, input map[string]any) string {
	b, _ := json.Marshal(map[string]any{
		"session_id": "6f1c2f0e-2b7a-4c1e-9a55-0d5d1c1e2f3a", "transcript_path": "/home/u/.claude/projects/p/t.jsonl",
		"cwd": "/home/u/project", "permission_mode": "default", "hook_event_name": "PreToolUse",
		"tool_name": tool, "tool_input": input, "tool_use_id": "toolu_01ABC",
	})
	return string(b)
}

type hookOut struct {
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`
}

// runCommandHook runs `gated hook claude-code args…` with stdin and returns
// its exit code, the parsed answer (exit 0) and stderr.
func runCommandHook(t *testing.T, stdin string, kv map[string]string, args ...string) (int, hookOut, string) {
	t.Helper()
	return runHookCommand(t, "claude-code", stdin, kv, args...)
}

// runHookCommand runs `gated hook RUNTIME args…` with stdin.
func runHookCommand(t *testing.T, runtime, stdin string, kv map[string]string, args ...string) (int, hookOut, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"gated", "hook", runtime}, args...), env(kv), strings.NewReader(stdin), &stdout, &stderr)
	code := exitCode(err)
	var out hookOut
	if code == 0 {
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("exit 0 with an unreadable answer %q: %v", stdout.String(), err)
		}
		if out.HookSpecificOutput.HookEventName != "PreToolUse" {
			t.Fatalf("answer lacks hookEventName PreToolUse: %s", stdout.String())
		}
	} else if stdout.Len() != 0 {
		t.Fatalf("exit %d with output on stdout %q", code, stdout.String())
	}
	if err != nil {
		stderr.WriteString(err.Error())
	}
	return code, out, stderr.String()
}

// The same decisions through the command hook in-process, the command hook
// against a real gated, and the HTTP hook of that gated.
func TestClaudeCodeHookDecisions(t *testing.T) {
	t.Parallel()
	base, _ := startServe(t, []string{"--catalog", claudeCatalog}, nil)
	cases := []struct {
		tool  string
		input map[string]any
		want  string
		in    string // a word the reason must hold
	}{
		{"Read", map[string]any{"file_path": "README.md"}, "allow", "allows"},
		{"Grep", map[string]any{"pattern": "TODO", "path": "."}, "allow", "allows"},
		{"Write", map[string]any{"file_path": "a.go", "content": "package a"}, "ask", "write needs validation or confirmation"},
		{"Bash", map[string]any{"command": "make build"}, "ask", "risk_level 2"},
		{"WebFetch", map[string]any{"url": "https://example.com", "prompt": "summarise"}, "ask", "approval always"},
		{"mcp__github__create_issue", map[string]any{"owner": "o", "repo": "r", "title": "t"}, "ask", "risk_level 2"},
		{"mcp__unknown__tool", map[string]any{}, "ask", "not described by any loaded catalog"},
		{"Read", map[string]any{"file_path": 7}, "deny", "file_path"},
	}
	for _, tc := range cases {
		t.Run(tc.tool+"/"+tc.want, func(t *testing.T) {
			body := hookInput(tc.tool, tc.input)
			check := func(how string, o hookOut) {
				t.Helper()
				if o.HookSpecificOutput.PermissionDecision != tc.want || !strings.Contains(o.HookSpecificOutput.PermissionDecisionReason, tc.in) {
					t.Fatalf("%s: %s %q; want %s with %q", how, o.HookSpecificOutput.PermissionDecision, o.HookSpecificOutput.PermissionDecisionReason, tc.want, tc.in)
				}
			}
			code, local, stderr := runCommandHook(t, body, nil, "--catalog", claudeCatalog)
			if code != 0 {
				t.Fatalf("in-process command hook exit %d: %s", code, stderr)
			}
			check("in-process", local)
			code, remote, stderr := runCommandHook(t, body, nil, "--url", base)
			if code != 0 {
				t.Fatalf("remote command hook exit %d: %s", code, stderr)
			}
			check("command hook", remote)
			var httpOut hookOut
			status, raw := postRaw(t, base+"/v1/hooks/claude-code", body, nil)
			if status != 200 || json.Unmarshal(raw, &httpOut) != nil {
				t.Fatalf("HTTP hook: %d %s", status, raw)
			}
			check("HTTP hook", httpOut)
		})
	}
}

// Every failure of the command hook exits 2, which is what blocks the tool
// in Claude Code; every failure of the HTTP hook is a 200 deny.
func TestClaudeCodeHookFailuresBlock(t *testing.T) {
	t.Parallel()
	const token = "claude-code-hook-token-0123456789"
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("- name: cc\n  sha256: "+auth.Hash(token)+"\n  scopes: [pre_tool_check]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, _ := startServe(t, []string{"--catalog", claudeCatalog, "--tokens", tokens, "--rate-limit", "1000"}, nil)
	read := hookInput("Read", map[string]any{"file_path": "README.md"})
	withToken := map[string]string{"GATED_TOKEN": token}

	if code, out, _ := runCommandHook(t, read, withToken, "--url", base); code != 0 || out.HookSpecificOutput.PermissionDecision != "allow" {
		t.Fatalf("the working path must allow first: exit %d %+v", code, out)
	}
	silent := testgated.SilentAddr(t)
	for _, tc := range []struct {
		name, stdin string
		kv          map[string]string
		args        []string
		stderr      string
	}{
		{"gated down", read, withToken, []string{"--url", "http://" + testgated.ClosedAddr(t)}, "gated_unreachable"},
		{"no answer in time", read, withToken, []string{"--url", "http://" + silent, "--timeout", "200ms"}, "gated_timeout"},
		{"no token", read, nil, []string{"--url", base}, "unauthorized"},
		{"wrong token", read, map[string]string{"GATED_TOKEN": "nope"}, []string{"--url", base}, "unauthorized"},
		{"not JSON", "{not json", withToken, []string{"--url", base}, "malformed JSON"},
		{"a proxy's error page", read, withToken, []string{"--url", base + "/no-such-prefix"}, "gated_http_404"},
		{"bad stdin in-process", "[]", nil, []string{"--catalog", claudeCatalog}, "JSON object"},
		{"no tool name", `{"hook_event_name":"PreToolUse","tool_input":{}}`, nil, []string{"--catalog", claudeCatalog}, "names no tool"},
		{"another hook event", `{"hook_event_name":"PostToolUse","tool_name":"Read"}`, nil, []string{"--catalog", claudeCatalog}, "PreToolUse hooks only"},
		{"broken catalog", read, nil, []string{"--catalog", t.TempDir() + "/missing"}, "catalog"},
		{"unknown flag", read, nil, []string{"--frobnicate"}, "bad flags"},
		{"hook claims confirmed", read, nil, []string{"--catalog", claudeCatalog, "--authorization-state", "confirmed"}, "may vouch for"},
		{"catalog with --url", read, withToken, []string{"--url", base, "--catalog", claudeCatalog}, "in-process"},
	} {
		t.Run("command/"+tc.name, func(t *testing.T) {
			code, out, stderr := runCommandHook(t, tc.stdin, tc.kv, tc.args...)
			if code == 0 && out.HookSpecificOutput.PermissionDecision == "deny" {
				// gated itself refused the call: the deny it answered blocks too.
				stderr = out.HookSpecificOutput.PermissionDecisionReason
			} else if code != hookcmd.BlockExit {
				t.Fatalf("exit %d, answer %+v; want a block", code, out)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d, stderr %q; want exit 2 naming %q", code, stderr, tc.stderr)
			}
		})
	}
	for _, tc := range []struct {
		name, body string
		hdr        map[string]string
		reason     string
	}{
		{"no token", read, nil, "unauthorized"},
		{"wrong token", read, map[string]string{"Authorization": "Bearer nope"}, "unauthorized"},
		{"not JSON", "{not json", map[string]string{"Authorization": "Bearer " + token}, "malformed JSON"},
		{"not an object", "[1]", map[string]string{"Authorization": "Bearer " + token}, "JSON object"},
		{"no tool", `{"tool_input":{}}`, map[string]string{"Authorization": "Bearer " + token}, "names no tool"},
		{"tool_input of the wrong type", `{"tool_name":"Read","tool_input":"x"}`, map[string]string{"Authorization": "Bearer " + token}, "wrong type"},
		{"too large", `{"tool_name":"Write","tool_input":{"content":"` + strings.Repeat("a", 2<<20) + `"}}`, map[string]string{"Authorization": "Bearer " + token}, "exceeds"},
	} {
		t.Run("http/"+tc.name, func(t *testing.T) {
			status, raw := postRaw(t, base+"/v1/hooks/claude-code", tc.body, tc.hdr)
			var o hookOut
			if status != 200 || json.Unmarshal(raw, &o) != nil || o.HookSpecificOutput.PermissionDecision != "deny" ||
				!strings.Contains(o.HookSpecificOutput.PermissionDecisionReason, tc.reason) {
				t.Fatalf("status %d %s; want 200 deny naming %q", status, raw, tc.reason)
			}
		})
	}
}

// An audit sink that cannot take the record refuses the call; through the
// HTTP hook that is a deny.
func TestClaudeCodeHookDeniesWhenAuditFails(t *testing.T) {
	t.Parallel()
	// /dev/full opens fine and fails every write (ENOSPC): a full disk.
	base, _ := startServe(t, []string{"--catalog", claudeCatalog, "--audit-file", "/dev/full", "--audit-durability", "sync"}, nil)
	status, raw := postRaw(t, base+"/v1/hooks/claude-code", hookInput("Read", map[string]any{"file_path": "README.md"}), nil)
	var o hookOut
	if status != 200 || json.Unmarshal(raw, &o) != nil || o.HookSpecificOutput.PermissionDecision != "deny" {
		t.Fatalf("status %d %s; want a 200 deny", status, raw)
	}
}

func postRaw(t *testing.T, url, body string, hdr map[string]string) (int, []byte) {
	t.Helper()
	return send(t, http.MethodPost, url, strings.NewReader(body), hdr)
}

// --shadow lets every call run and says what gated would have done, in
// process and against a real gated.
func TestHookShadow(t *testing.T) {
	t.Parallel()
	// Open, so per-request shadow must be allowed explicitly.
	base, _ := startServe(t, []string{"--catalog", claudeCatalog, "--allow-request-shadow"}, nil)
	bash := hookInput("Bash", map[string]any{"command": "rm -rf /srv/build"})
	for _, args := range [][]string{{"--shadow", "--catalog", claudeCatalog}, {"--shadow", "--url", base}} {
		code, out, stderr := runCommandHook(t, bash, nil, args...)
		o := out.HookSpecificOutput
		if code != 0 || o.PermissionDecision != "allow" || !strings.Contains(o.PermissionDecisionReason, "would refuse") {
			t.Fatalf("%v: exit %d %+v %s", args, code, o, stderr)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"gated", "hook", "copilot"}, env(nil), strings.NewReader("{}"), &stdout, &stderr); exitCode(err) != hookcmd.BlockExit {
		t.Fatalf("gated hook copilot: %v; the Copilot SDK has no command hook", err)
	}
}
