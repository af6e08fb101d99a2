package doctor

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Amp has no pre-tool hook: a permission rule with "action": "delegate"
// runs the program in "to" before the tool (examples/amp). Rules are one
// ordered list, amp.permissions, and the first that matches a call
// decides it.

// ampFiles are Amp's settings files, highest precedence first: the
// managed file, the workspace's .amp/settings.json(c) (the nearest from the
// folder Amp starts in up to the repository root), and the user's
// ~/.config/amp/settings.json(c).
func ampFiles(o *Options) []settingsFile {
	files := managedOr(o, "/etc/ampcode/managed-settings.json", "/Library/Application Support/ampcode/managed-settings.json", `C:\ProgramData\ampcode\managed-settings.json`)
	for dir := o.Dir; ; dir = filepath.Dir(dir) {
		if f, ok := firstExisting(filepath.Join(dir, ".amp", "settings.json"), filepath.Join(dir, ".amp", "settings.jsonc")); ok {
			files = append(files, settingsFile{path: f})
			break
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil || filepath.Dir(dir) == dir {
			break
		}
	}
	user := filepath.Join(o.getenv("HOME"), ".config", "amp")
	if f, ok := firstExisting(filepath.Join(user, "settings.json"), filepath.Join(user, "settings.jsonc")); ok {
		files = append(files, settingsFile{path: f})
	}
	return files
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

func firstExisting(paths ...string) (string, bool) {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// loadAmp finds the rule list Amp goes by (the amp.permissions of the
// highest-precedence file that sets it: a setting in a higher file
// replaces a lower one's), and the first rule that delegates to gated.
// Every rule before it but a reject decides the calls it matches without
// gated.
func loadAmp(o *Options, rt *runtime) (*config, error) {
	cfg := &config{}
	var rules []any
	from := ""
	for _, f := range ampFiles(o) {
		doc, ok := cfg.readFile(f.path, rt, "settings file", "")
		if !ok {
			continue
		}
		if list, ok := doc["amp.permissions"].([]any); ok && from == "" {
			rules, from = list, f.path
		}
	}
	for i, r := range rules {
		rule, _ := r.(map[string]any)
		tool, action, to := str(rule, "tool"), str(rule, "action"), str(rule, "to")
		if action != "delegate" || !ampDelegatesToGated(o, to) {
			continue
		}
		h := hook{source: from, key: fmt.Sprintf("amp.permissions[%d]", i), event: "delegate", typ: "command", command: to, matcher: &tool}
		// A reject before gated's rule is stricter than gated; any other
		// rule lets the calls it matches run, or be approved, without it.
		var earlier []string
		for j, e := range rules[:i] {
			er, _ := e.(map[string]any)
			if str(er, "action") != "reject" {
				earlier = append(earlier, fmt.Sprintf("[%d] %s %q", j, str(er, "action"), str(er, "tool")))
			}
		}
		switch {
		case len(earlier) > 0:
			h.runs = &Check{"runs", Problem, fmt.Sprintf("rules come before it (%s), and Amp takes the first rule that matches, so the calls they match never reach gated: put the delegating rule first", strings.Join(earlier, ", "))}
		case rule["matches"] != nil || rule["context"] != nil:
			h.runs = &Check{"runs", Problem, "the rule has matches or context, so it delegates only some calls, and the rest go to Amp's built-in rules: delete them"}
		}
		switch prog := program(firstWord(to)); {
		case strings.ContainsAny(strings.TrimSpace(to), " \t"):
			if h.runs == nil {
				h.runs = &Check{"runs", Unverified, fmt.Sprintf("Amp's manual says \"to\" names a program, and not whether Amp passes the arguments written after it (%q): doctor runs the line as a shell would; prefer a wrapper on PATH (examples/amp/gated-amp)", to)}
			}
		case prog == "gated-hook" || prog == "gated":
			h.runs = &Check{"runs", Problem, fmt.Sprintf("Amp runs %s with no arguments, so it knows neither the runtime nor the gated to ask, and rejects every call: delegate to a wrapper that runs `gated-hook amp --url …` (examples/amp/gated-amp)", to)}
		default:
			if p, err := lookPath(o, posixShell, to); err == nil {
				h.command, h.script = p, true
			}
		}
		cfg.hooks = append(cfg.hooks, h)
		break
	}
	if from == "" && len(cfg.read) > 0 {
		cfg.checks = append(cfg.checks, Check{"settings", Problem, "no settings file sets amp.permissions: Amp decides every call with its built-in rules, without gated"})
	}
	return cfg, nil
}

// ampDelegatesToGated reports whether a delegate rule's program runs
// gated: gated-hook or gated itself, or a program whose text mentions
// gated's hook; a program doctor cannot read (a binary) is assumed to, and
// its canary says whether it does.
func ampDelegatesToGated(o *Options, to string) bool {
	if p := program(firstWord(to)); p == "gated-hook" || p == "gated" {
		return true
	}
	found, err := lookPath(o, posixShell, to)
	if err != nil {
		return strings.Contains(to, "gated")
	}
	raw, err := os.ReadFile(found)
	if err != nil || bytes.IndexByte(raw[:min(len(raw), 8000)], 0) >= 0 {
		return strings.Contains(filepath.Base(found), "gated")
	}
	return mentionsGated(string(raw))
}

// ampCanaryEnv is what Amp sets for its delegate program: the tool's name,
// the thread, and AGENT=amp.
// ampShell runs the delegate program itself, as Amp does; a "to" with
// arguments (which the manual does not describe) is run as a shell line.
func ampShell(o *Options, to string) []string {
	if strings.ContainsAny(strings.TrimSpace(to), " \t") {
		return posixShell(o, to)
	}
	return directExec(o, to)
}

func ampCanaryEnv(marker string) []string {
	return []string{"AGENT_TOOL_NAME=" + canaryTool, "AMP_THREAD_ID=" + marker, "AGENT=amp"}
}
