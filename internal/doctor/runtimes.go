package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
)

// Where each runtime reads its hooks, and what its own switches say about
// them, as docs/coding-agents.md and examples/<runtime> document it.

// managedOr is o.Managed when set (tests), else the platform's file.
func managedOr(o *Options, linux, darwin, windows string) []settingsFile {
	paths := o.Managed
	if paths == nil {
		switch goruntime.GOOS {
		case "darwin":
			paths = []string{darwin}
		case "windows":
			paths = []string{windows}
		default:
			paths = []string{linux}
		}
	}
	var files []settingsFile
	for _, p := range paths {
		files = append(files, settingsFile{p, true})
	}
	return files
}

// globFiles are the files matching pattern, in name order.
func globFiles(pattern string) []settingsFile {
	paths, _ := filepath.Glob(pattern)
	var files []settingsFile
	for _, p := range paths {
		files = append(files, settingsFile{path: p})
	}
	return files
}

// copilotHome is $COPILOT_HOME, else ~/.copilot.
func copilotHome(o *Options) string {
	if h := o.getenv("COPILOT_HOME"); h != "" {
		return h
	}
	return filepath.Join(o.getenv("HOME"), ".copilot")
}

// copilotFiles: the hooks block of $COPILOT_HOME/settings.json, the
// user's $COPILOT_HOME/hooks/*.json, and the repository's
// .github/hooks/*.json in the folder Copilot starts in.
func copilotFiles(o *Options) []settingsFile {
	home := copilotHome(o)
	files := []settingsFile{{path: filepath.Join(home, "settings.json")}}
	files = append(files, globFiles(filepath.Join(home, "hooks", "*.json"))...)
	return append(files, globFiles(filepath.Join(o.Dir, ".github", "hooks", "*.json"))...)
}

// copilotVet: repository hooks load in `copilot -p` only in a trusted
// folder, or with GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true.
func copilotVet(o *Options, rt *runtime, _ []settingsDoc, cfg *config) {
	repo := filepath.Join(o.Dir, ".github", "hooks") + string(filepath.Separator)
	if o.getenv("GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS") == "true" {
		return
	}
	for i, h := range cfg.hooks {
		if strings.HasPrefix(h.source, repo) && h.runs == nil {
			cfg.hooks[i].runs = &Check{"runs", Unverified, "a repository hook: " + rt.name + " loads it in `copilot -p` only when the folder is trusted or GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true, which doctor cannot see; prefer the user's " +
				filepath.Join(copilotHome(o), "hooks")}
		}
	}
}

// geminiFiles: the system settings, ~/.gemini/settings.json and the
// project's .gemini/settings.json.
func geminiFiles(o *Options) []settingsFile {
	var files []settingsFile
	if p := o.getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); p != "" && o.Managed == nil {
		files = []settingsFile{{p, true}}
	} else {
		files = managedOr(o, "/etc/gemini-cli/settings.json", "/Library/Application Support/GeminiCli/settings.json", `C:\ProgramData\gemini-cli\settings.json`)
	}
	return append(files,
		settingsFile{path: filepath.Join(o.getenv("HOME"), ".gemini", "settings.json")},
		settingsFile{path: filepath.Join(o.Dir, ".gemini", "settings.json")})
}

// geminiVet applies Gemini CLI's switches: a hook named in any layer's
// disabled list (hooks.disabled, or hooksConfig.disabled in newer
// versions; the lists are merged) does not run, nor does any hook when
// hooks are turned off.
func geminiVet(_ *Options, rt *runtime, docs []settingsDoc, cfg *config) {
	disabled := map[string]string{}
	off, on := "", false
	for _, d := range docs {
		for _, key := range []string{"hooks", "hooksConfig"} {
			m, _ := d.doc[key].(map[string]any)
			if list, ok := m["disabled"].([]any); ok {
				for _, n := range list {
					if s, ok := n.(string); ok {
						disabled[s] = d.path + " (" + key + ".disabled)"
					}
				}
			}
			switch m["enabled"] {
			case false:
				off = d.path + " sets " + key + ".enabled false"
			case true:
				on = true
			}
		}
		tools, _ := d.doc["tools"].(map[string]any)
		switch tools["enableHooks"] {
		case false:
			off = d.path + " sets tools.enableHooks false"
		case true:
			on = true
		}
	}
	if off != "" {
		cfg.checks = append(cfg.checks, Check{"hooks on", Problem, off + ": " + rt.name + " runs no hook, gated's included"})
	} else if !on {
		cfg.checks = append(cfg.checks, Check{"hooks on", Unverified, "no settings file turns hooks on (tools.enableHooks or hooksConfig.enabled): versions of " + rt.name + " whose hooks are off by default run none; check `/hooks panel`"})
	}
	for i, h := range cfg.hooks {
		for _, id := range []string{h.name, h.command} {
			if where, ok := disabled[id]; ok && id != "" {
				cfg.hooks[i].runs = &Check{"runs", Problem, fmt.Sprintf("the hook %q is disabled in %s, so %s skips it (any settings layer, a project's included, can do this): remove %q from that list", id, where, rt.name, id)}
				break
			}
		}
	}
}

