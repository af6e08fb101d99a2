package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gatedhq/gated/client"
	"github.com/gatedhq/gated/internal/adapter/hook"
	"github.com/gatedhq/gated/internal/adapter/hook/wire"
	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/hookcmd"
)

// runHook answers one pre-tool command hook: the hook input on stdin, the
// runtime's answer on stdout. Any failure blocks in the runtime's own way
// (hookcmd.Block).
func runHook(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	return exitOf(hookCommand(ctx, args, getenv, stdin, stdout, stderr))
}

// exitOf carries a hook command's exit code and stderr out of run.
func exitOf(err error) error {
	var ex *hookcmd.Exit
	if errors.As(err, &ex) {
		return exitError{code: ex.Code, msg: ex.Msg}
	}
	return err
}

func hookCommand(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	usage := "usage: gated hook " + hookcmd.Usage + " [--url URL] [--token-env NAME] [--timeout D] [--shadow] [--workspace DIR] [--catalog DIR] [--policy DIR]"
	if len(args) == 0 {
		return &hookcmd.Exit{Code: hookcmd.BlockExit, Msg: "hook blocked the tool call: " + usage}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stdout, usage)
		return nil
	}
	codec, err := hookcmd.Runtime(args[0])
	if err != nil {
		return &hookcmd.Exit{Code: hookcmd.BlockExit, Msg: "hook blocked the tool call: " + err.Error()}
	}
	rt, _ := hook.Lookup(codec.ID)
	fail := func(why string) error { return hookcmd.Block(codec, stdout, why) }
	fs := newFlagSet("hook "+rt.ID, stderr)
	url := fs.String("url", "", "ask the gated at this base URL; without it, decide in-process with --catalog and --policy")
	tokenEnv := fs.String("token-env", "GATED_TOKEN", "environment variable holding the bearer token for --url")
	timeout := fs.Duration("timeout", client.DefaultTimeout, "how long to wait for gated's answer")
	shadow := fs.Bool("shadow", false, "shadow mode: allow every call and say what gated would have done")
	workspace := fs.String("workspace", "", hookcmd.WorkspaceUsage)
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
	body, err := hookcmd.Input(codec, getenv, stdin)
	if err != nil {
		return fail(err.Error())
	}
	if body, err = hookcmd.Rebase(codec, body, *workspace); err != nil {
		return fail(err.Error())
	}
	var answer wire.Reply
	if *url != "" {
		if len(sf.catalogDirs)+len(sf.policyDirs) > 0 {
			return fail("--catalog and --policy are for deciding in-process; with --url, the gated there uses its own")
		}
		answer, err = hookcmd.Forward(ctx, codec, hookcmd.Remote{URL: *url, Token: getenv(*tokenEnv), Timeout: *timeout, Shadow: *shadow}, body)
	} else {
		answer, err = decideLocally(ctx, rt, &sf, *state, *shadow, body)
	}
	if err != nil {
		return fail(err.Error())
	}
	return hookcmd.Answer(codec, stdout, answer)
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
