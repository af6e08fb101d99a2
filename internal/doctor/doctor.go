// Package doctor answers "is gated protecting me?" for a coding agent: it
// reads the runtime's configuration the way the runtime does, finds gated's
// pre-tool hook, says whether it is present for every tool, trusted,
// fail-closed and pointed at a gated, and proves it by running the hook
// command (or posting to the HTTP hook) with a harmless canary call in the
// runtime's own input, whose answer it reads with the runtime's codec and
// whose decision it then reads back from gated's audit.
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
	Event   string  `json:"event"`             // the runtime's pre-tool event it is on
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
	// doctor reads HOME, the runtimes' own variables (CODEX_HOME,
	// CLAUDE_CONFIG_DIR, COPILOT_HOME …), PATH, SHELL, the GATED_
	// variables a hook falls back to and the token variables from it, and
	// runs the hook with it.
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
	// blockSetting is the per-handler setting, as people write it, that
	// makes a hook that fails (cannot start, times out) block the tool
	// (Claude Code's onFailure "block", Cursor's failClosed, goose's
	// on_failure); empty when the runtime has none, and such a failure
	// runs the tool.
	blockSetting string
	// failureBlocks: any failure of the hook blocks the tool, with no
	// setting needed (Cline).
	failureBlocks bool
	// printsFailure: the runtime blocks on a deny printed on stdout, not
	// (in every version) on an exit code, so gated prints its failures
	// (Copilot CLI, Cline).
	printsFailure bool

	// For loadSettings, a runtime whose hooks are JSON files of event →
	// handlers (or matcher groups of handlers): the files in the order the
	// runtime merges them, and how a handler reads.
	settings func(o *Options) []settingsFile
	// events are the pre-tool events read; the first names them in
	// messages.
	events []string
	// covers says which tools run unchecked when gated's hook is on only
	// the events in got; nil: any one of events covers every tool.
	covers func(got map[string]bool) string
	// commandKeys are the handler's fields holding its command line, the
	// first one set winning (Copilot CLI's bash).
	commandKeys []string
	// timeoutKey is the handler's timeout field, in timeoutUnit; empty
	// when the runtime documents none.
	timeoutKey  string
	timeoutUnit time.Duration
	// defaultTimeout is a handler's timeout when none is set; 0 when it is
	// not documented.
	defaultTimeout time.Duration
	// blockKey is the handler field of blockSetting, and blockValue the
	// value that blocks.
	blockKey   string
	blockValue any
	// starInvalid: the matcher is a regex in which "*" is invalid, and the
	// runtime skips a rule whose matcher does not compile (goose).
	starInvalid bool
	// managedFlags: the runtime's managed settings may turn hooks off
	// (Claude Code's disableAllHooks, allowManagedHooksOnly).
	managedFlags bool
	// httpHooks: the runtime has HTTP hooks that can fail closed (Claude
	// Code's, with onFailure "block").
	httpHooks bool
	// vet adds what the runtime's own switches say about the hooks found
	// (Gemini CLI's disabled lists, Kiro CLI's agents).
	vet func(o *Options, rt *runtime, docs []settingsDoc, cfg *config)
}

