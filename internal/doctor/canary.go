package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gatedhq/gated/internal/adapter/hook/wire"
)

// canaryTool is the tool the canary call names: no runtime has it, so
// nothing could run even if the answer were allow, and gated records it
// under a name no one confuses with a real call.
const canaryTool = "gated_doctor_canary"

// maxCanaryWait bounds how long doctor waits for a hook: a runtime may
// allow ten minutes, and a hook that slow is a problem anyway.
const maxCanaryWait = time.Minute

// canaryInput is the runtime's pre-tool input for the canary, on the
// hook's event, carrying marker as its session and call id where the
// runtime has them (gated's request_id is the call id). It returns the
// tool gated records for it: the canary tool, or on the events that name
// no tool (Cursor's and Windsurf's shell and file events) the catalog's
// tool for the harmless action the input describes.
func canaryInput(o *Options, rt *runtime, event, marker string) ([]byte, string) {
	note := map[string]any{"note": "gated doctor's canary: a harmless call, nothing runs"}
	file := filepath.Join(o.Dir, "gated-doctor-canary")
	tool := canaryTool
	var in map[string]any
	if rt.id == "opencode" {
		event = "PreToolUse" // what gated's plugin posts for tool.execute.before
	}
	switch rt.id {
	case "copilot-cli":
		if event == "preToolUse" {
			args, _ := json.Marshal(note)
			in = map[string]any{"sessionId": marker, "timestamp": time.Now().UnixMilli(), "cwd": o.Dir, "toolName": canaryTool, "toolArgs": string(args)}
			break
		}
		in = map[string]any{"session_id": marker, "cwd": o.Dir, "hook_event_name": event, "tool_name": canaryTool, "tool_input": note, "tool_use_id": marker}
	case "gemini-cli":
		in = map[string]any{"session_id": marker, "transcript_path": "", "cwd": o.Dir, "hook_event_name": event,
			"timestamp": time.Now().UTC().Format(time.RFC3339), "tool_name": canaryTool, "tool_input": note}
	case "cursor":
		in = map[string]any{"conversation_id": marker, "generation_id": marker, "hook_event_name": event, "workspace_roots": []string{o.Dir}, "cwd": o.Dir}
		switch event {
		case "beforeShellExecution":
			in["command"], tool = ": gated doctor canary", "Bash"
		case "beforeReadFile":
			in["file_path"], in["content"], tool = file, "", "Read"
		case "beforeMCPExecution":
			in["tool_name"], in["tool_input"], tool = "MCP:gated:doctor_canary", note, "mcp__gated__doctor_canary"
		default:
			in["tool_name"], in["tool_input"], in["tool_use_id"] = canaryTool, note, marker
		}
	case "cline":
		in = map[string]any{"hookName": "PreToolUse", "taskId": marker, "timestamp": time.Now().UnixMilli(), "workspaceRoots": []string{o.Dir},
			"preToolUse": map[string]any{"toolName": canaryTool, "parameters": note}}
	case "goose":
		in = map[string]any{"event": "PreToolUse", "session_id": marker, "tool_name": canaryTool, "tool_input": note, "working_dir": o.Dir, "tool_call_id": marker}
	case "windsurf":
		info := map[string]any{"cwd": o.Dir}
		switch event {
		case "pre_run_command":
			info["command_line"], tool = ": gated doctor canary", "Bash"
		case "pre_read_code":
			info["file_path"], tool = file, "Read"
		case "pre_write_code":
			info["file_path"], info["edits"], tool = file, []any{}, "MultiEdit"
		default:
			info["mcp_server_name"], info["mcp_tool_name"], info["mcp_tool_arguments"], tool = "gated", "doctor_canary", note, "mcp__gated__doctor_canary"
		}
		in = map[string]any{"agent_action_name": event, "trajectory_id": marker, "execution_id": marker, "timestamp": time.Now().UTC().Format(time.RFC3339), "tool_info": info}
	case "amp": // the tool's arguments; its name is in the environment (ampCanaryEnv)
		b, _ := json.Marshal(note)
		return b, tool
	case "kiro-cli":
		in = map[string]any{"hook_event_name": event, "cwd": o.Dir, "tool_name": canaryTool, "tool_input": note}
	default: // Claude Code's shape: Claude Code, Codex, Factory Droid
		in = map[string]any{"session_id": marker, "transcript_path": "", "cwd": o.Dir, "permission_mode": "default",
			"hook_event_name": event, "tool_name": canaryTool, "tool_input": note, "tool_use_id": marker}
	}
	b, _ := json.Marshal(in)
	return b, tool
}