// cursorFiles: ~/.cursor/hooks.json and the project's .cursor/hooks.json.
func cursorFiles(o *Options) []settingsFile {
	return []settingsFile{
		{path: filepath.Join(o.getenv("HOME"), ".cursor", "hooks.json")},
		{path: filepath.Join(o.Dir, ".cursor", "hooks.json")},
	}
}

// cursorCovers: preToolUse runs before every tool; the older events cover
// shell commands, MCP calls and file reads only.
func cursorCovers(got map[string]bool) string {
	if got["preToolUse"] {
		return ""
	}
	var on []string
	for _, e := range []string{"beforeShellExecution", "beforeMCPExecution", "beforeReadFile"} {
		if got[e] {
			on = append(on, e)
		}
	}
	return fmt.Sprintf("gated's hook is not on preToolUse, which Cursor asks before every tool (only on %s): file writes and the other tools run unchecked",
		strings.Join(on, ", "))
}

// gooseFiles: each plugin's hooks/hooks.json under ~/.agents/plugins and
// the project's .agents/plugins.
func gooseFiles(o *Options) []settingsFile {
	return append(globFiles(filepath.Join(o.getenv("HOME"), ".agents", "plugins", "*", "hooks", "hooks.json")),
		globFiles(filepath.Join(o.Dir, ".agents", "plugins", "*", "hooks", "hooks.json"))...)
}

// windsurfFiles: the system file, ~/.codeium/windsurf/hooks.json and the
// workspace's .windsurf/hooks.json, all merged.
func windsurfFiles(o *Options) []settingsFile {
	return append(managedOr(o, "/etc/windsurf/hooks.json", "/Library/Application Support/Windsurf/hooks.json", `C:\ProgramData\Windsurf\hooks.json`),
		settingsFile{path: filepath.Join(o.getenv("HOME"), ".codeium", "windsurf", "hooks.json")},
		settingsFile{path: filepath.Join(o.Dir, ".windsurf", "hooks.json")})
}

// windsurfCovers: each of Cascade's four pre-hooks guards one kind of
// action, so gated's hook must be on all four.
func windsurfCovers(got map[string]bool) string {
	what := map[string]string{"pre_run_command": "commands", "pre_read_code": "file reads", "pre_write_code": "file writes", "pre_mcp_tool_use": "MCP tools"}
	var missing, runs []string
	for _, e := range []string{"pre_run_command", "pre_read_code", "pre_write_code", "pre_mcp_tool_use"} {
		if !got[e] {
			missing, runs = append(missing, e), append(runs, what[e])
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("gated's hook is not on %s: Cascade runs %s unchecked", strings.Join(missing, ", "), strings.Join(runs, ", "))
}

// kiroFiles: the agent configurations in ~/.kiro/agents and the
// project's .kiro/agents.
func kiroFiles(o *Options) []settingsFile {
	return append(globFiles(filepath.Join(o.getenv("HOME"), ".kiro", "agents", "*.json")),
		globFiles(filepath.Join(o.Dir, ".kiro", "agents", "*.json"))...)
}

// kiroVet: an agent's hooks run only in a chat with that agent.
func kiroVet(_ *Options, rt *runtime, docs []settingsDoc, cfg *config) {
	for i, h := range cfg.hooks {
		name := strings.TrimSuffix(filepath.Base(h.source), ".json")
		if d := slices.IndexFunc(docs, func(d settingsDoc) bool { return d.path == h.source }); d >= 0 && str(docs[d].doc, "name") != "" {
			name = str(docs[d].doc, "name")
		}
		cfg.hooks[i].runs = &Check{"runs", Unverified, fmt.Sprintf("%s runs this hook only in a chat with the agent %q (`kiro-cli chat --agent %s`, or that agent as the default): doctor cannot tell which agent you start", rt.name, name, name)}
	}
}

// droidFiles: in ~/.factory and the project's .factory, hooks.json, or
// without one the hooks key of settings.json.
func droidFiles(o *Options) []settingsFile {
	var files []settingsFile
	for _, d := range []string{filepath.Join(o.getenv("HOME"), ".factory"), filepath.Join(o.Dir, ".factory")} {
		p := filepath.Join(d, "hooks.json")
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			p = filepath.Join(d, "settings.json")
		}
		files = append(files, settingsFile{path: p})
	}
	return files
}

// loadCline finds Cline's PreToolUse hook files: ~/Documents/Cline/Hooks
// and the workspace's .clinerules/hooks, where a project's file replaces
// the global one of the same name. Cline runs each file itself.
func loadCline(o *Options, rt *runtime) (*config, error) {
	cfg := &config{}
	global := filepath.Join(o.getenv("HOME"), "Documents", "Cline", "Hooks", "PreToolUse")
	project := filepath.Join(o.Dir, ".clinerules", "hooks", "PreToolUse")
	var found []string
	for _, p := range []string{global, project} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", p, err)
		}
		cfg.read = append(cfg.read, p)
		found = append(found, p)
		h := hook{source: p, event: "PreToolUse", typ: "command", script: true, command: p}
		if fi.Mode()&0o111 == 0 {
			h.runs = &Check{"runs", Problem, p + " is not executable, and " + rt.name + " runs only executable hook files: chmod +x it"}
		}
		cfg.hooks = append(cfg.hooks, h)
	}
	if len(found) == 2 {
		cfg.hooks[0].runs = &Check{"runs", Problem, fmt.Sprintf("the project's %s replaces this one, so %s does not run it here", project, rt.name)}
	}
	cfg.checks = append(cfg.checks, Check{"hooks on", Unverified,
		"cannot read Cline's settings: it runs hook files only with hooks enabled there; check by hand that they are"})
	return cfg, nil
}

