package doctor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/testgated"
	"github.com/gatedhq/gated/internal/testtree"
)

// trustedCodex writes the example Codex hook for url into m's
// ~/.codex/config.toml with the trust record Codex would write.
func trustedCodex(t *testing.T, m *machine, url string) {
	t.Helper()
	config := filepath.Join(m.home, ".codex", "config.toml")
	gated := gatedBin(t)
	identity, _ := codexIdentity(new(".*"), map[string]any{"command": gated + " hook codex --url " + url + " --token-env GATED_TOKEN --timeout 5s", "timeout": int64(10)})
	testtree.Write(t, filepath.Dir(config), map[string]string{"config.toml": exampleHook(gated, url) + trustRecord(config, codexHash(identity))})
}

// TestCanaryReachesTheAudit runs the canary through a trusted Codex hook
// into a real gated that stores decisions in PostgreSQL, and reads the
// canary's decision back: with the hook's token, which may not read
// decisions, it cannot; with a reader's token it finds it.
func TestCanaryReachesTheAudit(t *testing.T) {
	t.Parallel()
	const hookToken, readerToken = "doctor-hook-token-0123456789abcdef", "doctor-reader-token-0123456789abcdef"
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("- name: hook\n  sha256: "+auth.Hash(hookToken)+"\n  scopes: [pre_tool_check]\n"+
		"- name: reader\n  sha256: "+auth.Hash(readerToken)+"\n  scopes: [decisions_read]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, dbURL := pgtest.Fresh(t)
	g := testgated.Start(t, "--catalog", exampleCatalog, "--tokens", tokens, "--database-url", dbURL,
		"--audit-hmac-key", "0123456789abcdef0123456789abcdef")

	m := newMachine(t, "GATED_TOKEN="+hookToken, "READER_TOKEN="+readerToken)
	trustedCodex(t, m, g.URL)
	r := m.doctor(t, "codex", true)
	want(t, r, "present", OK, "a command hook on PreToolUse with matcher")
	want(t, r, "canary", OK, "answered deny", "Codex cannot ask", "(decision ")
	want(t, r, "audit", Unverified, "$GATED_TOKEN may not read decisions", "--audit-token-env")

	r, err := Run(t.Context(), "codex", Options{Environ: m.env, Dir: m.project, Managed: []string{}, AuditTokenEnv: "READER_TOKEN"})
	if err != nil {
		t.Fatal(err)
	}
	want(t, r, "audit", OK, "gated's audit holds the canary's decision", "tool gated_doctor_canary, agent codex, request gated-doctor-")
	if !r.Protected() || !strings.Contains(text(r), "Everything holds") {
		t.Fatalf("not protected:\n%s", text(r))
	}
	// Every runtime's canary, in its own input shape and on each of its
	// events (a line per event, so each runs), reaches the audit as the
	// call doctor meant: audit checks the tool gated recorded.
	for _, rt := range Runtimes() {
		if rt == "codex" {
			continue
		}
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			m := newMachine(t, "GATED_TOKEN="+hookToken, "READER_TOKEN="+readerToken)
			line := testgated.HookBinary(t) + " " + rt + " --url " + g.URL
			files := runtimeConfig(t, rt, line)
			for name, content := range files {
				parts := strings.Split(content, line)
				var b strings.Builder
				for i, p := range parts {
					if i > 0 {
						b.WriteString(strings.Replace(line, "--url ", []string{"--url ", "--url=", "-url ", "-url="}[(i-1)%4], 1))
					}
					b.WriteString(p)
				}
				files[name] = b.String()
			}
			m.write(t, files)
			r, err := Run(t.Context(), rt, Options{Environ: m.env, Dir: m.project, Managed: []string{}, AuditTokenEnv: "READER_TOKEN"})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range r.Hooks {
				audited := false
				for _, c := range h.Checks {
					if c.Name == "audit" {
						// Windsurf's allow (of a read) is exit 0 alone, with no
						// decision id.
						audited = c.Status == OK && strings.Contains(c.Detail, "(tool ") ||
							h.Event == "pre_read_code" && strings.Contains(c.Detail, "no decision id")
					}
				}
				if !audited {
					t.Fatalf("%s on %s: no audit record of the canary:\n%s", rt, h.Event, text(r))
				}
			}
		})
	}
	for _, secret := range []string{hookToken, readerToken} {
		b, _ := json.Marshal(r)
		if strings.Contains(text(r), secret) || strings.Contains(string(b), secret) {
			t.Fatal("the report shows a token")
		}
	}
}

