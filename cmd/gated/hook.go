package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"time"

	"github.com/gatedhq/gated/client"
	"github.com/gatedhq/gated/internal/adapter/hook"
	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/server"
)

// exitHookBlock is the exit code that makes a coding agent's command hook
// block the tool: Claude Code runs the tool on every other non-zero code.
const exitHookBlock = 2

// runHook answers one PreToolUse command hook: the hook input on stdin, the
// answer on stdout, exit 0. Any failure exits 2 with the reason on stderr,
// which blocks the tool.
func runHook(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	const usage = "usage: gated hook claude-code|codex [--url URL] [--token-env NAME] [--timeout D] [--shadow] [--catalog DIR] [--policy DIR]"
	if len(args) == 0 {
		return hookFailure(usage)
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stdout, usage)
		return nil
	}
	// The Copilot SDK calls handlers in its own process: the SDKs' Copilot
	// handlers use /v1/hooks/copilot, and there is no command hook for it.
	rt, ok := hook.Lookup(args[0])
	if !ok || rt == hook.Copilot {
		return hookFailure(fmt.Sprintf("unknown hook runtime %q (want claude-code or codex; for the Copilot SDK use an SDK's Copilot handler)", args[0]))
	}
	fs := newFlagSet("hook "+rt.ID, stderr)
	url := fs.String("url", "", "ask the gated at this base URL; without it, decide in-process with --catalog and --policy")
	tokenEnv := fs.String("token-env", "GATED_TOKEN", "environment variable holding the bearer token for --url")
	timeout := fs.Duration("timeout", client.DefaultTimeout, "how long to wait for gated's answer")
	shadow := fs.Bool("shadow", false, "shadow mode: allow every call and say what gated would have done")
	state := fs.String("authorization-state", hook.DefaultAuthorizationState, "what the runtime's session vouches for (in-process only; a remote gated uses its --hook-authorization-state)")
	var sf sourceFlags
	sf.register(fs)
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		var ex exitError
		if errors.As(err, &ex) && ex.code == 0 {
			return err // --help
		}
		return hookFailure("bad flags for gated hook " + rt.ID)
	}
	if fs.NArg() > 0 {
		return hookFailure(fmt.Sprintf("gated hook %s takes no arguments, got %q", rt.ID, fs.Args()))
	}
	if err := hook.CheckAuthorizationState(*state); err != nil {
		return hookFailure("--authorization-state: " + err.Error())
	}
	body, err := io.ReadAll(io.LimitReader(stdin, server.DefaultHookMaxBodyBytes+1))
	if err != nil {
		return hookFailure("reading the hook input failed: " + err.Error())
	}
	if len(body) > server.DefaultHookMaxBodyBytes {
		return hookFailure(fmt.Sprintf("the hook input exceeds %d bytes", server.DefaultHookMaxBodyBytes))
	}
	var answer any
	if *url != "" {
		if len(sf.catalogDirs)+len(sf.policyDirs) > 0 {
			return hookFailure("--catalog and --policy are for deciding in-process; with --url, the gated there uses its own")
		}
		answer, err = askRemote(ctx, rt, *url, getenv(*tokenEnv), *timeout, *shadow, body)
	} else {
		answer, err = decideLocally(ctx, rt, &sf, *state, *shadow, body)
	}
	if err != nil {
		return hookFailure(err.Error())
	}
	out, err := json.Marshal(answer)
	if err != nil {
		return hookFailure("encoding the answer failed: " + err.Error())
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", out); err != nil {
		return hookFailure("writing the answer failed: " + err.Error())
	}
	return nil
}

// askRemote forwards the hook input to a running gated, which translates
// and decides; the Go client fails closed on anything but a valid answer.
// Only the answer's three fields are passed on.
func askRemote(ctx context.Context, rt hook.Runtime, url, token string, timeout time.Duration, shadow bool, body []byte) (any, error) {
	a, err := client.New(url, client.WithToken(token), client.WithTimeout(timeout), client.WithShadow(shadow)).Hook(ctx, rt.ID, body)
	if err != nil {
		return nil, fmt.Errorf("gated at %s gave no answer: %w", url, err)
	}
	return a, nil
}

// decideLocally translates and decides by the same path as the service,
// with the given catalog and policy and without an audit record (as gated
// check does).
func decideLocally(ctx context.Context, rt hook.Runtime, sf *sourceFlags, state string, shadow bool, body []byte) (any, error) {
	doc, err := eventcodec.Decode(body, eventcodec.DefaultMaxDepth)
	if err != nil {
		return nil, fmt.Errorf("the hook input is not usable: %w", err)
	}
	in, err := hook.Parse(doc)
	if err != nil {
		return nil, err
	}
	src, err := loadSources(sf, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("loading the catalog or policy failed: %w", err)
	}
	engine := gate.New(append(src.Opts, gate.WithShadow(shadow))...)
	pick := engine.CallCategory(in.ToolName, in.ToolInput, in.Cwd)
	event := rt.Event(in, hook.Options{AuthorizationState: state, Category: pick.Category}).Doc()
	d := engine.Decide(ctx, gate.Request{Event: event, TrustEventPrincipals: true, Workspace: in.Cwd, Pick: &pick})
	return rt.Answer(d), nil
}

// hookFailure exits 2 with the reason on stderr: the tool is blocked.
func hookFailure(reason string) error {
	return exitError{code: exitHookBlock, msg: "hook blocked the tool call: " + reason}
}
