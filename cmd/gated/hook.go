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
	"github.com/gatedhq/gated/internal/adapter/hook/wire"
	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/server"
)

// exitHookBlock is the exit code that makes a coding agent's command hook
// block the tool: Claude Code runs the tool on every other non-zero code.
const exitHookBlock = 2

// runHook answers one pre-tool command hook: the hook input on stdin, the
// runtime's answer on stdout, exit 0. Any failure blocks in the runtime's
// own way (hookFailure).
func runHook(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	const usage = "usage: gated hook claude-code|codex|copilot-cli|gemini-cli|cursor|cline|goose|windsurf|kiro-cli|droid [--url URL] [--token-env NAME] [--timeout D] [--shadow] [--catalog DIR] [--policy DIR]"
	if len(args) == 0 {
		return exitError{code: exitHookBlock, msg: "hook blocked the tool call: " + usage}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stdout, usage)
		return nil
	}
	// The Copilot SDK calls handlers in its own process: the SDKs' Copilot
	// handlers use /v1/hooks/copilot, and the Copilot CLI's command hook is
	// copilot-cli.
	rt, ok := hook.Lookup(args[0])
	if !ok || rt == hook.Copilot {
		return exitError{code: exitHookBlock, msg: fmt.Sprintf("hook blocked the tool call: unknown hook runtime %q (want claude-code, codex, copilot-cli, gemini-cli, cursor, cline, goose, windsurf, kiro-cli or droid; for the Copilot SDK use an SDK's Copilot handler)", args[0])}
	}
	fail := func(why string) error { return hookFailure(rt, stdout, why) }
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
		return fail("bad flags for gated hook " + rt.ID)
	}
	if fs.NArg() > 0 {
		return fail(fmt.Sprintf("gated hook %s takes no arguments, got %q", rt.ID, fs.Args()))
	}
	if err := hook.CheckAuthorizationState(*state); err != nil {
		return fail("--authorization-state: " + err.Error())
	}
	body, err := io.ReadAll(io.LimitReader(stdin, server.DefaultHookMaxBodyBytes+1))
	if err != nil {
		return fail("reading the hook input failed: " + err.Error())
	}
	if len(body) > server.DefaultHookMaxBodyBytes {
		return fail(fmt.Sprintf("the hook input exceeds %d bytes", server.DefaultHookMaxBodyBytes))
	}
	var answer wire.Reply
	if *url != "" {
		if len(sf.catalogDirs)+len(sf.policyDirs) > 0 {
			return fail("--catalog and --policy are for deciding in-process; with --url, the gated there uses its own")
		}
		answer, err = askRemote(ctx, rt, *url, getenv(*tokenEnv), *timeout, *shadow, body)
	} else {
		answer, err = decideLocally(ctx, rt, &sf, *state, *shadow, body)
	}
	if err != nil {
		return fail(err.Error())
	}
	if err := emit(stdout, answer); err != nil {
		return fail(err.Error())
	}
	return exitFor(answer)
}

// emit prints the reply's answer, unless the runtime reads only the exit
// code.
func emit(stdout io.Writer, r wire.Reply) error {
	if r.Quiet {
		return nil
	}
	out, err := json.Marshal(r.Body)
	if err != nil {
		return fmt.Errorf("encoding the answer failed: %w", err)
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", out); err != nil {
		return fmt.Errorf("writing the answer failed: %w", err)
	}
	return nil
}

// exitFor is how the command ends after emitting r: its exit code, with
// its stderr text.
func exitFor(r wire.Reply) error {
	if r.Exit == 0 && r.Stderr == "" {
		return nil
	}
	return exitError{code: r.Exit, msg: r.Stderr}
}

// askRemote forwards the hook input to a running gated, which translates
// and decides; the Go client fails closed on anything but a 2xx answer, and
// the runtime's codec on an answer that is not the runtime's. Only the
// fields the runtime reads are passed on.
func askRemote(ctx context.Context, rt hook.Runtime, url, token string, timeout time.Duration, shadow bool, body []byte) (wire.Reply, error) {
	raw, err := client.New(url, client.WithToken(token), client.WithTimeout(timeout), client.WithShadow(shadow)).HookRaw(ctx, rt.ID, body)
	if err != nil {
		return wire.Reply{}, fmt.Errorf("gated at %s gave no answer: %w", url, err)
	}
	a, err := rt.Read(raw)
	if err != nil {
		return wire.Reply{}, fmt.Errorf("gated at %s gave no usable answer: %w", url, err)
	}
	return a, nil
}

// decideLocally translates and decides by the same path as the service,
// with the given catalog and policy and without an audit record (as gated
// check does).
func decideLocally(ctx context.Context, rt hook.Runtime, sf *sourceFlags, state string, shadow bool, body []byte) (wire.Reply, error) {
	doc, err := eventcodec.Decode(body, eventcodec.DefaultMaxDepth)
	if err != nil {
		return wire.Reply{}, fmt.Errorf("the hook input is not usable: %w", err)
	}
	in, err := rt.Parse(doc)
	if err != nil {
		return wire.Reply{}, err
	}
	src, err := loadSources(sf, nil, nil)
	if err != nil {
		return wire.Reply{}, fmt.Errorf("loading the catalog or policy failed: %w", err)
	}
	engine := gate.New(append(src.Opts, gate.WithShadow(shadow))...)
	pick := engine.CallCategory(in.Tool, in.Input, in.Cwd)
	event := rt.Event(in, hook.Options{AuthorizationState: state, Category: pick.Category}).Doc()
	d := engine.Decide(ctx, gate.Request{Event: event, TrustEventPrincipals: true, Workspace: in.Cwd, Pick: &pick})
	return rt.Answer(d, in.Event), nil
}

// hookFailure blocks the tool in the runtime's way: exit 2 with the reason
// on stderr where exit 2 blocks, and a deny printed on stdout where the
// runtime reads only that (Copilot CLI, Cline) or reads both (Gemini CLI,
// Cursor, goose).
func hookFailure(rt hook.Runtime, stdout io.Writer, reason string) error {
	r := rt.Fail(reason, "")
	if err := emit(stdout, r); err != nil && r.Exit == 0 {
		// Nothing reached the runtime: exit 2 is the last word left.
		return exitError{code: exitHookBlock, msg: r.Stderr}
	}
	return exitError{code: r.Exit, msg: r.Stderr}
}
