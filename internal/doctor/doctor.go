// Package doctor answers "is gated protecting me?" for a coding agent: it
// reads the runtime's configuration the way the runtime does, finds gated's
// PreToolUse hook, says whether it is present for every tool, trusted,
// fail-closed and pointed at a gated, and proves it by running the hook
// command (or posting to the HTTP hook) with a harmless canary call whose
// decision it then reads back from gated's audit.
//
// A runtime is an entry in the runtimes table: how to find its hooks, how it
// runs a command hook, and what it does when a hook fails. Everything after
// finding the hooks is shared.
package doctor

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Status is the verdict of one check.
type Status string

const (
	// OK: the check holds.
	OK Status = "ok"
	// Problem: the check fails; gated may not see, or may not block, a
	// tool call. Any problem makes doctor exit 1.
	Problem Status = "problem"
	// Unverified: doctor could not tell, and says what a person should
	// look at. It does not make doctor fail.
	Unverified Status = "unverified"
)

// Check is one line of the report.
type Check struct {
	Name   string `json:"check"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
}

// HookReport is what doctor found about one of gated's hooks.
type HookReport struct {
	Source  string  `json:"source"`            // the file it is configured in
	Key     string  `json:"key,omitempty"`     // the runtime's name for it (Codex's trust key)
	Type    string  `json:"type"`              // command or http
	Command string  `json:"command,omitempty"` // a command hook's line
	URL     string  `json:"url,omitempty"`     // an HTTP hook's URL
	Checks  []Check `json:"checks"`
}

// Report is doctor's whole answer for one runtime.
type Report struct {
	Runtime  string       `json:"runtime"`
	Name     string       `json:"name"`
	Read     []string     `json:"read"`   // the configuration files that exist and were read
	Checks   []Check      `json:"checks"` // findings about the runtime as a whole
	Hooks    []HookReport `json:"hooks"`
	Canary   bool         `json:"canary"` // a canary call was run through each hook
	Problems int          `json:"problems"`
}

// Protected reports whether every check held (unverified ones aside).
func (r *Report) Protected() bool { return r.Problems == 0 }

// Options are what doctor needs from its caller.
type Options struct {
	// Environ is the environment the runtime runs hooks with (os.Environ):
	// doctor reads HOME, CODEX_HOME, CLAUDE_CONFIG_DIR, PATH, SHELL and
	// the token variables from it, and runs the hook with it.
	Environ []string
	// Dir is the project folder the runtime would be started in.
	Dir string
	// Managed overrides the runtime's managed (administrator's)
	// configuration files; nil means the platform's.
	Managed []string
	// NoCanary skips running the hook.
	NoCanary bool
	// AuditTokenEnv names the variable holding a token that may read
	// decisions (scope decisions_read); empty means the hook's own token.
	AuditTokenEnv string
	// AuditWait bounds how long doctor waits for the canary's decision
	// to reach the audit store, which records in batches.
	AuditWait time.Duration
	// HTTP is the client for HTTP hooks and the audit; nil means a
	// default one.
	HTTP *http.Client
}

// getenv is the value of name in o.Environ: the last one set, as a shell
// sees it.
func (o *Options) getenv(name string) string {
	v := ""
	for _, kv := range o.Environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// runtime is one coding agent doctor knows.
type runtime struct {
	id, name string
	// load finds the runtime's pre-tool hooks and whatever it knows about
	// the runtime as a whole.
	load func(o *Options, rt *runtime) (*config, error)
	// shell is the argv a command hook's line runs as.
	shell func(o *Options, line string) []string
	// onFailure: the runtime has a per-handler setting that makes a hook
	// that fails (cannot start, times out, cannot connect) block the tool
	// (Claude Code's onFailure "block"); without it such a failure runs
	// the tool.
	onFailure bool
	// cannotAsk: an ask answer is not one the runtime reliably takes (it
	// may count as a failed hook, which runs the tool).
	cannotAsk bool

	// For loadSettings: the settings files in the order the runtime
	// merges them, the hook event that runs before a tool, and the unit
	// of a handler's timeout.
	settings    func(o *Options) []settingsFile
	event       string
	timeoutUnit time.Duration
	// defaultTimeout is a handler's timeout when none is set.
	defaultTimeout time.Duration
}

// The runtimes doctor knows. A runtime whose hooks read like Claude
// Code's settings (JSON files of event → matcher groups → handlers with
// type, command or url, timeout) is an entry with load: loadSettings and
// its files, event and units; others need a loader of their own.
var runtimes = []runtime{
	{id: "claude-code", name: "Claude Code", load: loadSettings, shell: posixShell, onFailure: true,
		settings: claudeCodeFiles, event: "PreToolUse", timeoutUnit: time.Second, defaultTimeout: 60 * time.Second},
	{id: "codex", name: "Codex", load: loadCodex, shell: codexShell, cannotAsk: true, event: "PreToolUse"},
}

// Runtimes lists the ids doctor knows, for usage messages.
func Runtimes() []string {
	ids := make([]string, len(runtimes))
	for i, rt := range runtimes {
		ids[i] = rt.id
	}
	return ids
}

// Known reports whether doctor knows the runtime id.
func Known(id string) bool {
	return slices.ContainsFunc(runtimes, func(rt runtime) bool { return rt.id == id })
}

// config is what a runtime's loader found.
type config struct {
	read   []string
	checks []Check
	hooks  []hook
}

// hook is one PreToolUse handler as the runtime would run it.
type hook struct {
	source  string // file
	key     string
	managed bool
	typ     string // "command" or "http"
	matcher *string
	command string
	url     string
	headers map[string]string
	envVars []string // an HTTP hook's allowedEnvVars
	timeout time.Duration
	// onFailureBlock: the handler asks the runtime to block when it
	// fails (Claude Code's onFailure "block").
	onFailureBlock bool
	// hash is the hook's trust hash, for a runtime that keys trust to one
	// (Codex).
	hash string
	// runs is the runtime's verdict on whether it runs the hook at all
	// (Codex's trust, Claude Code's managed-only settings), when it has one.
	runs *Check
}

// Run checks one runtime.
func Run(ctx context.Context, id string, o Options) (*Report, error) {
	i := slices.IndexFunc(runtimes, func(rt runtime) bool { return rt.id == id })
	if i < 0 {
		return nil, fmt.Errorf("doctor knows %s, not %q", strings.Join(Runtimes(), " and "), id)
	}
	rt := &runtimes[i]
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("the project folder %q: %w", o.Dir, err)
	}
	o.Dir = dir
	if o.HTTP == nil {
		o.HTTP = &http.Client{}
	}
	if o.AuditWait <= 0 {
		o.AuditWait = 10 * time.Second
	}
	cfg, err := rt.load(&o, rt)
	if err != nil {
		return nil, err
	}
	r := &Report{Runtime: rt.id, Name: rt.name, Read: append([]string{}, cfg.read...), Checks: append([]Check{}, cfg.checks...),
		Hooks: []HookReport{}, Canary: !o.NoCanary}
	seen := map[string]bool{}
	for _, h := range cfg.hooks {
		g, ok := gatedHook(&o, rt, h)
		if !ok {
			continue
		}
		hr := HookReport{Source: h.source, Key: h.key, Type: h.typ, Command: h.command, URL: h.url}
		hr.Checks = append(hr.Checks, presence(rt, h))
		if h.runs != nil {
			hr.Checks = append(hr.Checks, *h.runs)
		}
		hr.Checks = append(hr.Checks, g.checks...)
		if !o.NoCanary {
			// The same handler configured twice is run once.
			id := h.typ + "\x00" + h.command + "\x00" + h.url
			if !seen[id] {
				seen[id] = true
				hr.Checks = append(hr.Checks, canary(ctx, &o, rt, h, g)...)
			}
		}
		r.Hooks = append(r.Hooks, hr)
	}
	if len(r.Hooks) == 0 {
		where := "no configuration file was found"
		if len(cfg.read) > 0 {
			where = "read " + strings.Join(cfg.read, ", ")
		}
		r.Checks = append(r.Checks, Check{"present", Problem, fmt.Sprintf(
			"no %s hook of %s calls gated (%s): every tool call runs unchecked; see examples/%s", rt.event, rt.name, where, rt.id)})
	}
	for _, c := range r.all() {
		if c.Status == Problem {
			r.Problems++
		}
	}
	return r, nil
}

// presence says whether the hook runs for every tool call.
func presence(rt *runtime, h hook) Check {
	where := "a " + h.typ + " hook on " + rt.event
	if h.matcher == nil {
		return Check{"present", OK, where + " with no matcher: it runs for every tool"}
	}
	m := *h.matcher
	if all, missed := matchesAll(m); !all {
		if len(missed) > 4 {
			missed = append(missed[:4], "…")
		}
		return Check{"present", Problem, fmt.Sprintf("%s, but its matcher %q does not match every tool (not %s): the others run unchecked; use \"*\"",
			where, m, strings.Join(missed, ", "))}
	}
	return Check{"present", OK, fmt.Sprintf("%s with matcher %q: it runs for every tool", where, m)}
}
