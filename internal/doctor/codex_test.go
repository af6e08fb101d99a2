package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/testtree"
)

// exampleHook is examples/codex/config.toml's hook, pointed at url and
// naming gated by path.
func exampleHook(gated, url string) string {
	return fmt.Sprintf("[[hooks.PreToolUse]]\nmatcher = \".*\"\n\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\n"+
		"command = \"%s hook codex --url %s --token-env GATED_TOKEN --timeout 5s\"\ntimeout = 10\n", gated, url)
}

// trustRecord is the [hooks.state] entry Codex writes when a person trusts
// the first handler of the first PreToolUse group of file.
func trustRecord(file, hash string) string {
	return fmt.Sprintf("\n[hooks.state.%q]\ntrusted_hash = %q\n", file+":pre_tool_use:0:0", hash)
}

// TestCodexTrustHashIsCodexs holds doctor's trust hash to the hashes Codex
// 0.169.0 itself reported (app-server hooks/list, currentHash) for these
// hooks: a trust record of that hash is trusted, and the same hook edited
// by one character is not.
func TestCodexTrustHashIsCodexs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, config, hash string
	}{
		{"the example", "config.toml", exampleHook("gated", "http://127.0.0.1:8080"),
			"sha256:4652e9b57b3664f329b08191c65648eb1d35023ed1e026110681939844e8e6cc"},
		{"no matcher, no timeout, a status message, quotes and non-ASCII", "config.toml",
			"[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = 'gated hook codex <&> \"q\" é'\nstatusMessage = \"checking\"\nadditionalContextLimit = 100\n",
			"sha256:7c1082c715c4cbf8e819d2cdaf6285746eb7fda791e28005b7025168cfa088ee"},
		{"match-all star, timeout 0 (run as 1), async", "config.toml",
			"[[hooks.PreToolUse]]\nmatcher = \"*\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"x\"\ntimeout = 0\nasync = true\n",
			"sha256:d0bd928b8535c796635371a56c2edf11692de19344f987454dde6c5c26511989"},
		{"empty matcher", "config.toml",
			"[[hooks.PreToolUse]]\nmatcher = \"\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"gated hook codex\"\ntimeout = 5\n",
			"sha256:4cb889a3b3020b6172117c069507ef6214b568b51e303328ed80b4df633f45ec"},
		{"the default context limit is left out", "config.toml",
			"[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"a\"\nadditionalContextLimit = 2500\n",
			"sha256:f33622ba8381ebf002217985a3513a3f71de80b71e3ea667e18d0efec90f673c"},
		{"hooks.json", "hooks.json",
			`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"j","timeout":3}]}]}}`,
			"sha256:57d8dc1a5735e20c950aa712eb0713784781ec5737e363c160f3586b76f7f02a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, edited := range []bool{false, true} {
				m := newMachine(t)
				codexHome := filepath.Join(m.home, ".codex")
				config := tc.config
				if edited {
					config = strings.Replace(config, `"command":"j"`, `"command":"k"`, 1)
					config = strings.Replace(config, "command = \"", "command = \"_", 1)
					config = strings.Replace(config, "command = '", "command = '_", 1)
				}
				files := map[string]string{"config.toml": trustRecord(filepath.Join(codexHome, tc.file), tc.hash)}
				if tc.file == "config.toml" {
					files["config.toml"] = config + files["config.toml"]
				} else {
					files[tc.file] = config
				}
				testtree.Write(t, codexHome, files)
				cfg, err := loadCodex(&Options{Environ: m.env, Dir: m.project, Managed: []string{}}, nil)
				if err != nil || len(cfg.hooks) != 1 {
					t.Fatalf("loaded %+v, %v; want one hook", cfg, err)
				}
				trusted := cfg.hooks[0].runs
				if got := trusted.Status == OK; got == edited {
					t.Fatalf("edited %v: %s %s", edited, trusted.Status, trusted.Detail)
				}
			}
		})
	}
}

