package doctor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// settingsFile is one settings file a runtime reads; a managed one is an
// administrator's, which may turn off everyone else's hooks.
type settingsFile struct {
	path    string
	managed bool
}

// hookSettings is the part of a settings file doctor reads.
type hookSettings struct {
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

// loadSettings reads a runtime's settings files. Hooks of every file run,
// unless a managed file sets disableAllHooks (none run) or
// allowManagedHooksOnly (only managed ones), or another sets
// disableAllHooks (only managed ones).
func loadSettings(o *Options, rt *runtime) (*config, error) {
	cfg := &config{}
	var hooks []hook
	managedOnly, none := false, false
	for _, f := range rt.settings(o) {
		raw, err := os.ReadFile(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			cfg.checks = append(cfg.checks, Check{"settings", Problem, fmt.Sprintf("cannot read %s: %v", f.path, err)})
			continue
		}
		cfg.read = append(cfg.read, f.path)
		var s hookSettings
		if err := json.Unmarshal(raw, &s); err != nil {
			cfg.checks = append(cfg.checks, Check{"settings", Problem, fmt.Sprintf("%s is not a settings file %s can read (%v): its hooks do not run", f.path, rt.name, err)})
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
			if event != rt.event {
				continue
			}
			for gi, g := range groups {
				for hi, hd := range g.Hooks {
					timeout := rt.defaultTimeout
					if hd.Timeout != nil {
						timeout = time.Duration(*hd.Timeout * float64(rt.timeoutUnit))
					}
					hooks = append(hooks, hook{
						source: f.path, key: fmt.Sprintf("%s[%d].hooks[%d]", rt.event, gi, hi), managed: f.managed,
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
			h.runs = &Check{"runs", Problem, "managed settings set disableAllHooks: " + rt.name + " runs no hook"}
		case managedOnly && !h.managed:
			h.runs = &Check{"runs", Problem, "only managed hooks run here (allowManagedHooksOnly or disableAllHooks), so " + rt.name + " skips this one: install it in managed settings"}
		}
		cfg.hooks = append(cfg.hooks, h)
	}
	return cfg, nil
}

// posixShell is how Claude Code runs a command hook's line (sh -c, as
// its hooks are observed to run).
func posixShell(_ *Options, line string) []string {
	return []string{"/bin/sh", "-c", line}
}
