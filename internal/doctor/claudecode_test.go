package doctor

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/testtree"
)

// claudeSettingsFile is a settings file with one PreToolUse handler.
func claudeSettingsFile(t *testing.T, matcher any, handler map[string]any, extra map[string]any) string {
	t.Helper()
	group := map[string]any{"hooks": []any{handler}}
	if matcher != nil {
		group["matcher"] = matcher
	}
	s := map[string]any{"hooks": map[string]any{"PreToolUse": []any{group}}}
	for k, v := range extra {
		s[k] = v
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestClaudeCodeConfiguration reads Claude Code settings a user may have
// and names each problem.
func TestClaudeCodeConfiguration(t *testing.T) {
	t.Parallel()
	gated := gatedBin(t)
	const url = "http://127.0.0.1:8080"
	command := func(extra ...string) map[string]any {
		return map[string]any{"type": "command", "command": strings.Join(append([]string{gated, "hook claude-code --url", url}, extra...), " "),
			"timeout": 10, "onFailure": "block"}
	}
	httpHook := map[string]any{"type": "http", "url": url + "/v1/hooks/claude-code", "timeout": 10,
		"headers": map[string]any{"Authorization": "Bearer $GATED_TOKEN"}, "allowedEnvVars": []any{"GATED_TOKEN"}, "onFailure": "block"}

	t.Run("nothing configured", func(t *testing.T) {
		t.Parallel()
		want(t, newMachine(t).doctor(t, "claude-code", false), "present", Problem, "no PreToolUse hook of Claude Code calls gated")
	})

	t.Run("the examples hold, wherever they are merged", func(t *testing.T) {
		t.Parallel()
		for _, where := range []string{"home/.claude/settings.json", "project/.claude/settings.json", "project/.claude/settings.local.json"} {
			for _, h := range []map[string]any{command(), httpHook} {
				m := newMachine(t, "GATED_TOKEN=a-token")
				testtree.Write(t, filepath.Dir(m.home), map[string]string{where: claudeSettingsFile(t, "*", h, nil)})
				r := m.doctor(t, "claude-code", false)
				if !r.Protected() || len(r.Hooks) != 1 || !strings.HasSuffix(r.Hooks[0].Source, filepath.FromSlash(where[strings.Index(where, "/"):])) {
					t.Fatalf("%s in %s:\n%s", h["type"], where, text(r))
				}
				want(t, r, "points at", OK, url, "$GATED_TOKEN (set)")
				if strings.Contains(text(r), "a-token") {
					t.Fatal("the report shows the token")
				}
			}
		}
	})

	t.Run("CLAUDE_CONFIG_DIR moves the user's settings", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		dir := filepath.Join(m.home, "elsewhere")
		m.env = append(m.env, "CLAUDE_CONFIG_DIR="+dir)
		testtree.Write(t, dir, map[string]string{"settings.json": claudeSettingsFile(t, nil, command(), nil)})
		want(t, m.doctor(t, "claude-code", false), "present", OK, "no matcher")
	})

	for _, tc := range []struct {
		name    string
		matcher any
		handler map[string]any
		extra   map[string]any
		check   string
		in      []string
	}{
		{"a list of tools", "Bash|Read", command(), nil, "present", []string{`"Bash|Read" does not match every tool`, "Write"}},
		{"a regex for some tools", "^(Bash|Write)$", command(), nil, "present", []string{"does not match every tool"}},
		{"a regex for every tool", ".*", command(), nil, "present", nil},
		{"an HTTP hook without onFailure", "*", without(httpHook, "onFailure"), nil, "fails closed", []string{`add "onFailure": "block"`}},
		{"a token header Claude Code will not fill", "*", without(httpHook, "allowedEnvVars"), nil, "fails closed", []string{"GATED_TOKEN, which is not in allowedEnvVars"}},
		{"Codex's HTTP path", "*", with(httpHook, "url", url+"/v1/hooks/codex"), nil, "fails closed", []string{"/v1/hooks/codex"}},
		{"a command hook without onFailure, timing out first", "*", with(without(command("--timeout 10s"), "onFailure"), "timeout", 5), nil, "fails closed", []string{"(5s) is not above gated's --timeout (10s)"}},
		{"gated not on PATH", "*", map[string]any{"type": "command", "command": "gated hook claude-code --url " + url}, nil, "fails closed", []string{"finds no gated"}},
		{"hooks turned off", "*", command(), map[string]any{"disableAllHooks": true}, "settings", []string{"disableAllHooks: only managed hooks run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMachine(t)
			if tc.name == "gated not on PATH" {
				m.env = append(m.env, "PATH="+t.TempDir())
			}
			testtree.Write(t, m.home, map[string]string{".claude/settings.json": claudeSettingsFile(t, tc.matcher, tc.handler, tc.extra)})
			r := m.doctor(t, "claude-code", false)
			status := Problem
			if tc.in == nil {
				status = OK
			}
			want(t, r, tc.check, status, tc.in...)
		})
	}

	t.Run("managed settings decide whose hooks run", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			managed map[string]any
			check   string
			in      string
		}{
			{map[string]any{"allowManagedHooksOnly": true}, "runs", "only managed hooks run"},
			{map[string]any{"disableAllHooks": true}, "runs", "runs no hook"},
		} {
			m := newMachine(t)
			managed := filepath.Join(m.home, "managed-settings.json")
			b, _ := json.Marshal(tc.managed)
			testtree.Write(t, m.home, map[string]string{"managed-settings.json": string(b), ".claude/settings.json": claudeSettingsFile(t, "*", command(), nil)})
			r, err := Run(t.Context(), "claude-code", Options{Environ: m.env, Dir: m.project, Managed: []string{managed}, NoCanary: true})
			if err != nil {
				t.Fatal(err)
			}
			want(t, r, tc.check, Problem, tc.in)
		}
	})

	t.Run("a settings file Claude Code cannot read", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		testtree.Write(t, m.project, map[string]string{".claude/settings.json": `{"hooks": `})
		want(t, m.doctor(t, "claude-code", false), "settings", Problem, "is not a settings file Claude Code can read")
	})
}

func with(m map[string]any, k string, v any) map[string]any {
	c := map[string]any{}
	for key, val := range m {
		c[key] = val
	}
	c[k] = v
	return c
}

func without(m map[string]any, k string) map[string]any {
	c := with(m, k, nil)
	delete(c, k)
	return c
}
