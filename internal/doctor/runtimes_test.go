package doctor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/testgated"
	"github.com/gatedhq/gated/internal/testtree"
)

// jsonFile is v as a settings file.
func jsonFile(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runtimeConfig is where and how a user wires gated-hook (the command
// line line) into each runtime, as its example and docs say: files below
// the machine's root (home/…, project/…).
func runtimeConfig(t *testing.T, rt, line string) map[string]string {
	t.Helper()
	events := func(names []string, handler map[string]any) map[string]any {
		hooks := map[string]any{}
		for _, e := range names {
			hooks[e] = []any{handler}
		}
		return map[string]any{"hooks": hooks}
	}
	group := func(event string, matcher any, handler map[string]any) map[string]any {
		g := map[string]any{"hooks": []any{handler}}
		if matcher != nil {
			g["matcher"] = matcher
		}
		return map[string]any{"hooks": map[string]any{event: []any{g}}}
	}
	switch rt {
	case "claude-code":
		return map[string]string{"home/.claude/settings.json": jsonFile(t, group("PreToolUse", "*", map[string]any{"type": "command", "command": line, "timeout": 10, "onFailure": "block"}))}
	case "copilot-cli":
		return map[string]string{"home/.copilot/settings.json": jsonFile(t, events([]string{"preToolUse"}, map[string]any{"type": "command", "bash": line, "timeoutSec": 10}))}
	case "gemini-cli":
		s := group("BeforeTool", ".*", map[string]any{"type": "command", "name": "gated", "command": line, "timeout": 10000})
		s["tools"] = map[string]any{"enableHooks": true}
		return map[string]string{"home/.gemini/settings.json": jsonFile(t, s)}
	case "cursor":
		s := events([]string{"beforeShellExecution", "beforeMCPExecution", "beforeReadFile", "preToolUse"}, map[string]any{"command": line, "failClosed": true})
		s["version"] = 1
		return map[string]string{"home/.cursor/hooks.json": jsonFile(t, s)}
	case "cline":
		return map[string]string{"home/Documents/Cline/Hooks/PreToolUse": "#!/bin/sh\n" + line + "\n"}
	case "goose":
		return map[string]string{"home/.agents/plugins/gated/hooks/hooks.json": jsonFile(t, group("PreToolUse", nil, map[string]any{"type": "command", "command": line, "timeout": 10, "on_failure": "block"}))}
	case "windsurf":
		return map[string]string{"home/.codeium/windsurf/hooks.json": jsonFile(t, events([]string{"pre_run_command", "pre_read_code", "pre_write_code", "pre_mcp_tool_use"}, map[string]any{"command": line, "show_output": true}))}
	case "kiro-cli":
		return map[string]string{"home/.kiro/agents/gated.json": jsonFile(t, map[string]any{"name": "gated", "tools": []any{"*"},
			"hooks": map[string]any{"preToolUse": []any{map[string]any{"matcher": "*", "command": line, "timeout_ms": 10000}}}})}
	case "droid":
		return map[string]string{"home/.factory/hooks.json": jsonFile(t, group("PreToolUse", "*", map[string]any{"type": "command", "command": line, "timeout": 10}))}
	case "qwen-code":
		return map[string]string{"home/.qwen/settings.json": jsonFile(t, group("PreToolUse", "*", map[string]any{"type": "command", "name": "gated", "command": line, "timeout": 10000}))}
	case "amp":
		// Amp runs a program, not a line: the line goes in a wrapper.
		return map[string]string{"home/.config/amp/settings.json": jsonFile(t, map[string]any{"amp.permissions": []any{
			map[string]any{"tool": "*", "action": "delegate", "to": "{root}/home/bin/gated-amp"}}}),
			"home/bin/gated-amp": "#!/bin/sh\nexec " + line + "\n"}
	case "opencode":
		// The plugin is not a line: its options carry the line's --url.
		url, _ := flagValue(strings.Fields(line), "url")
		return map[string]string{"home/.config/opencode/opencode.json": jsonFile(t, map[string]any{"plugin": []any{
			[]any{"file://{root}/gated/sdk/typescript/dist/opencode.js", map[string]any{"url": url}}}}),
			"gated/sdk/typescript/dist/opencode.js": "export default async function plugin() { return {} }\n"}
	}
	t.Fatalf("no configuration for %s", rt)
	return nil
}

// write writes files below the machine's root, {root} in them replaced by
// its path; a file named PreToolUse or gated-amp is a program, executable.
func (m *machine) write(t *testing.T, files map[string]string) {
	t.Helper()
	root := filepath.Dir(m.home)
	rooted := map[string]string{}
	for name, body := range files {
		rooted[name] = strings.ReplaceAll(body, "{root}", root)
	}
	testtree.Write(t, root, rooted)
	for name := range files {
		if b := filepath.Base(name); b == "PreToolUse" || b == "gated-amp" {
			if err := os.Chmod(filepath.Join(root, name), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestEveryRuntimeThroughGatedHook wires gated-hook into each runtime as
// its docs say, and runs the canary, in the runtime's input shape, through
// one real gated: each is protected, and its answer was read with the
// runtime's codec.
func TestEveryRuntimeThroughGatedHook(t *testing.T) {
	t.Parallel()
	g := testgated.Start(t, "--catalog", exampleCatalog)
	hookBin := testgated.HookBinary(t)
	for _, rt := range Runtimes() {
		if rt == "codex" || rt == "opencode" {
			continue // Codex's trust record is TestCanaryReachesTheAudit's business; OpenCode's plugin, TestOpenCode's
		}
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			m := newMachine(t, "GATED_TOKEN=a-token")
			m.write(t, runtimeConfig(t, rt, fmt.Sprintf("%s %s --url %s --timeout 3s", hookBin, rt, g.URL)))
			r := m.doctor(t, rt, true)
			if !r.Protected() || len(r.Hooks) == 0 {
				t.Fatalf("not protected:\n%s", text(r))
			}
			c := r.Hooks[0].Checks
			got := map[string]Check{}
			for _, x := range c {
				got[x.Name] = x
			}
			if got["canary"].Status != OK || !strings.Contains(got["canary"].Detail, "(decision ") || !strings.Contains(got["canary"].Detail, "answered deny") && !strings.Contains(got["canary"].Detail, "answered ask") {
				t.Fatalf("canary:\n%s", text(r))
			}
			if got["audit"].Status != Unverified || !strings.Contains(got["audit"].Detail, "stores its audit in a file") {
				t.Fatalf("audit:\n%s", text(r))
			}
			if !strings.Contains(got["fails closed"].Detail, "`gated-hook "+rt+"`") || !strings.Contains(got["points at"].Detail, g.URL) {
				t.Fatalf("gated-hook not read:\n%s", text(r))
			}
			if strings.Contains(text(r), "a-token") {
				t.Fatal("the report shows the token")
			}
		})
	}
}

// TestGatedHookReadsAsGatedHook: gated-hook, by any path, with its flags
// or the GATED_ variables it falls back to, is read as `gated hook` is.
func TestGatedHookReadsAsGatedHook(t *testing.T) {
	t.Parallel()
	hookBin := testgated.HookBinary(t)
	const url = "http://127.0.0.1:8080"
	for _, tc := range []struct {
		name, line string
		env        []string
		check      string
		status     Status
		in         []string
	}{
		{"flags", hookBin + " claude-code --url " + url + " --token-env MY_TOKEN", nil, "points at", OK, []string{url, "$MY_TOKEN (not set here"}},
		{"GATED_URL and GATED_TOKEN_ENV", hookBin + " claude-code", []string{"GATED_URL=" + url, "GATED_TOKEN_ENV=MY_TOKEN", "MY_TOKEN=x"}, "points at", OK, []string{url, "$MY_TOKEN (set)"}},
		{"a flag beats its variable", hookBin + " claude-code --url " + url, []string{"GATED_URL=http://elsewhere:1"}, "points at", OK, []string{url}},
		{"GATED_SHADOW", hookBin + " claude-code --url " + url, []string{"GATED_SHADOW=true"}, "fails closed", Problem, []string{"shadow mode"}},
		{"a GATED_SHADOW that does not parse", hookBin + " claude-code --url " + url, []string{"GATED_SHADOW=maybe"}, "fails closed", Problem, []string{`GATED_SHADOW="maybe" is not a boolean`}},
		{"--shadow", hookBin + " claude-code --url " + url + " --shadow", nil, "fails closed", Problem, []string{"shadow mode"}},
		{"GATED_TIMEOUT above the runtime's", hookBin + " claude-code --url " + url, []string{"GATED_TIMEOUT=30s"}, "fails closed", OK, []string{"onFailure \"block\""}},
		{"a GATED_TIMEOUT that does not parse", hookBin + " claude-code --url " + url, []string{"GATED_TIMEOUT=soon"}, "fails closed", Problem, []string{`"soon" is not a duration`}},
		{"no --url", hookBin + " claude-code", nil, "fails closed", Problem, []string{"gated-hook has no --url"}},
		{"another runtime's", hookBin + " codex --url " + url, nil, "fails closed", Problem, []string{"`gated-hook codex`", "use `gated-hook claude-code`"}},
		{"exec'd", "exec " + hookBin + " claude-code --url " + url, nil, "fails closed", OK, []string{"`gated-hook claude-code` exits 2"}},
		{"followed by something", hookBin + " claude-code --url " + url + "; echo done", nil, "fails closed", Problem, []string{"can change its exit code"}},
		{"|| exit 2", hookBin + " claude-code --url " + url + " || exit 2", nil, "fails closed", OK, nil},
		{"|| true", hookBin + " claude-code --url " + url + " || true", nil, "fails closed", Problem, []string{"can change its exit code"}},
		{"a Windows path", `C:\\gated\\gated-hook.exe claude-code --url ` + url, nil, "fails closed", Problem, []string{"finds no", "gated-hook.exe"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMachine(t, tc.env...)
			m.write(t, runtimeConfig(t, "claude-code", tc.line))
			r := m.doctor(t, "claude-code", false)
			want(t, r, tc.check, tc.status, tc.in...)
		})
	}
	t.Run("a Windows path is gated-hook's", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		m.write(t, runtimeConfig(t, "claude-code", `C:\\gated\\gated-hook.exe claude-code --url `+url))
		want(t, m.doctor(t, "claude-code", false), "points at", OK, url)
	})
}

// TestEachRuntimesOwnRules: what each runtime's configuration can get
// wrong, read as the runtime reads it.
func TestEachRuntimesOwnRules(t *testing.T) {
	t.Parallel()
	hookBin := testgated.HookBinary(t)
	line := func(rt string) string { return hookBin + " " + rt + " --url http://127.0.0.1:8080 --timeout 3s" }
	deny := `echo '{"permissionDecision":"deny","permissionDecisionReason":"gated is not on PATH"}'`
	for _, tc := range []struct {
		name, rt string
		files    func(t *testing.T) map[string]string
		env      []string
		check    string
		status   Status
		in       []string
	}{
		{"Copilot CLI: the example's guard, exec'd", "copilot-cli", func(t *testing.T) map[string]string {
			return runtimeConfig(t, "copilot-cli", "command -v "+hookBin+" >/dev/null 2>&1 && exec "+line("copilot-cli")+" || "+deny)
		}, nil, "fails closed", OK, []string{"prints GitHub Copilot CLI's deny on every failure"}},
		{"Copilot CLI: a second answer after gated", "copilot-cli", func(t *testing.T) map[string]string {
			return runtimeConfig(t, "copilot-cli", line("copilot-cli")+" || "+deny)
		}, nil, "fails closed", Problem, []string{"print a second answer", "exec"}},
		{"Copilot CLI: timing out before gated", "copilot-cli", func(t *testing.T) map[string]string {
			return map[string]string{"home/.copilot/hooks/gated.json": jsonFile(t, map[string]any{"version": 1, "hooks": map[string]any{"preToolUse": []any{
				map[string]any{"type": "command", "bash": line("copilot-cli"), "timeoutSec": 2}}}})}
		}, nil, "fails closed", Problem, []string{"(2s) is not above gated's --timeout (3s)"}},
		{"Copilot CLI: the default timeout", "copilot-cli", func(t *testing.T) map[string]string {
			return map[string]string{"home/.copilot/hooks/gated.json": jsonFile(t, map[string]any{"version": 1, "hooks": map[string]any{"preToolUse": []any{
				map[string]any{"type": "command", "bash": line("copilot-cli")}}}})}
		}, nil, "fails closed", OK, []string{"timeout (30s) is above"}},
		{"Copilot CLI: COPILOT_HOME", "copilot-cli", func(t *testing.T) map[string]string {
			return map[string]string{"home/elsewhere/settings.json": runtimeConfig(t, "copilot-cli", line("copilot-cli"))["home/.copilot/settings.json"]}
		}, []string{"COPILOT_HOME=<home>/elsewhere"}, "present", OK, nil},
		{"Copilot CLI: a repository hook", "copilot-cli", func(t *testing.T) map[string]string {
			return map[string]string{"project/.github/hooks/gated.json": jsonFile(t, map[string]any{"version": 1, "hooks": map[string]any{"preToolUse": []any{
				map[string]any{"type": "command", "bash": line("copilot-cli"), "timeoutSec": 10}}}})}
		}, nil, "runs", Unverified, []string{"trusted", "GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS"}},
		{"Copilot CLI: a matcher for bash only", "copilot-cli", func(t *testing.T) map[string]string {
			return map[string]string{"home/.copilot/settings.json": jsonFile(t, map[string]any{"hooks": map[string]any{"preToolUse": []any{
				map[string]any{"type": "command", "bash": line("copilot-cli"), "matcher": "^bash$", "timeoutSec": 10}}}})}
		}, nil, "present", Problem, []string{"does not match every tool"}},
		{"Gemini CLI: a project disables the hook by name", "gemini-cli", func(t *testing.T) map[string]string {
			f := runtimeConfig(t, "gemini-cli", line("gemini-cli"))
			f["project/.gemini/settings.json"] = `{"hooks": {"disabled": ["gated"]}}`
			return f
		}, nil, "runs", Problem, []string{`"gated" is disabled in`, "project", `remove "gated" from that list`}},
		{"Gemini CLI: hooks turned off", "gemini-cli", func(t *testing.T) map[string]string {
			f := runtimeConfig(t, "gemini-cli", line("gemini-cli"))
			f["project/.gemini/settings.json"] = `{"hooksConfig": {"enabled": false}}`
			return f
		}, nil, "hooks on", Problem, []string{"hooksConfig.enabled false"}},
		{"Gemini CLI: hooks not turned on anywhere", "gemini-cli", func(t *testing.T) map[string]string {
			return map[string]string{"project/.gemini/settings.json": jsonFile(t, map[string]any{"hooks": map[string]any{"BeforeTool": []any{
				map[string]any{"matcher": ".*", "hooks": []any{map[string]any{"type": "command", "command": line("gemini-cli"), "timeout": 10000}}}}}})}
		}, nil, "hooks on", Unverified, []string{"/hooks panel"}},
		{"Gemini CLI: a timeout in milliseconds below gated's", "gemini-cli", func(t *testing.T) map[string]string {
			return map[string]string{"home/.gemini/settings.json": jsonFile(t, map[string]any{"tools": map[string]any{"enableHooks": true}, "hooks": map[string]any{"BeforeTool": []any{
				map[string]any{"matcher": ".*", "hooks": []any{map[string]any{"type": "command", "command": line("gemini-cli"), "timeout": 3000}}}}}})}
		}, nil, "fails closed", Problem, []string{"(3s) is not above"}},
		{"Cursor: without failClosed", "cursor", func(t *testing.T) map[string]string {
			return map[string]string{"project/.cursor/hooks.json": jsonFile(t, map[string]any{"version": 1, "hooks": map[string]any{"preToolUse": []any{map[string]any{"command": line("cursor")}}}})}
		}, nil, "fails closed", Problem, []string{`without "failClosed": true`}},
		{"Cursor: only shell commands", "cursor", func(t *testing.T) map[string]string {
			return map[string]string{"home/.cursor/hooks.json": jsonFile(t, map[string]any{"version": 1, "hooks": map[string]any{"beforeShellExecution": []any{map[string]any{"command": line("cursor"), "failClosed": true}}}})}
		}, nil, "covers", Problem, []string{"not on preToolUse", "file writes"}},
		{"Cline: a project's hook replaces the global one", "cline", func(t *testing.T) map[string]string {
			f := runtimeConfig(t, "cline", "exec "+line("cline"))
			f["project/.clinerules/hooks/PreToolUse"] = "#!/bin/sh\necho '{\"cancel\": false}'\n"
			return f
		}, nil, "runs", Problem, []string{"replaces this one"}},
		{"Cline: the example's script", "cline", func(t *testing.T) map[string]string {
			raw, err := os.ReadFile(filepath.Join(filepath.Dir(exampleCatalog), "..", "cline", "PreToolUse"))
			if err != nil {
				t.Fatal(err)
			}
			script := strings.ReplaceAll(strings.ReplaceAll(string(raw), "exec gated hook", "exec "+hookBin), "command -v gated", "command -v "+hookBin)
			return map[string]string{"project/.clinerules/hooks/PreToolUse": script}
		}, nil, "points at", OK, []string{"http://127.0.0.1:8080"}},
		{"Cline: not executable", "cline", func(t *testing.T) map[string]string {
			return map[string]string{"project/.clinerules/hooks/PreToolUse.txt": "", "project/.clinerules/hooks/PreToolUse.sh": ""}
		}, nil, "present", Problem, []string{"no PreToolUse hook of Cline calls gated"}},
		{"goose: a \"*\" matcher", "goose", func(t *testing.T) map[string]string {
			return map[string]string{"project/.agents/plugins/gated/hooks/hooks.json": jsonFile(t, map[string]any{"hooks": map[string]any{"PreToolUse": []any{
				map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": line("goose"), "timeout": 10, "on_failure": "block"}}}}}})}
		}, nil, "present", Problem, []string{`"*" is not a valid regex`}},
		{"goose: without on_failure", "goose", func(t *testing.T) map[string]string {
			return map[string]string{"home/.agents/plugins/gated/hooks/hooks.json": jsonFile(t, map[string]any{"hooks": map[string]any{"PreToolUse": []any{
				map[string]any{"hooks": []any{map[string]any{"type": "command", "command": line("goose")}}}}}})}
		}, nil, "fails closed", Problem, []string{`without "on_failure": "block"`}},
		{"Windsurf: commands only", "windsurf", func(t *testing.T) map[string]string {
			return map[string]string{"project/.windsurf/hooks.json": jsonFile(t, map[string]any{"hooks": map[string]any{"pre_run_command": []any{map[string]any{"command": line("windsurf")}}}})}
		}, nil, "covers", Problem, []string{"pre_read_code, pre_write_code, pre_mcp_tool_use", "file reads, file writes, MCP tools"}},
		{"Windsurf: its timeout is not documented", "windsurf", func(t *testing.T) map[string]string {
			return map[string]string{"home/.codeium/windsurf/hooks.json": jsonFile(t, map[string]any{"hooks": map[string]any{"pre_read_code": []any{map[string]any{"command": line("windsurf")}}}})}
		}, nil, "timeout", Unverified, []string{"not documented"}},
		{"Kiro CLI: the agent decides", "kiro-cli", func(t *testing.T) map[string]string {
			return runtimeConfig(t, "kiro-cli", line("kiro-cli"))
		}, nil, "runs", Unverified, []string{`agent "gated"`, "--agent gated"}},
		{"Kiro CLI: a matcher for one tool", "kiro-cli", func(t *testing.T) map[string]string {
			return map[string]string{"project/.kiro/agents/mine.json": jsonFile(t, map[string]any{"hooks": map[string]any{"preToolUse": []any{
				map[string]any{"matcher": "fs_read", "command": line("kiro-cli"), "timeout_ms": 10000}}}})}
		}, nil, "present", Problem, []string{"does not match every tool"}},
		{"Droid: the hooks key of settings.json", "droid", func(t *testing.T) map[string]string {
			return map[string]string{"project/.factory/settings.json": runtimeConfig(t, "droid", line("droid"))["home/.factory/hooks.json"]}
		}, nil, "fails closed", OK, []string{"timeout (10s) is above"}},
		{"Droid: hooks.json wins over settings.json", "droid", func(t *testing.T) map[string]string {
			return map[string]string{"project/.factory/settings.json": runtimeConfig(t, "droid", line("droid"))["home/.factory/hooks.json"], "project/.factory/hooks.json": `{"hooks": {}}`}
		}, nil, "present", Problem, []string{"no PreToolUse hook of Factory Droid calls gated"}},
		{"Windsurf: curl cannot block", "windsurf", func(t *testing.T) map[string]string {
			return map[string]string{"home/.codeium/windsurf/hooks.json": jsonFile(t, map[string]any{"hooks": map[string]any{"pre_read_code": []any{map[string]any{
				"command": "curl --fail --max-time 5 -d @- http://127.0.0.1:8080/v1/hooks/windsurf || exit 2"}}}})}
		}, nil, "fails closed", Problem, []string{"reads only the exit code", "curl exits 0 on gated's deny"}},
		{"Copilot CLI: curl's failures print nothing", "copilot-cli", func(t *testing.T) map[string]string {
			return runtimeConfig(t, "copilot-cli", "curl --fail --max-time 5 -d @- http://127.0.0.1:8080/v1/hooks/copilot-cli || exit 2")
		}, nil, "fails closed", Problem, []string{"prints no answer", "gated-hook copilot-cli"}},
		{"Gemini CLI: curl … || exit 2 holds", "gemini-cli", func(t *testing.T) map[string]string {
			return runtimeConfig(t, "gemini-cli", "curl --fail --max-time 5 -d @- http://127.0.0.1:8080/v1/hooks/gemini-cli || exit 2")
		}, nil, "fails closed", OK, nil},
		{"Droid: hooks that are not an object", "droid", func(t *testing.T) map[string]string {
			return map[string]string{"home/.factory/hooks.json": `{"hooks": ["` + line("droid") + `"]}`}
		}, nil, "settings", Problem, []string{"not a JSON object"}},
		{"Droid: no timeout", "droid", func(t *testing.T) map[string]string {
			return map[string]string{"home/.factory/hooks.json": jsonFile(t, map[string]any{"hooks": map[string]any{"PreToolUse": []any{
				map[string]any{"hooks": []any{map[string]any{"type": "command", "command": line("droid")}}}}}})}
		}, nil, "timeout", Unverified, []string{"not documented"}},
		{"Qwen Code: disableAllHooks", "qwen-code", func(t *testing.T) map[string]string {
			f := runtimeConfig(t, "qwen-code", line("qwen-code"))
			f["project/.qwen/settings.json"] = `{"disableAllHooks": true}`
			return f
		}, nil, "runs", Problem, []string{"disableAllHooks"}},
		{"Qwen Code: settings with comments", "qwen-code", func(t *testing.T) map[string]string {
			return map[string]string{"home/.qwen/settings.json": "// gated\n" + runtimeConfig(t, "qwen-code", line("qwen-code"))["home/.qwen/settings.json"]}
		}, nil, "fails closed", OK, []string{"timeout (10s) is above gated's --timeout (3s)"}},
		{"Qwen Code: a project's hook", "qwen-code", func(t *testing.T) map[string]string {
			return map[string]string{"project/.qwen/settings.json": runtimeConfig(t, "qwen-code", line("qwen-code"))["home/.qwen/settings.json"]}
		}, nil, "runs", Unverified, []string{"trusts"}},
		{"Qwen Code: the default timeout", "qwen-code", func(t *testing.T) map[string]string {
			return map[string]string{"home/.qwen/settings.json": jsonFile(t, map[string]any{"hooks": map[string]any{"PreToolUse": []any{
				map[string]any{"hooks": []any{map[string]any{"type": "command", "command": line("qwen-code")}}}}}})}
		}, nil, "fails closed", OK, []string{"timeout (1m0s) is above"}},
		{"Amp: a rule before gated's", "amp", func(t *testing.T) map[string]string {
			f := runtimeConfig(t, "amp", line("amp"))
			f["project/.amp/settings.json"] = `{"amp.permissions": [{"tool": "Bash", "action": "allow"}, {"tool": "*", "action": "delegate", "to": "{root}/home/bin/gated-amp"}]}`
			return f
		}, nil, "runs", Problem, []string{`[0] allow "Bash"`, "put the delegating rule first"}},
		{"Amp: the workspace's rules replace the user's", "amp", func(t *testing.T) map[string]string {
			f := runtimeConfig(t, "amp", line("amp"))
			f["project/.amp/settings.jsonc"] = "{\n  // mine\n  \"amp.permissions\": [{\"tool\": \"*\", \"action\": \"ask\"},],\n}"
			return f
		}, nil, "present", Problem, []string{"no delegate hook of Amp calls gated"}},
		{"Amp: a reject before gated's is stricter, not a hole", "amp", func(t *testing.T) map[string]string {
			f := runtimeConfig(t, "amp", line("amp"))
			f["home/.config/amp/settings.json"] = `{"amp.permissions": [{"tool": "Bash", "matches": {"cmd": "rm -rf *"}, "action": "reject"}, {"tool": "**", "action": "delegate", "to": "{root}/home/bin/gated-amp"}]}`
			return f
		}, nil, "present", OK, []string{`with tool "**"`}},
		{"Amp: an MCP glob", "amp", func(t *testing.T) map[string]string {
			f := runtimeConfig(t, "amp", line("amp"))
			f["home/.config/amp/settings.json"] = `{"amp.permissions": [{"tool": "mcp__*", "action": "delegate", "to": "{root}/home/bin/gated-amp"}]}`
			return f
		}, nil, "present", Problem, []string{`tool glob "mcp__*" does not match every tool`, "Bash"}},
		{"Amp: delegating Bash only", "amp", func(t *testing.T) map[string]string {
			f := runtimeConfig(t, "amp", line("amp"))
			f["home/.config/amp/settings.json"] = `{"amp.permissions": [{"tool": "Bash", "action": "delegate", "to": "{root}/home/bin/gated-amp"}]}`
			return f
		}, nil, "present", Problem, []string{"does not match every tool"}},
		{"Amp: gated-hook with no arguments", "amp", func(t *testing.T) map[string]string {
			return map[string]string{"home/.config/amp/settings.json": `{"amp.permissions": [{"tool": "*", "action": "delegate", "to": "` + hookBin + `"}]}`}
		}, nil, "runs", Problem, []string{"no arguments", "gated-amp"}},
		{"Amp: a delegate doctor cannot read", "amp", func(t *testing.T) map[string]string {
			return map[string]string{"home/.config/amp/settings.json": `{"amp.permissions": [{"tool": "*", "action": "delegate", "to": "{root}/home/bin/gated-amp"}]}`,
				"home/bin/gated-amp": "\x7fELF\x00\x01"}
		}, nil, "fails closed", Unverified, []string{"a program doctor cannot read", "`gated-hook amp --url …`"}},
		{"Amp: no rules", "amp", func(t *testing.T) map[string]string {
			return map[string]string{"home/.config/amp/settings.json": `{"amp.showCosts": false}`}
		}, nil, "settings", Problem, []string{"no settings file sets amp.permissions"}},
		{"OpenCode: a plugin path that is not there", "opencode", func(t *testing.T) map[string]string {
			return map[string]string{"project/opencode.json": `{"plugin": ["file:///nowhere/sdk/typescript/dist/opencode.js"]}`}
		}, nil, "runs", Problem, []string{"cannot load the plugin", "gates nothing"}},
		{"OpenCode: the package, in opencode.jsonc", "opencode", func(t *testing.T) map[string]string {
			return map[string]string{"home/.config/opencode/opencode.jsonc": "{\n  // gated\n  \"plugins\": [{\"package\": \"@gatedhq/gated/opencode\", \"options\": {\"url\": \"http://gated.internal:8080\"}},],\n}"}
		}, nil, "runs", Unverified, []string{"installs the package @gatedhq/gated/opencode"}},
		{"OpenCode: a token in the options is not shown", "opencode", func(t *testing.T) map[string]string {
			return map[string]string{"project/opencode.json": `{"plugin": [["@gatedhq/gated/opencode", {"url": "http://gated.internal:8080", "token": "s3cret-token"}]]}`}
		}, nil, "points at", OK, []string{"http://gated.internal:8080", "written in the plugin's options (not shown)"}},
		{"OpenCode: no plugin", "opencode", func(t *testing.T) map[string]string {
			return map[string]string{"project/opencode.json": `{"plugin": ["opencode-wakatime"]}`}
		}, nil, "present", Problem, []string{"no tool.execute.before hook of OpenCode calls gated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMachine(t)
			for _, e := range tc.env {
				m.env = append(m.env, strings.ReplaceAll(e, "<home>", m.home))
			}
			m.write(t, tc.files(t))
			r := m.doctor(t, tc.rt, false)
			want(t, r, tc.check, tc.status, tc.in...)
			if strings.Contains(text(r), "s3cret-token") {
				t.Fatal("the report shows the token")
			}
		})
	}
}

// TestEveryRuntimeWithGatedDown: with gated down, the canary shows each
// runtime's hook blocking on a failure of its own, whether it says so by
// exit 2 (Windsurf, Kiro CLI …) or by a printed deny (Copilot CLI, Cline).
func TestEveryRuntimeWithGatedDown(t *testing.T) {
	t.Parallel()
	down := "http://" + testgated.ClosedAddr(t)
	hookBin := testgated.HookBinary(t)
	for _, rt := range Runtimes() {
		if rt == "codex" || rt == "opencode" {
			continue // TestCanaryFindsWhatConfigurationCannot, TestOpenCode
		}
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			m := newMachine(t)
			m.write(t, runtimeConfig(t, rt, fmt.Sprintf("%s %s --url %s --timeout 3s", hookBin, rt, down)))
			r := m.doctor(t, rt, true)
			var canary Check
			for _, c := range r.Hooks[0].Checks {
				if c.Name == "canary" {
					canary = c
				}
			}
			if canary.Status != Problem || !strings.Contains(canary.Detail, "blocked the canary on a failure of its own") || !strings.Contains(canary.Detail, "gated_unreachable") {
				t.Fatalf("canary is %+v:\n%s", canary, text(r))
			}
		})
	}
}

// TestAnHTTPHookOutsideClaudeCode: only Claude Code's HTTP hooks can fail
// closed; another runtime's is a problem.
func TestAnHTTPHookOutsideClaudeCode(t *testing.T) {
	t.Parallel()
	m := newMachine(t)
	m.write(t, map[string]string{"home/.copilot/settings.json": jsonFile(t, map[string]any{"hooks": map[string]any{"preToolUse": []any{
		map[string]any{"type": "http", "url": "https://gated.example/v1/hooks/copilot-cli"}}}})})
	want(t, m.doctor(t, "copilot-cli", false), "fails closed", Problem, "an HTTP hook", "runs the tool when it cannot connect")
}

// TestOpenCode: the canary reaches the gated gated's plugin is configured
// for, as the plugin posts; with that gated down, the plugin would block
// every call, and doctor says so.
func TestOpenCode(t *testing.T) {
	t.Parallel()
	g := testgated.Start(t, "--catalog", exampleCatalog)
	for _, tc := range []struct {
		name, url string
		status    Status
		in        []string
	}{
		{"up", g.URL, OK, []string{"answered deny", "(decision "}},
		{"down", "http://" + testgated.ClosedAddr(t), Problem, []string{"could not reach", "OpenCode blocks every tool call"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMachine(t, "GATED_TOKEN=a-token")
			m.write(t, runtimeConfig(t, "opencode", "--url "+tc.url))
			r := m.doctor(t, "opencode", true)
			want(t, r, "canary", tc.status, tc.in...)
			want(t, r, "points at", OK, tc.url, "$GATED_TOKEN (set)")
			if strings.Contains(text(r), "a-token") {
				t.Fatal("the report shows the token")
			}
		})
	}
}