// TestCodexConfiguration reads Codex configurations a user may have and
// names each problem.
func TestCodexConfiguration(t *testing.T) {
	t.Parallel()
	gated := gatedBin(t)
	const url = "http://127.0.0.1:8080"

	t.Run("nothing configured", func(t *testing.T) {
		t.Parallel()
		r := newMachine(t).doctor(t, "codex", false)
		want(t, r, "present", Problem, "no PreToolUse hook of Codex calls gated", "no configuration file was found")
		if r.Protected() {
			t.Fatal("protected without a hook")
		}
	})

	t.Run("the example, untrusted, then trusted", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		config := filepath.Join(m.home, ".codex", "config.toml")
		testtree.Write(t, filepath.Dir(config), map[string]string{"config.toml": exampleHook(gated, url)})
		r := m.doctor(t, "codex", false)
		want(t, r, "present", OK, `matcher ".*"`, "every tool")
		want(t, r, "trusted", Problem, "no trust record", "skips it in silence", "/hooks")
		want(t, r, "fails closed", OK, "exits 2", "Codex's timeout (10s) is above gated's --timeout (5s)")
		want(t, r, "points at", OK, url, "$GATED_TOKEN (not set here")

		identity, _ := codexIdentity(new(".*"), map[string]any{"command": gated + " hook codex --url " + url + " --token-env GATED_TOKEN --timeout 5s", "timeout": int64(10)})
		appendFile(t, config, trustRecord(config, codexHash(identity)))
		r = m.doctor(t, "codex", false)
		want(t, r, "trusted", OK, "matches the hook's hash")
		if !r.Protected() {
			t.Fatalf("not protected:\n%s", text(r))
		}

		// The same record, with the hook turned off in /hooks.
		testtree.Write(t, filepath.Dir(config), map[string]string{"config.toml": exampleHook(gated, url) +
			fmt.Sprintf("\n[hooks.state.%q]\nenabled = false\ntrusted_hash = %q\n", config+":pre_tool_use:0:0", codexHash(identity))})
		want(t, m.doctor(t, "codex", false), "trusted", Problem, "turned off")
	})

	t.Run("a project's hook is read only in a trusted project", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		root := m.project
		m.project = filepath.Join(root, "sub")
		testtree.Write(t, root, map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".codex/config.toml": exampleHook(gated, url), "sub/.keep": ""})
		r := m.doctor(t, "codex", false)
		want(t, r, "project trusted", Problem, "not trusted", fmt.Sprintf("[projects.%q]", root))
		want(t, r, "present", Problem, "no PreToolUse hook")

		testtree.Write(t, filepath.Join(m.home, ".codex"), map[string]string{"config.toml": fmt.Sprintf("[projects.%q]\ntrust_level = \"trusted\"\n", root)})
		r = m.doctor(t, "codex", false)
		if len(r.Hooks) != 1 || r.Hooks[0].Key != filepath.Join(root, ".codex", "config.toml")+":pre_tool_use:0:0" {
			t.Fatalf("hooks %+v; want the project's, keyed by its file", r.Hooks)
		}
		want(t, r, "trusted", Problem, "no trust record")
	})

	for _, tc := range []struct {
		name, command, extra string
		check                string
		in                   []string
	}{
		{"a matcher for some tools", "%s hook codex --url " + url, `matcher = "Bash"`, "present", []string{`"Bash" does not match every tool`, "Read, Write"}},
		{"the hook times out before gated", "%s hook codex --url " + url + " --timeout 5s", "timeout = 5", "fails closed", []string{"Codex's timeout for the hook (5s) is not above gated's --timeout (5s)"}},
		{"Claude Code's hook in Codex", "%s hook claude-code --url " + url, "", "fails closed", []string{"answers claude-code's hooks, not Codex's"}},
		{"an exit code swallowed", "%s hook codex --url " + url + " || true", "", "fails closed", []string{"can change its exit code"}},
		{"shadow mode", "%s hook codex --url " + url + " --shadow", "", "fails closed", []string{"shadow mode"}},
		{"curl without --fail", "curl -s -m 5 -X POST -d @- " + url + "/v1/hooks/codex || exit 2", "", "fails closed", []string{"without --fail"}},
		{"curl without || exit 2", "curl -sf -m 5 -d @- " + url + "/v1/hooks/codex", "", "fails closed", []string{"|| exit 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMachine(t)
			command := tc.command
			if strings.Contains(command, "%s") {
				command = fmt.Sprintf(command, gated)
			}
			testtree.Write(t, filepath.Join(m.home, ".codex"), map[string]string{"config.toml": fmt.Sprintf(
				"[[hooks.PreToolUse]]\n%s\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = %q\n%s\n",
				map[bool]string{true: tc.extra, false: ""}[strings.HasPrefix(tc.extra, "matcher")], command,
				map[bool]string{true: tc.extra, false: ""}[strings.HasPrefix(tc.extra, "timeout")])})
			r := m.doctor(t, "codex", false)
			want(t, r, tc.check, Problem, tc.in...)
		})
	}

	t.Run("hooks turned off", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		testtree.Write(t, filepath.Join(m.home, ".codex"), map[string]string{"config.toml": "[features]\nhooks = false\n\n" + exampleHook(gated, url)})
		want(t, m.doctor(t, "codex", false), "hooks on", Problem, "runs no hook")
	})

	t.Run("a config Codex cannot read", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		testtree.Write(t, filepath.Join(m.home, ".codex"), map[string]string{"config.toml": "[hooks\n"})
		want(t, m.doctor(t, "codex", false), "config", Problem, "Codex will not start with it")
	})

	t.Run("curl that fails closed", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		testtree.Write(t, filepath.Join(m.home, ".codex"), map[string]string{"config.toml": fmt.Sprintf(
			"[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = %q\ntimeout = 10\n",
			`curl -sS --fail -m 5 -H "Authorization: Bearer $GATED_TOKEN" -H 'Content-Type: application/json' -d @- `+url+`/v1/hooks/codex || exit 2`)})
		r := m.doctor(t, "codex", false)
		want(t, r, "fails closed", OK, "curl --fail")
		want(t, r, "points at", OK, url, "$GATED_TOKEN")
	})
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