// qwenFiles: Qwen Code's layers (docs/users/configuration/settings.md):
// the system defaults, the user's ~/.qwen/settings.json, the project's
// .qwen/settings.json (and .qwen/settings.local.json, which newer versions
// read), and the system settings, which override them all; each system
// file's path may be moved by its variable.
func qwenFiles(o *Options) []settingsFile {
	system := func(env, linux, darwin, windows string) []settingsFile {
		if p := o.getenv(env); p != "" && o.Managed == nil {
			return []settingsFile{{p, true}}
		}
		return managedOr(o, linux, darwin, windows)
	}
	files := system("QWEN_CODE_SYSTEM_DEFAULTS_PATH", "/etc/qwen-code/system-defaults.json",
		"/Library/Application Support/QwenCode/system-defaults.json", `C:\ProgramData\qwen-code\system-defaults.json`)
	files = append(files,
		settingsFile{path: filepath.Join(o.getenv("HOME"), ".qwen", "settings.json")},
		settingsFile{path: filepath.Join(o.Dir, ".qwen", "settings.json")},
		settingsFile{path: filepath.Join(o.Dir, ".qwen", "settings.local.json")})
	if o.Managed != nil {
		return files // the managed files were listed once, above
	}
	return append(files, system("QWEN_CODE_SYSTEM_SETTINGS_PATH", "/etc/qwen-code/settings.json",
		"/Library/Application Support/QwenCode/settings.json", `C:\ProgramData\qwen-code\settings.json`)...)
}

// qwenVet: "disableAllHooks": true in any layer turns every hook off;
// and a project's settings load only in a folder Qwen Code trusts (or in
// a run that skips the check), which doctor cannot see.
func qwenVet(o *Options, rt *runtime, docs []settingsDoc, cfg *config) {
	for _, d := range docs {
		if d.doc["disableAllHooks"] == true {
			cfg.checks = append(cfg.checks, Check{"hooks on", Problem, d.path + " sets disableAllHooks: " + rt.name + " runs no hook, gated's included"})
			for i := range cfg.hooks {
				cfg.hooks[i].runs = &Check{"runs", Problem, d.path + " sets disableAllHooks, so " + rt.name + " skips this hook"}
			}
			return
		}
	}
	project := filepath.Join(o.Dir, ".qwen") + string(filepath.Separator)
	for i, h := range cfg.hooks {
		if strings.HasPrefix(h.source, project) && h.runs == nil {
			cfg.hooks[i].runs = &Check{"runs", Unverified, "a project's hook: " + rt.name + " loads a project's settings only in a folder it trusts (an interactive run asks), which doctor cannot see; the user's " +
				filepath.Join(o.getenv("HOME"), ".qwen", "settings.json") + " always loads"}
		}
	}
}