// The runtimes doctor knows. A runtime whose hooks read like Claude
// Code's settings (JSON files of event → handlers, or matcher groups of
// them) is an entry with load: loadSettings, its files and how a handler
// reads; others need a loader of their own.
var runtimes = []runtime{
	{id: "claude-code", name: "Claude Code", load: loadSettings, shell: posixShell, blockSetting: `onFailure "block"`,
		settings: claudeCodeFiles, events: []string{"PreToolUse"}, commandKeys: []string{"command"},
		timeoutKey: "timeout", timeoutUnit: time.Second, defaultTimeout: 60 * time.Second,
		blockKey: "onFailure", blockValue: "block", managedFlags: true, httpHooks: true},
	{id: "codex", name: "Codex", load: loadCodex, shell: codexShell, events: []string{"PreToolUse"}},
	{id: "copilot-cli", name: "GitHub Copilot CLI", load: loadSettings, shell: bashShell, printsFailure: true,
		settings: copilotFiles, events: []string{"preToolUse", "PreToolUse"}, commandKeys: []string{"bash", "command"},
		timeoutKey: "timeoutSec", timeoutUnit: time.Second, defaultTimeout: 30 * time.Second, vet: copilotVet},
	{id: "gemini-cli", name: "Gemini CLI", load: loadSettings, shell: posixShell,
		settings: geminiFiles, events: []string{"BeforeTool"}, commandKeys: []string{"command"},
		timeoutKey: "timeout", timeoutUnit: time.Millisecond, defaultTimeout: 60 * time.Second, vet: geminiVet},
	{id: "cursor", name: "Cursor", load: loadSettings, shell: posixShell, blockSetting: `"failClosed": true`,
		settings: cursorFiles, events: []string{"preToolUse", "beforeMCPExecution", "beforeShellExecution", "beforeReadFile"},
		covers: cursorCovers, commandKeys: []string{"command"}, blockKey: "failClosed", blockValue: true},
	{id: "cline", name: "Cline", load: loadCline, shell: directExec, failureBlocks: true, printsFailure: true,
		events: []string{"PreToolUse"}},
	{id: "goose", name: "goose", load: loadSettings, shell: posixShell, blockSetting: `"on_failure": "block"`,
		settings: gooseFiles, events: []string{"PreToolUse"}, commandKeys: []string{"command"},
		timeoutKey: "timeout", timeoutUnit: time.Second, blockKey: "on_failure", blockValue: "block", starInvalid: true},
	{id: "windsurf", name: "Windsurf Cascade", load: loadSettings, shell: posixShell,
		settings: windsurfFiles, events: []string{"pre_mcp_tool_use", "pre_run_command", "pre_read_code", "pre_write_code"},
		covers: windsurfCovers, commandKeys: []string{"command"}},
	{id: "kiro-cli", name: "Kiro CLI", load: loadSettings, shell: posixShell,
		settings: kiroFiles, events: []string{"preToolUse"}, commandKeys: []string{"command"},
		timeoutKey: "timeout_ms", timeoutUnit: time.Millisecond, defaultTimeout: 30 * time.Second, vet: kiroVet},
	{id: "droid", name: "Factory Droid", load: loadSettings, shell: posixShell,
		settings: droidFiles, events: []string{"PreToolUse"}, commandKeys: []string{"command"},
		timeoutKey: "timeout", timeoutUnit: time.Second},
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

// hook is one pre-tool handler as the runtime would run it.
type hook struct {
	source  string // file
	key     string
	managed bool
	event   string // the runtime's event it is on
	name    string // the handler's name, where the runtime has one (Gemini CLI)
	typ     string // "command" or "http"
	script  bool   // command is a script file the runtime runs (Cline)
	matcher *string
	command string
	url     string
	headers map[string]string
	envVars []string      // an HTTP hook's allowedEnvVars
	timeout time.Duration // 0: the runtime's is not documented
	// onFailureBlock: the handler sets the runtime's blockSetting.
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
		return nil, fmt.Errorf("doctor knows %s, not %q", strings.Join(Runtimes(), ", "), id)
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
	covered := map[string]bool{}
	for _, h := range cfg.hooks {
		g, ok := gatedHook(&o, rt, h)
		if !ok {
			continue
		}
		hr := HookReport{Source: h.source, Key: h.key, Event: h.event, Type: h.typ, Command: h.command, URL: h.url}
		p := presence(rt, h)
		hr.Checks = append(hr.Checks, p)
		if p.Status == OK && (h.runs == nil || h.runs.Status != Problem) {
			covered[h.event] = true
		}
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
			"no %s hook of %s calls gated (%s): every tool call runs unchecked; see examples/%s", strings.Join(rt.events, " or "), rt.name, where, rt.id)})
	} else if rt.covers != nil {
		if missing := rt.covers(covered); missing != "" {
			r.Checks = append(r.Checks, Check{"covers", Problem, missing + "; see examples/" + rt.id})
		} else {
			r.Checks = append(r.Checks, Check{"covers", OK, "gated's hook is on every event " + rt.name + " asks before a tool runs"})
		}
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
	where := "a " + h.typ + " hook on " + h.event
	every := "it runs for every tool"
	if rt.covers != nil {
		every = "it runs for every call on " + h.event
	}
	if h.matcher == nil {
		return Check{"present", OK, where + " with no matcher: " + every}
	}
	m := *h.matcher
	if rt.starInvalid && m == "*" {
		return Check{"present", Problem, fmt.Sprintf(`%s, but its matcher "*" is not a valid regex, and %s skips the rule in silence: leave the matcher out`, where, rt.name)}
	}
	if all, missed := matchesAll(m); !all {
		if len(missed) > 4 {
			missed = append(missed[:4], "…")
		}
		return Check{"present", Problem, fmt.Sprintf("%s, but its matcher %q does not match every tool (not %s): the others run unchecked; use \"*\"",
			where, m, strings.Join(missed, ", "))}
	}
	return Check{"present", OK, fmt.Sprintf("%s with matcher %q: %s", where, m, every)}
}