// newMarker is a unique, plain id for one canary call: plain enough that
// gated's audit keeps it as it is.
func newMarker() string {
	return "gated-doctor-" + time.Now().UTC().Format("20060102T150405.000000000")
}

// answer is the hook's verdict on the canary, read with the runtime's
// codec.
type answer struct {
	verdict wire.Verdict
	reason  string
}

// decisionRef finds the decision id gated puts in every reason.
var decisionRef = regexp.MustCompile(`\(decision ([A-Za-z0-9._:-]+)\)`)

// failedPrefixes begin what gated-hook and gated hook say when they block
// on a failure of their own (wire.Codec.Fail).
var failedPrefixes = []string{"gated could not check this call, so it is blocked: ", "hook blocked the tool call: "}

// canary runs the hook with the canary call as the runtime would, and
// reads the decision back from gated's audit.
func canary(ctx context.Context, o *Options, rt *runtime, h hook, w *wired) []Check {
	marker := newMarker()
	input, tool := canaryInput(o, rt, h.event, marker)
	var a *answer
	var c Check
	if h.typ == "http" || h.typ == "plugin" {
		a, c = postCanary(ctx, o, rt, h, input)
	} else {
		a, c = runCanary(ctx, o, rt, h, input, marker)
	}
	if a == nil {
		return []Check{c}
	}
	return []Check{c, audit(ctx, o, w, a, tool, marker)}
}

// codec is the runtime's hook format.
func codec(rt *runtime) *wire.Codec {
	c, _ := wire.Lookup(rt.id)
	return c
}

// runCanary spawns the hook's command line with the runtime's shell (or
// the hook file itself), in the project folder, with the canary input on
// stdin, and reads the answer as the runtime does: the printed answer,
// else (Windsurf, Kiro CLI, Amp) exit 0 allows and exit 2 denies (Amp: 1
// asks). Amp gets the tool's name in its environment, as Amp sets it.
func runCanary(ctx context.Context, o *Options, rt *runtime, h hook, input []byte, marker string) (*answer, Check) {
	wait, limit := maxCanaryWait, "doctor's limit"
	if h.timeout > 0 && h.timeout <= maxCanaryWait {
		wait, limit = h.timeout, rt.name+"'s timeout"
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	argv := rt.shell(o, h.command)
	var stdout, stderr bytes.Buffer
	var err error
	// A hook file written a moment ago can still be open for writing in a
	// process forked meanwhile (an installer, a test), and exec then fails
	// with "text file busy" until that process execs: try again briefly.
	for attempt := range 5 {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Env, cmd.Stdin = o.Dir, o.Environ, bytes.NewReader(input)
		if rt.id == "amp" {
			cmd.Env = append(append([]string{}, o.Environ...), ampCanaryEnv(marker)...)
		}
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err = cmd.Run(); !errors.Is(err, syscall.ETXTBSY) {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 10 * time.Millisecond)
	}
	code := 0
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return nil, Check{"canary", Problem, fmt.Sprintf("the hook did not answer within %s (%s): %s", wait, limit, afterFailure(rt, h))}
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		return nil, Check{"canary", Problem, fmt.Sprintf("the hook could not run: %v: %s", err, afterFailure(rt, h))}
	}
	how := "ran the hook as " + rt.name + " does"
	out := bytes.TrimSpace(stdout.Bytes())
	errLine := firstLine(stderr.String())
	if code == 2 && (!rt.exitCoded() || hasFailedPrefix(stderr.String())) {
		return nil, blockedOnOwnFailure(errLine)
	}
	switch {
	case len(out) > 0:
		return judge(rt, h, out, how)
	case code == 2 && rt.exitCoded():
		return verdict(rt, h, &answer{wire.Deny, strings.TrimSpace(stderr.String())}, how)
	case rt.exitCoded() && code == askExit(rt, h):
		return verdict(rt, h, &answer{wire.Ask, strings.TrimSpace(stderr.String())}, how)
	case code == 0 && rt.exitCoded():
		return verdict(rt, h, &answer{wire.Allow, ""}, how)
	case code != 0:
		return nil, Check{"canary", Problem, fmt.Sprintf("the hook exited %d (%s): %s", code, errLine, afterFailure(rt, h))}
	}
	return nil, Check{"canary", Problem, fmt.Sprintf("doctor %s, and the hook printed nothing: %s runs the tool", how, rt.name)}
}