// TestCanaryThroughClaudeCodeHooks runs the canary through both of Claude
// Code's example hooks into a real gated that keeps its audit in a file.
func TestCanaryThroughClaudeCodeHooks(t *testing.T) {
	t.Parallel()
	g := testgated.Start(t, "--catalog", exampleCatalog)
	gated := gatedBin(t)
	for name, h := range map[string]map[string]any{
		"command": {"type": "command", "command": gated + " hook claude-code --url " + g.URL, "timeout": 10, "onFailure": "block"},
		"http":    {"type": "http", "url": g.URL + "/v1/hooks/claude-code", "timeout": 10, "onFailure": "block"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := newMachine(t)
			testtree.Write(t, m.project, map[string]string{".claude/settings.json": claudeSettingsFile(t, "*", h, nil)})
			r := m.doctor(t, "claude-code", true)
			// An unknown tool is deferred, and Claude Code asks the person.
			want(t, r, "canary", OK, "answered ask", "gated defers this call to a person", "(decision ")
			want(t, r, "audit", Unverified, "stores its audit in a file", "--audit-file", "gated-audit.jsonl")
			if !r.Protected() {
				t.Fatalf("not protected:\n%s", text(r))
			}
		})
	}
}

// TestCanaryFindsWhatConfigurationCannot: faults only running the hook
// shows.
func TestCanaryFindsWhatConfigurationCannot(t *testing.T) {
	t.Parallel()
	gated := gatedBin(t)
	down := "http://" + testgated.ClosedAddr(t)
	shadow := testgated.Start(t, "--catalog", exampleCatalog, "--shadow")

	t.Run("gated is down: the command hook blocks everything", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		trustedCodex(t, m, down)
		r := m.doctor(t, "codex", true)
		want(t, r, "canary", Problem, "blocked the canary on a failure of its own", "gated_unreachable", "every tool call is blocked")
		if s := text(r); !strings.Contains(s, "Codex is protected, but every tool call it makes is blocked") || strings.Contains(s, "not protected") {
			t.Fatalf("the summary should say the hook blocks every call, not that Codex is unprotected:\n%s", s)
		}
	})
	t.Run("gated is down: the HTTP hook cannot connect", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		testtree.Write(t, m.home, map[string]string{".claude/settings.json": claudeSettingsFile(t, "*",
			map[string]any{"type": "http", "url": down + "/v1/hooks/claude-code", "onFailure": "block"}, nil)})
		want(t, m.doctor(t, "claude-code", true), "canary", Problem, "could not reach", `onFailure "block" blocks every tool call`)
	})
	t.Run("gated runs in shadow mode", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		testtree.Write(t, m.home, map[string]string{".claude/settings.json": claudeSettingsFile(t, "*",
			map[string]any{"type": "command", "command": fmt.Sprintf("%s hook claude-code --url %s", gated, shadow.URL), "onFailure": "block"}, nil)})
		want(t, m.doctor(t, "claude-code", true), "canary", Problem, "shadow mode and allows every call")
	})
	t.Run("a hook that answers nothing a runtime reads", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		// A wrapper script doctor cannot read, which echoes the input
		// back instead of asking gated.
		testtree.Write(t, m.home, map[string]string{".claude/settings.json": claudeSettingsFile(t, "*",
			map[string]any{"type": "command", "command": "cat; : gated hook claude-code"}, nil)})
		r := m.doctor(t, "claude-code", true)
		want(t, r, "fails closed", Unverified, "not one command doctor can read")
		want(t, r, "canary", Problem, "not one Claude Code reads", "no known decision", "runs the tool")
	})
}

