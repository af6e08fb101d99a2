package main

import (
	"fmt"
	"strings"
	"testing"
)

// Issue 25 §2: every spelling of a secret file is refused by the starter
// set of examples/claude-code, decided for real events through `gated hook
// claude-code` in-process. Each spelling is tried on Read and on one of the
// other file tools in turn, so every tool sees many of them while the test
// stays fast; TestClaudeCodeStarterRules has each tool's plain cases.
func TestStarterRulesRefuseEverySecretSpelling(t *testing.T) {
	t.Parallel()
	// Each tool's input for a path p.
	tools := []struct {
		name  string
		input func(p string) map[string]any
	}{
		{"Write", func(p string) map[string]any { return map[string]any{"file_path": p, "content": "x"} }},
		{"Edit", func(p string) map[string]any {
			return map[string]any{"file_path": p, "old_string": "a", "new_string": "b"}
		}},
		{"MultiEdit", func(p string) map[string]any { return map[string]any{"file_path": p, "edits": []any{}} }},
		{"NotebookEdit", func(p string) map[string]any { return map[string]any{"notebook_path": p} }},
		{"Grep", func(p string) map[string]any { return map[string]any{"pattern": "KEY", "path": p} }},
		{"Grep", func(p string) map[string]any { return map[string]any{"pattern": "KEY", "glob": p} }},
		{"Glob", func(p string) map[string]any { return map[string]any{"pattern": "*", "path": p} }},
		{"Glob", func(p string) map[string]any { return map[string]any{"pattern": p} }},
		{"apply_patch", func(p string) map[string]any {
			return map[string]any{"command": "*** Begin Patch\n*** Add File: " + p + "\n+X=1\n*** End Patch"}
		}},
		{"apply_patch", func(p string) map[string]any {
			return map[string]any{"command": "*** Begin Patch\n*** Update File: notes.md\n*** Move to: " + p + "\n@@\n-a\n+b\n*** End Patch"}
		}},
	}
	secret := []string{
		// the spellings issue 25 §2 reports
		".env ", `.\.env`, `C:\Users\u\.env`, ".env::$DATA",
		// more of the same: case, cleaning, trailing dots, streams, separators
		".ENV", ".Env.Local", "foo/../.env", "src/..\\..\\.env", ".env.", ".env. .", ".env:$DATA", ".env.local::$DATA",
		"/home/u/project/services/api/.env.production ", `\\?\C:\work\app\.env`, `\\server\share\app\.env`,
		// the credential stores it lists, with home spelled every way
		"~/.ssh/id_rsa", "~/.SSH/ID_RSA", "/home/u/.ssh//config", `C:\Users\u\.ssh\id_ed25519`, `%USERPROFILE%\.ssh\known_hosts`,
		"~root/.ssh/authorized_keys", "$HOME/.aws/credentials", "~/.aws/config", `C:\Users\u\.aws\credentials`,
		"${HOME}/.kube/config", "/root/.kube/config", "~/.config/gcloud/application_default_credentials.json",
		"$XDG_CONFIG_HOME/gcloud/credentials.db", "~/.azure/msal_token_cache.json", "~/.docker/config.json",
		"/Users/u/.docker/config.json", "~/.git-credentials", "/srv/app/.git-credentials", "~/.netrc", `C:\Users\u\_netrc`,
		"~/.npmrc", "/home/u/.npmrc", "~/../u/.pypirc", "~/.pypirc", "~/.config/gh/hosts.yml", "$XDG_CONFIG_HOME/gh/hosts.yml",
		"/proc/self/environ", "/proc/1/environ", "/proc/self/task/1/environ", "/proc/self/../1/environ", "//proc/self/environ",
		// private keys by name, anywhere
		"id_ed25519", "backup/id_rsa.", "certs/server.pem ", "certs/SERVER.PEM",
	}
	for i, p := range secret {
		other := tools[i%len(tools)]
		for _, tool := range []string{"Read", other.name} {
			input := map[string]any{"file_path": p}
			if tool != "Read" {
				input = other.input(p)
			}
			t.Run(fmt.Sprintf("%s/%q", tool, p), func(t *testing.T) {
				t.Parallel()
				code, out, stderr := runCommandHook(t, hookInput(tool, input), nil, "--catalog", claudeCatalog)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				got, reason := out.HookSpecificOutput.PermissionDecision, out.HookSpecificOutput.PermissionDecisionReason
				if got != "deny" || !strings.Contains(reason, "secret") {
					t.Fatalf("%s, want deny by a secrets rule: %s", got, reason)
				}
				if len(p) > 8 && strings.Contains(reason, p) {
					t.Errorf("the reason quotes the path: %s", reason)
				}
			})
		}
	}
	// Templates and near misses stay readable.
	for _, p := range []string{".env.example", "config/.env.sample", ".env.template", "project/.npmrc", ".env/bin/activate",
		"src/env.go", "README.md ", "/home/u/project/docs/ssh.md", "/proc/self/status"} {
		t.Run("Read/"+p, func(t *testing.T) {
			t.Parallel()
			code, out, stderr := runCommandHook(t, hookInput("Read", map[string]any{"file_path": p}), nil, "--catalog", claudeCatalog)
			if code != 0 || out.HookSpecificOutput.PermissionDecision != "allow" {
				t.Fatalf("exit %d %+v %s, want allow", code, out.HookSpecificOutput, stderr)
			}
		})
	}
}

// Grep's glob filter and Glob's pattern name files in the directory the
// call searches: {path: "~", glob: ".npmrc"} reads ~/.npmrc. (Verifying
// issue 25: these were allowed, and Grep returned the file's lines.)
func TestStarterRulesRefuseASecretInTheSearchedDirectory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tool  string
		input map[string]any
		deny  bool
	}{
		{"Grep", map[string]any{"pattern": "KEY", "path": "~", "glob": ".npmrc"}, true},
		{"Grep", map[string]any{"pattern": "KEY", "path": "/proc/self", "glob": "environ"}, true},
		{"Grep", map[string]any{"pattern": "KEY", "path": "/home/u", "glob": ".docker/config.json"}, true},
		{"Glob", map[string]any{"pattern": ".npmrc", "path": "~"}, true},
		{"Glob", map[string]any{"pattern": ".kube/config", "path": "$HOME"}, true},
		{"Grep", map[string]any{"pattern": "KEY", "path": "/home/u/project", "glob": "*.go"}, false},
		{"Glob", map[string]any{"pattern": "**/*.md", "path": "/home/u/project"}, false},
	} {
		t.Run(fmt.Sprintf("%s/%v", tc.tool, tc.input), func(t *testing.T) {
			t.Parallel()
			code, out, stderr := runCommandHook(t, hookInput(tc.tool, tc.input), nil, "--catalog", claudeCatalog)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want := map[bool]string{true: "deny", false: "allow"}[tc.deny]
			if got := out.HookSpecificOutput.PermissionDecision; got != want {
				t.Fatalf("%s, want %s: %s", got, want, out.HookSpecificOutput.PermissionDecisionReason)
			}
		})
	}
}
