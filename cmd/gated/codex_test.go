package main

import (
	"encoding/json"
	"github.com/gatedhq/gated/internal/hookcmd"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/testgated"
)

// codexInput is a Codex PreToolUse hook input with the fields Codex sends
// (transcript_path may be null; turn_id and model are Codex's own).
func codexInput(tool string, input map[string]any) string {
	b, _ := json.Marshal(map[string]any{
		"session_id": "0199a213-81c0-7800-8aa1-bbab2a035a53", "turn_id": "turn-1", "transcript_path": nil,
		"cwd": "/home/u/project", "hook_event_name": "PreToolUse", "model": "gpt-5-codex", "permission_mode": "default",
		"tool_name": tool, "tool_input": input, "tool_use_id": "call_abc123",
	})
	return string(b)
}

// TestCodexHook runs Codex's inputs through `gated hook codex` against a
// real gated and in-process: reads the catalog allows pass, everything a
// person would have to approve is denied (Codex cannot ask), and every
// failure exits 2.
func TestCodexHook(t *testing.T) {
	t.Parallel()
	catalog := t.TempDir()
	tool := filepath.Join(catalog, "docs-search")
	if err := os.MkdirAll(tool, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tool, "TOOL.md"), []byte("---\nname: docs search\nid: docs.search\ndescription: Search the docs.\nversion: 1.0.0\nrisk_level: 0\ninputs: { type: object }\noutputs: { type: object }\nmetadata:\n  gated:\n    aliases: [mcp__docs__search]\n---\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const token = "codex-hook-token-0123456789abcdef"
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("- name: codex\n  sha256: "+auth.Hash(token)+"\n  scopes: [pre_tool_check]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, _ := startServe(t, []string{"--catalog", claudeCatalog, "--catalog", catalog, "--tokens", tokens}, nil)
	withToken := map[string]string{"GATED_TOKEN": token}

	for _, tc := range []struct {
		tool  string
		input map[string]any
		want  string
		in    string
	}{
		{"mcp__docs__search", map[string]any{"query": "context"}, "allow", "allows"},
		{"Bash", map[string]any{"command": "go test ./..."}, "deny", "Codex cannot ask"},
		{"apply_patch", map[string]any{"command": "*** Begin Patch\n*** Update File: a.go\n@@\n-a\n+b\n*** End Patch"}, "deny", "Codex cannot ask"},
		{"apply_patch", map[string]any{"command": "*** Begin Patch\n*** Update File: config/.env\n@@\n-A=1\n+A=2\n*** End Patch"}, "deny", "patches to secrets files"},
		{"mcp__unknown__tool", map[string]any{}, "deny", "not described by any loaded catalog"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			for _, args := range [][]string{{"--url", base}, {"--catalog", claudeCatalog, "--catalog", catalog}} {
				code, out, stderr := runHookCommand(t, "codex", codexInput(tc.tool, tc.input), withToken, args...)
				o := out.HookSpecificOutput
				if code != 0 || o.PermissionDecision != tc.want || !strings.Contains(o.PermissionDecisionReason, tc.in) {
					t.Fatalf("%v: exit %d %+v %s; want %s with %q", args, code, o, stderr, tc.want, tc.in)
				}
			}
		})
	}
	read := codexInput("mcp__docs__search", map[string]any{"query": "x"})
	for _, tc := range []struct {
		name, stdin string
		kv          map[string]string
		args        []string
		in          string
	}{
		{"gated down", read, withToken, []string{"--url", "http://" + testgated.ClosedAddr(t)}, "gated_unreachable"},
		{"no answer in time", read, withToken, []string{"--url", "http://" + testgated.SilentAddr(t), "--timeout", "200ms"}, "gated_timeout"},
		{"bad token", read, map[string]string{"GATED_TOKEN": "nope"}, []string{"--url", base}, "unauthorized"},
		{"bad body", "{", withToken, []string{"--url", base}, "malformed JSON"},
		{"bad body in-process", "{", nil, []string{"--catalog", catalog}, "malformed JSON"},
	} {
		t.Run("failure/"+tc.name, func(t *testing.T) {
			code, out, stderr := runHookCommand(t, "codex", tc.stdin, tc.kv, tc.args...)
			if code == 0 && out.HookSpecificOutput.PermissionDecision == "deny" {
				stderr = out.HookSpecificOutput.PermissionDecisionReason // gated itself refused
			} else if code != hookcmd.BlockExit {
				t.Fatalf("exit %d %+v; want a block", code, out)
			}
			if !strings.Contains(stderr, tc.in) {
				t.Fatalf("reason %q lacks %q", stderr, tc.in)
			}
		})
	}
	// The HTTP endpoint answers Codex's shape too (what --url forwards to):
	// a shell line that only reads in the workspace is allowed, as Codex's
	// only way to read is its shell; any other is denied, as Codex cannot ask.
	for cmd, want := range map[string]string{"ls": "allow", "npm test": "deny"} {
		status, raw := postRaw(t, base+"/v1/hooks/codex", codexInput("Bash", map[string]any{"command": cmd}), map[string]string{"Authorization": "Bearer " + token})
		var o hookOut
		if status != 200 || json.Unmarshal(raw, &o) != nil || o.HookSpecificOutput.PermissionDecision != want {
			t.Fatalf("POST /v1/hooks/codex %q: %d %s; want %s", cmd, status, raw, want)
		}
	}
}
