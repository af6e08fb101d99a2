package doctor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/tailscale/hujson"
)

// settingsFile is one settings file a runtime reads; a managed one is an
// administrator's, which may turn off everyone else's hooks.
type settingsFile struct {
	path    string
	managed bool
}

// settingsDoc is a settings file that was read, as JSON.
type settingsDoc struct {
	settingsFile
	doc map[string]any
}

// loadSettings reads a runtime's settings files: {"hooks": {event:
// [handler, …]}}, where an entry is a handler or a matcher group of them
// ({"matcher", "hooks": [handler, …]}). Hooks of every file run, unless
// (Claude Code) a managed file sets disableAllHooks (none run) or
// allowManagedHooksOnly (only managed ones), or another sets
// disableAllHooks (only managed ones).
func loadSettings(o *Options, rt *runtime) (*config, error) {
	cfg := &config{}
	var hooks []hook
	var docs []settingsDoc
	managedOnly, none := false, false
	for _, f := range rt.settings(o) {
		doc, ok := cfg.readFile(f.path, rt, "settings file", ": its hooks do not run")
		if !ok {
			continue
		}
		docs = append(docs, settingsDoc{f, doc})
		if rt.managedFlags {
			disableAll, _ := doc["disableAllHooks"].(bool)
			managedOnlyFlag, _ := doc["allowManagedHooksOnly"].(bool)
			switch {
			case f.managed && disableAll:
				none = true
				cfg.checks = append(cfg.checks, Check{"settings", Problem, f.path + " sets disableAllHooks: no hook runs, gated's included"})
			case f.managed && managedOnlyFlag:
				managedOnly = true
			case disableAll:
				managedOnly = true
				cfg.checks = append(cfg.checks, Check{"settings", Problem, f.path + " sets disableAllHooks: only managed hooks run"})
			}
		}
		events, ok := doc["hooks"].(map[string]any)
		if !ok && doc["hooks"] != nil {
			cfg.checks = append(cfg.checks, Check{"settings", Problem, fmt.Sprintf("the hooks of %s are not a JSON object: %s runs none of them", f.path, rt.name)})
		}
		for _, event := range rt.events {
			entries, _ := events[event].([]any)
			for gi, e := range entries {
				entry, _ := e.(map[string]any)
				matcher := stringField(entry, "matcher")
				handlers := []any{entry}
				if inner, ok := entry["hooks"].([]any); ok {
					handlers = inner
				}
				for hi, x := range handlers {
					hd, _ := x.(map[string]any)
					if hd == nil {
						continue
					}
					hooks = append(hooks, settingsHook(rt, f, event, gi, hi, len(handlers) > 1 || entry["hooks"] != nil, matcher, hd))
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
	if rt.vet != nil {
		rt.vet(o, rt, docs, cfg)
	}
	return cfg, nil
}

// settingsHook reads one handler as the runtime does.
func settingsHook(rt *runtime, f settingsFile, event string, gi, hi int, grouped bool, matcher *string, hd map[string]any) hook {
	key := fmt.Sprintf("%s[%d]", event, gi)
	if grouped {
		key += fmt.Sprintf(".hooks[%d]", hi)
	}
	h := hook{source: f.path, key: key, managed: f.managed, event: event, matcher: matcher, typ: "command",
		url: str(hd, "url"), name: str(hd, "name"), timeout: rt.defaultTimeout}
	if t := str(hd, "type"); t != "" {
		h.typ = t
	}
	for _, k := range rt.commandKeys {
		if c := str(hd, k); c != "" {
			h.command = c
			break
		}
	}
	if rt.timeoutKey != "" {
		if t, ok := hd[rt.timeoutKey].(float64); ok {
			h.timeout = time.Duration(t * float64(rt.timeoutUnit))
		}
	}
	if rt.blockKey != "" {
		h.onFailureBlock = hd[rt.blockKey] == rt.blockValue
	}
	if hs, ok := hd["headers"].(map[string]any); ok {
		h.headers = map[string]string{}
		for k, v := range hs {
			h.headers[k], _ = v.(string)
		}
	}
	if vs, ok := hd["allowedEnvVars"].([]any); ok {
		for _, v := range vs {
			if s, ok := v.(string); ok {
				h.envVars = append(h.envVars, s)
			}
		}
	}
	return h
}

// readFile reads a runtime's settings or configuration file (what) as
// JSON, noting in cfg that it was read, or why not as a problem, with then
// saying what the runtime does about it; a file that is not there is
// passed over.
func (cfg *config) readFile(path string, rt *runtime, what, then string) (map[string]any, bool) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		cfg.checks = append(cfg.checks, Check{"settings", Problem, fmt.Sprintf("cannot read %s: %v", path, err)})
		return nil, false
	}
	cfg.read = append(cfg.read, path)
	doc, err := readJSON(raw, rt.jsonc)
	if err != nil {
		cfg.checks = append(cfg.checks, Check{"settings", Problem, fmt.Sprintf("%s is not a %s %s can read (%v)%s", path, what, rt.name, err, then)})
		return nil, false
	}
	return doc, true
}

// readJSON reads a configuration file as JSON, or, for a runtime that
// reads JSON with comments and trailing commas (Qwen Code, Amp, OpenCode),
// as that (hujson: Tailscale's JWCC parser, kept and small, rather than a
// hand-written comment stripper).
func readJSON(raw []byte, jsonc bool) (map[string]any, error) {
	if jsonc {
		std, err := hujson.Standardize(raw)
		if err != nil {
			return nil, err
		}
		raw = std
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, errors.New("not a JSON object")
	}
	return doc, nil
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// stringField is a string field that may be absent (nil).
func stringField(m map[string]any, k string) *string {
	if s, ok := m[k].(string); ok {
		return &s
	}
	return nil
}

// posixShell is how Claude Code runs a command hook's line (sh -c, as
// its hooks are observed to run), and how the other runtimes that take a
// command line are assumed to.
func posixShell(_ *Options, line string) []string {
	return []string{"/bin/sh", "-c", line}
}

// bashShell runs Copilot CLI's "bash" line.
func bashShell(_ *Options, line string) []string {
	return []string{"bash", "-c", line}
}

// directExec runs a hook file itself (Cline's hook scripts).
func directExec(_ *Options, path string) []string {
	return []string{path}
}