// TestTheExamplesPass: each example configuration, pointed at a real gated,
// passes doctor (Codex's once trusted), so an edit that makes one fail open
// fails here.
func TestTheExamplesPass(t *testing.T) {
	t.Parallel()
	g := testgated.Start(t, "--catalog", exampleCatalog)
	examples := filepath.Join(filepath.Dir(exampleCatalog), "..")
	point := func(t *testing.T, file string) string {
		raw, err := os.ReadFile(filepath.Join(examples, file))
		if err != nil {
			t.Fatal(err)
		}
		// gated and gated-hook by their absolute paths, whichever form the
		// example uses.
		return strings.NewReplacer("http://127.0.0.1:8080", g.URL, "gated-hook", testgated.HookBinary(t),
			"command -v gated ", "command -v "+gatedBin(t)+" ", "gated hook", gatedBin(t)+" hook").Replace(string(raw))
	}
	for _, file := range []string{"claude-code/settings.command.json", "claude-code/settings.http.json"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			m := newMachine(t)
			testtree.Write(t, m.project, map[string]string{".claude/settings.json": point(t, file)})
			if r := m.doctor(t, "claude-code", true); !r.Protected() || len(r.Hooks) != 1 {
				t.Fatalf("%s:\n%s", file, text(r))
			}
		})
	}
	for example, dest := range map[string]string{
		"copilot-cli/settings.json":    "home/.copilot/settings.json",
		"gemini-cli/settings.json":     "home/.gemini/settings.json",
		"cursor/hooks.json":            "home/.cursor/hooks.json",
		"cline/PreToolUse":             "project/.clinerules/hooks/PreToolUse",
		"goose/gated/hooks/hooks.json": "home/.agents/plugins/gated/hooks/hooks.json",
		"windsurf/hooks.json":          "home/.codeium/windsurf/hooks.json",
		"kiro-cli/gated.json":          "home/.kiro/agents/gated.json",
		"droid/hooks.json":             "home/.factory/hooks.json",
		"qwen-code/settings.json":      "home/.qwen/settings.json",
	} {
		rt := strings.SplitN(example, "/", 2)[0]
		t.Run(example, func(t *testing.T) {
			t.Parallel()
			m := newMachine(t)
			m.write(t, map[string]string{dest: point(t, example)})
			r := m.doctor(t, rt, true)
			if !r.Protected() || len(r.Hooks) == 0 || !strings.Contains(text(r), "(decision ") {
				t.Fatalf("%s:\n%s", example, text(r))
			}
		})
	}
	t.Run("amp", func(t *testing.T) {
		t.Parallel()
		// Amp finds the delegate program, gated-amp, on its PATH.
		m := newMachine(t)
		m.env = append(m.env, "PATH="+filepath.Join(m.home, "bin")+":"+os.Getenv("PATH"))
		m.write(t, map[string]string{"home/.config/amp/settings.json": point(t, "amp/settings.json"), "home/bin/gated-amp": point(t, "amp/gated-amp")})
		r := m.doctor(t, "amp", true)
		if !r.Protected() || len(r.Hooks) != 1 || !strings.Contains(text(r), "(decision ") || !strings.Contains(text(r), "`gated-hook amp` exits 2") {
			t.Fatalf("amp:\n%s", text(r))
		}
	})
	t.Run("opencode/opencode.json", func(t *testing.T) {
		t.Parallel()
		// The example names the checkout's built plugin; a stand-in file
		// takes its place, as doctor only checks that it is there.
		m := newMachine(t)
		m.write(t, map[string]string{"project/opencode.json": strings.ReplaceAll(point(t, "opencode/opencode.json"), "/path/to/gated", "{root}/gated"),
			"gated/sdk/typescript/dist/opencode.js": "export default async function plugin() { return {} }\n"})
		r := m.doctor(t, "opencode", true)
		if !r.Protected() || len(r.Hooks) != 1 || !strings.Contains(text(r), "(decision ") || !strings.Contains(text(r), g.URL+"/v1/hooks/opencode") {
			t.Fatalf("opencode:\n%s", text(r))
		}
	})
	t.Run("codex/config.toml", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		config := filepath.Join(m.home, ".codex", "config.toml")
		testtree.Write(t, filepath.Dir(config), map[string]string{"config.toml": point(t, "codex/config.toml")})
		cfg, err := loadCodex(&Options{Environ: m.env, Dir: m.project, Managed: []string{}}, nil)
		if err != nil || len(cfg.hooks) != 1 {
			t.Fatalf("%+v %v", cfg, err)
		}
		appendFile(t, config, trustRecord(config, cfg.hooks[0].hash))
		if r := m.doctor(t, "codex", true); !r.Protected() || len(r.Hooks) != 1 {
			t.Fatalf("codex/config.toml:\n%s", text(r))
		}
	})
}
