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
	"regexp"
	"strings"
	"time"
)

// canaryTool is the tool the canary call names: no runtime has it, so
// nothing could run even if the answer were allow, and gated records it
// under a name no one confuses with a real call.
const canaryTool = "gated_doctor_canary"

// maxCanaryWait bounds how long doctor waits for a hook: a runtime may
// allow ten minutes, and a hook that slow is a problem anyway.
const maxCanaryWait = time.Minute

// canaryInput is a PreToolUse input as the runtimes send it, for the
// canary tool, carrying marker as its tool_use_id (gated's request_id).
func canaryInput(o *Options, rt *runtime, marker string) []byte {
	b, _ := json.Marshal(map[string]any{
		"session_id": marker, "transcript_path": "", "cwd": o.Dir, "permission_mode": "default",
		"hook_event_name": rt.event, "tool_name": canaryTool,
		"tool_input":  map[string]any{"note": "gated doctor's canary: a harmless call, nothing runs"},
		"tool_use_id": marker,
	})
	return b
}

// newMarker is a unique, plain id for one canary call: plain enough that
// gated's audit keeps it as it is.
func newMarker() string {
	return "gated-doctor-" + time.Now().UTC().Format("20060102T150405.000000000")
}

// hookAnswer is a PreToolUse hook's answer.
type hookAnswer struct {
	HookSpecificOutput struct {
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`
}

// decisionRef finds the decision id gated puts in every reason.
var decisionRef = regexp.MustCompile(`\(decision ([A-Za-z0-9._:-]+)\)`)

// canary runs the hook with the canary call as the runtime would, and
// reads the decision back from gated's audit.
func canary(ctx context.Context, o *Options, rt *runtime, h hook, w *wired) []Check {
	marker := newMarker()
	input := canaryInput(o, rt, marker)
	var a *hookAnswer
	var c Check
	if h.typ == "http" {
		a, c = postCanary(ctx, o, rt, h, input)
	} else {
		a, c = runCanary(ctx, o, rt, h, input)
	}
	if a == nil {
		return []Check{c}
	}
	return []Check{c, audit(ctx, o, rt, w, a, marker)}
}

// runCanary spawns the hook's command line with the runtime's shell, in the
// project folder, with the canary input on stdin.
func runCanary(ctx context.Context, o *Options, rt *runtime, h hook, input []byte) (*hookAnswer, Check) {
	wait := min(h.timeout, maxCanaryWait)
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	argv := rt.shell(o, h.command)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = o.Dir, o.Environ, bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		if wait < h.timeout {
			return nil, Check{"canary", Problem, fmt.Sprintf("the hook did not answer within %s (doctor's limit; %s waits %s): every tool call would wait as long", wait, rt.name, h.timeout)}
		}
		return nil, Check{"canary", Problem, fmt.Sprintf("the hook did not answer within %s's timeout (%s): %s", rt.name, h.timeout, afterFailure(rt, h))}
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		return nil, Check{"canary", Problem, fmt.Sprintf("the hook blocked the canary on a failure of its own (%s). It fails closed, so every tool call is blocked until that is fixed",
			firstLine(stderr.String()))}
	case errors.As(err, &exit):
		return nil, Check{"canary", Problem, fmt.Sprintf("the hook exited %d (%s): %s", exit.ExitCode(), firstLine(stderr.String()), afterFailure(rt, h))}
	case err != nil:
		return nil, Check{"canary", Problem, fmt.Sprintf("the hook could not run: %v: %s", err, afterFailure(rt, h))}
	}
	return judge(rt, stdout.Bytes(), "ran the hook as "+rt.name+" does")
}

// postCanary posts the canary to an HTTP hook as Claude Code does: its
// headers, with only allowedEnvVars expanded.
func postCanary(ctx context.Context, o *Options, rt *runtime, h hook, input []byte) (*hookAnswer, Check) {
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
	return judge(rt, body, "posted to the hook as "+rt.name+" does")
}

// judge reads a hook's answer to the canary.
func judge(rt *runtime, out []byte, how string) (*hookAnswer, Check) {
	var a hookAnswer
	if err := json.Unmarshal(bytes.TrimSpace(out), &a); err != nil {
		return nil, Check{"canary", Problem, fmt.Sprintf("doctor %s, and the answer is not a hook answer (%v): %s ignores it and runs the tool", how, err, rt.name)}
	}
	d, reason := a.HookSpecificOutput.PermissionDecision, a.HookSpecificOutput.PermissionDecisionReason
	switch {
	case d != "allow" && d != "ask" && d != "deny":
		return nil, Check{"canary", Problem, fmt.Sprintf("doctor %s, and the answer has no permissionDecision (got %q): %s runs the tool", how, d, rt.name)}
	case d == "ask" && rt.cannotAsk:
		return nil, Check{"canary", Problem, fmt.Sprintf("doctor %s, and it answered ask, which %s may reject as unsupported and then run the tool: use `gated hook %s`", how, rt.name, rt.id)}
	case strings.HasPrefix(reason, "gated (shadow mode)"):
		return &a, Check{"canary", Problem, fmt.Sprintf("doctor %s: gated runs in shadow mode and allows every call (%s)", how, reason)}
	}
	return &a, Check{"canary", OK, fmt.Sprintf("doctor %s with a harmless canary call; it answered %s: %s", how, d, reason)}
}

// afterFailure says what the runtime does when the hook fails.
func afterFailure(rt *runtime, h hook) string {
	if rt.onFailure && h.onFailureBlock {
		return `onFailure "block" blocks every tool call until this is fixed`
	}
	return rt.name + " treats that as a failed hook and runs the tool"
}

// audit reads the canary's decision back from the gated the hook asked.
func audit(ctx context.Context, o *Options, rt *runtime, w *wired, a *hookAnswer, marker string) Check {
	m := decisionRef.FindStringSubmatch(a.HookSpecificOutput.PermissionDecisionReason)
	switch {
	case w.kind == "unread":
		return Check{"audit", Unverified, "doctor cannot read which gated the hook asks, so it cannot look the canary up"}
	case w.url == "":
		return Check{"audit", Unverified, "the hook decides in-process, so there is no audit record to read back"}
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
			if json.Unmarshal(body, &rec) != nil || rec.ToolName != canaryTool {
				return Check{"audit", Problem, fmt.Sprintf("gated's audit holds decision %s, but not as the canary's call (tool %q)", id, rec.ToolName)}
			}
			detail := fmt.Sprintf("gated's audit holds the canary's decision %s (tool %s, agent %s", id, rec.ToolName, rec.AgentID)
			if rec.RequestID == marker {
				detail += ", request " + marker
			}
			return Check{"audit", OK, detail + ")"}
		case status == http.StatusNotFound && bytes.Contains(body, []byte("PostgreSQL")):
			return Check{"audit", Unverified, fmt.Sprintf("gated at %s stores its audit in a file (no --database-url), which its API does not read: look for decision %s in its --audit-file", w.url, id)}
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
