package doctor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"time"
)

// claudeDefaultTimeout is a Claude Code hook's timeout when none is set.
const claudeDefaultTimeout = 60 * time.Second

// claudeSettings is the part of a Claude Code settings file doctor reads.
type claudeSettings struct {
	Hooks map[string][]struct {
		Matcher *string `json:"matcher"`
		Hooks   []struct {
			Type           string            `json:"type"`
			Command        string            `json:"command"`
			URL            string            `json:"url"`
			Timeout        *float64          `json:"timeout"` // seconds
			OnFailure      string            `json:"onFailure"`
			Headers        map[string]string `json:"headers"`
			AllowedEnvVars []string          `json:"allowedEnvVars"`
		} `json:"hooks"`
	} `json:"hooks"`
	DisableAllHooks       bool `json:"disableAllHooks"`
	AllowManagedHooksOnly bool `json:"allowManagedHooksOnly"`
}

// claudeManaged is where an administrator's managed settings live.
func claudeManaged() []string {
	switch goruntime.GOOS {
	case "darwin":
		return []string{"/Library/Application Support/ClaudeCode/managed-settings.json"}
	case "windows":
		return []string{`C:\Program Files\ClaudeCode\managed-settings.json`}
	}
	return []string{"/etc/claude-code/managed-settings.json"}
}

// loadClaudeCode reads Claude Code's settings as it merges them: managed
// settings (which may turn off everyone else's hooks), then the user's
// (~/.claude or $CLAUDE_CONFIG_DIR), the project's .claude/settings.json
// and .claude/settings.local.json. Hooks of every file run.
func loadClaudeCode(o *Options) (*config, error) {
	cfg := &config{}
	managed := o.Managed
	if managed == nil {
		managed = claudeManaged()
	}
	userDir := o.getenv("CLAUDE_CONFIG_DIR")
	if userDir == "" {
		userDir = filepath.Join(o.getenv("HOME"), ".claude")
	}
	type file struct {
		path    string
		managed bool
	}
	var files []file
	for _, p := range managed {
		files = append(files, file{p, true})
	}
	files = append(files,
		file{path: filepath.Join(userDir, "settings.json")},
		file{path: filepath.Join(o.Dir, ".claude", "settings.json")},
		file{path: filepath.Join(o.Dir, ".claude", "settings.local.json")})

	var hooks []hook
	managedOnly, none := false, false
	for _, f := range files {
		raw, err := os.ReadFile(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			cfg.checks = append(cfg.checks, Check{"settings", Problem, fmt.Sprintf("cannot read %s: %v", f.path, err)})
			continue
		}
		cfg.read = append(cfg.read, f.path)
		var s claudeSettings
		if err := json.Unmarshal(raw, &s); err != nil {
			cfg.checks = append(cfg.checks, Check{"settings", Problem, fmt.Sprintf("%s is not a settings file Claude Code can read (%v): its hooks do not run", f.path, err)})
			continue
		}
		switch {
		case f.managed && s.DisableAllHooks:
			none = true
			cfg.checks = append(cfg.checks, Check{"settings", Problem, f.path + " sets disableAllHooks: no hook runs, gated's included"})
		case f.managed && s.AllowManagedHooksOnly:
			managedOnly = true
		case s.DisableAllHooks:
			managedOnly = true
			cfg.checks = append(cfg.checks, Check{"settings", Problem, f.path + " sets disableAllHooks: only managed hooks run"})
		}
		for event, groups := range s.Hooks {
			if event != "PreToolUse" {
				continue
			}
			for gi, g := range groups {
				for hi, hd := range g.Hooks {
					timeout := claudeDefaultTimeout
					if hd.Timeout != nil {
						timeout = time.Duration(*hd.Timeout * float64(time.Second))
					}
					hooks = append(hooks, hook{
						source: f.path, key: fmt.Sprintf("PreToolUse[%d].hooks[%d]", gi, hi), managed: f.managed,
						typ: hd.Type, matcher: g.Matcher, command: hd.Command, url: hd.URL, headers: hd.Headers,
						envVars: hd.AllowedEnvVars, timeout: timeout, onFailureBlock: hd.OnFailure == "block",
					})
				}
			}
		}
	}
	for _, h := range hooks {
		switch {
		case none:
			h.runs = &Check{"runs", Problem, "managed settings set disableAllHooks: Claude Code runs no hook"}
		case managedOnly && !h.managed:
			h.runs = &Check{"runs", Problem, "only managed hooks run here (allowManagedHooksOnly or disableAllHooks), so Claude Code skips this one: install it in managed settings"}
		}
		cfg.hooks = append(cfg.hooks, h)
	}
	return cfg, nil
}

// posixShell is how Claude Code runs a command hook's line.
func posixShell(_ *Options, line string) []string {
	return []string{"/bin/sh", "-c", line}
}