// askExit is the exit code by which the hook asks the person (Amp's 1),
// or -1 when the runtime reads no such code.
func askExit(rt *runtime, h hook) int {
	if r := codec(rt).Answer(wire.Ask, "", wireEvent(rt, h)); r.Exit != 0 && r.Exit != 2 {
		return r.Exit
	}
	return -1
}

// wireEvent is the event the runtime's codec knows the hook by: none for
// Amp's delegate program, which answers every call alike.
func wireEvent(rt *runtime, h hook) string {
	if rt.id == "amp" {
		return ""
	}
	return h.event
}

// exitCoded: the runtime reads only the hook's exit code (Windsurf, Kiro
// CLI, Amp).
func (rt *runtime) exitCoded() bool { return codec(rt).Answer(wire.Deny, "", "").Quiet }

func hasFailedPrefix(s string) bool {
	s = strings.TrimPrefix(strings.TrimSpace(s), "gated: ")
	return slices.ContainsFunc(failedPrefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}

// postCanary posts the canary to an HTTP hook as Claude Code does: its
// headers, with only allowedEnvVars expanded.
func postCanary(ctx context.Context, o *Options, rt *runtime, h hook, input []byte) (*answer, Check) {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(input))
	if err != nil {
		return nil, Check{"canary", Problem, fmt.Sprintf("the hook's URL is not usable: %v", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h.headers {
		req.Header.Set(k, envRef.ReplaceAllStringFunc(v, func(ref string) string {
			name := envRef.FindStringSubmatch(ref)[1]
			for _, allowed := range h.envVars {
				if allowed == name {
					return o.getenv(name)
				}
			}
			return ""
		}))
	}
	resp, err := o.HTTP.Do(req)
	if err != nil {
		return nil, Check{"canary", Problem, fmt.Sprintf("the hook could not reach %s: %v: %s", h.url, err, afterFailure(rt, h))}
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, Check{"canary", Problem, fmt.Sprintf("reading the answer from %s failed: %v: %s", h.url, err, afterFailure(rt, h))}
	}
	if resp.StatusCode/100 != 2 {
		return nil, Check{"canary", Problem, fmt.Sprintf("%s answered %s: %s", h.url, resp.Status, afterFailure(rt, h))}
	}
	how := "posted to the hook as " + rt.name + " does"
	if h.typ == "plugin" {
		how = "posted to gated as its " + rt.name + " plugin does"
	}
	return judge(rt, h, body, how)
}

// blockedOwn begins the canary's detail when the hook blocked it on a
// failure of its own; the report's summary looks for it.
const blockedOwn = "the hook blocked the canary on a failure of its own"

// blockedOnOwnFailure is the canary's check when the hook failed closed
// (gated down, a bad token …): protected, but nothing can run.
func blockedOnOwnFailure(why string) Check {
	return Check{"canary", Problem, fmt.Sprintf("%s (%s). It fails closed, so every tool call is blocked until that is fixed", blockedOwn, why)}
}

// judge reads a hook's printed answer to the canary with the runtime's
// codec.
func judge(rt *runtime, h hook, out []byte, how string) (*answer, Check) {
	v, reason, err := codec(rt).Verdict(bytes.TrimSpace(out))
	if err != nil {
		return nil, Check{"canary", Problem, fmt.Sprintf("doctor %s, and the answer is not one %s reads (%v): %s", how, rt.name, err, afterUnreadable(rt))}
	}
	if hasFailedPrefix(reason) {
		return nil, blockedOnOwnFailure(firstLine(reason))
	}
	return verdict(rt, h, &answer{v, reason}, how)
}

func verdict(rt *runtime, h hook, a *answer, how string) (*answer, Check) {
	switch {
	case a.verdict == wire.Ask && !codec(rt).CanAsk(wireEvent(rt, h)):
		return nil, Check{"canary", Problem, fmt.Sprintf("doctor %s, and it answered ask, which %s may reject as unsupported and then run the tool: use `gated-hook %s`", how, rt.name, rt.id)}
	case strings.HasPrefix(a.reason, "gated (shadow mode)"):
		return a, Check{"canary", Problem, fmt.Sprintf("doctor %s: gated runs in shadow mode and allows every call (%s)", how, a.reason)}
	}
	reason := a.reason
	if reason == "" {
		reason = "(no reason: " + rt.name + " reads only the exit code)"
	}
	return a, Check{"canary", OK, fmt.Sprintf("doctor %s with a harmless canary call; it answered %s: %s", how, a.verdict, reason)}
}

// afterFailure says what the runtime does when the hook fails.
func afterFailure(rt *runtime, h hook) string {
	switch {
	case rt.failureText != "":
		return rt.failureText
	case rt.failureBlocks:
		return rt.name + " blocks every tool call until this is fixed"
	case blocksOnFailure(rt, h):
		return rt.blockSetting + " blocks every tool call until this is fixed"
	}
	return rt.name + " treats that as a failed hook and runs the tool"
}

// afterUnreadable says what the runtime does with an answer it cannot
// read.
func afterUnreadable(rt *runtime) string {
	if rt.failureBlocks {
		return rt.name + " blocks on it"
	}
	return rt.name + " ignores it and runs the tool"
}

// audit reads the canary's decision back from the gated the hook asked.
func audit(ctx context.Context, o *Options, w *wired, a *answer, tool, marker string) Check {
	m := decisionRef.FindStringSubmatch(a.reason)
	switch {
	case w.kind == "unread":
		return Check{"audit", Unverified, "doctor cannot read which gated the hook asks, so it cannot look the canary up"}
	case w.url == "":
		return Check{"audit", Unverified, "the hook decides in-process, so there is no audit record to read back"}
	case m == nil && a.verdict == wire.Allow && a.reason == "":
		return Check{"audit", Unverified, "the hook allowed the canary with exit 0 and nothing printed, the only allow the runtime reads, so there is no decision id to look up"}
	case m == nil:
		return Check{"audit", Unverified, "the answer names no decision id, so doctor cannot look it up"}
	}
	id := m[1]
	tokenEnv := o.AuditTokenEnv
	if tokenEnv == "" {
		tokenEnv = w.tokenEnv
	}
	target := w.url + "/v1/decisions/" + url.PathEscape(id)
	deadline := time.Now().Add(o.AuditWait)
	for {
		status, body, err := get(ctx, o, target, o.getenv(tokenEnv))
		switch {
		case err != nil:
			return Check{"audit", Unverified, fmt.Sprintf("the hook answered with decision %s, but reading it back from %s failed: %v", id, target, err)}
		case status == http.StatusOK:
			var rec struct {
				RequestID string `json:"request_id"`
				ToolName  string `json:"tool_name"`
				AgentID   string `json:"agent_id"`
			}
			if json.Unmarshal(body, &rec) != nil || rec.ToolName != tool {
				return Check{"audit", Problem, fmt.Sprintf("gated's audit holds decision %s, but not as the canary's call (tool %q)", id, rec.ToolName)}
			}
			detail := fmt.Sprintf("gated's audit holds the canary's decision %s (tool %s, agent %s", id, rec.ToolName, rec.AgentID)
			if rec.RequestID == marker {
				detail += ", request " + marker
			}
			return Check{"audit", OK, detail + ")"}
		case status == http.StatusNotFound && bytes.Contains(body, []byte("PostgreSQL")):
			return Check{"audit", Unverified, fmt.Sprintf("gated at %s stores its audit in a file (no --database-url), which its API does not read: look for decision %s in its --audit-file (gated-audit.jsonl in the folder gated was started in, unless set)", w.url, id)}
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			with := "no token"
			if tokenEnv != "" {
				with = "the token in $" + tokenEnv
			}
			return Check{"audit", Unverified, fmt.Sprintf("the hook answered with decision %s, but %s may not read decisions (HTTP %d; scope decisions_read): pass --audit-token-env NAME with one that may, or look it up in gated's audit",
				id, with, status)}
		case status == http.StatusNotFound && time.Now().Before(deadline):
			// The audit records in batches: wait for it.
			select {
			case <-ctx.Done():
				return Check{"audit", Unverified, "doctor was stopped while waiting for the audit record"}
			case <-time.After(100 * time.Millisecond):
			}
		case status == http.StatusNotFound:
			return Check{"audit", Problem, fmt.Sprintf("gated answered with decision %s, but its audit does not hold it after %s: is gated's audit failing?", id, o.AuditWait)}
		default:
			return Check{"audit", Unverified, fmt.Sprintf("reading decision %s back from %s answered HTTP %d", id, target, status)}
		}
	}
}

func get(ctx context.Context, o *Options, target, token string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := o.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, err
}

// firstLine is a hook's stderr as one short line.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		return "nothing on stderr"
	}
	return s
}
