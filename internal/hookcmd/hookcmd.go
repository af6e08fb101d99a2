// Package hookcmd is a coding agent's command hook answered by a running
// gated: read the runtime's hook input, post it to /v1/hooks/<runtime>,
// check the answer with the runtime's codec and print it, or, on any
// failure, block the tool the runtime's way. It links only the Go client
// and the wire formats, so the gated-hook binary that wraps it starts about
// as fast as curl: a runtime spawns its hook on every tool call.
package hookcmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gatedhq/gated/client"
	"github.com/gatedhq/gated/internal/adapter/hook/wire"
)

// Exit ends a hook command: its exit code and what it writes on stderr.
type Exit struct {
	Code int
	Msg  string
}

func (e *Exit) Error() string { return e.Msg }

// BlockExit is the exit code that blocks where exit codes are all a
// runtime reads, and the last word when nothing could be printed.
const BlockExit = 2

// Usage lists the runtimes a command hook answers.
const Usage = "claude-code|codex|copilot-cli|gemini-cli|qwen-code|cursor|cline|goose|windsurf|kiro-cli|droid|amp"

// Runtime is the codec of a runtime whose command hook gated answers: any
// registered one but the Copilot SDK's and OpenCode's, whose handlers run
// in the agent's own process and use the SDKs.
func Runtime(id string) (*wire.Codec, error) {
	c, ok := wire.Lookup(id)
	if !ok || c == wire.CopilotSDK || c == wire.OpenCode {
		return nil, fmt.Errorf("unknown hook runtime %q (want %s; for the Copilot SDK use an SDK's Copilot handler, for OpenCode the TypeScript SDK's plugin)", id, Usage)
	}
	return c, nil
}

// Remote is where and how to ask gated.
type Remote struct {
	URL, Token string
	Timeout    time.Duration
	Shadow     bool
}

// readInput reads the hook input from stdin, no more than gated accepts.
func readInput(stdin io.Reader) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(stdin, wire.MaxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the hook input failed: %w", err)
	}
	if len(body) > wire.MaxInputBytes {
		return nil, fmt.Errorf("the hook input exceeds %d bytes", wire.MaxInputBytes)
	}
	return body, nil
}

// Input reads the hook input from stdin, no more than gated accepts, and
// adds what the runtime passes elsewhere (Amp: the tool name in the
// environment), with the working directory the runtime started the
// command in.
func Input(c *wire.Codec, getenv func(string) string, stdin io.Reader) ([]byte, error) {
	body, err := readInput(stdin)
	if err != nil {
		return nil, err
	}
	cwd, _ := os.Getwd() // none is no workspace, which accepts no path as inside it
	return c.Wrap(getenv, cwd, body)
}

// WorkspaceUsage describes the --workspace flag of the hook commands.
const WorkspaceUsage = "the session's workspace, for a runtime whose cwd is where the agent chose to run a command (Codex, Windsurf); default: the folder the hook runs in"

// Rebase moves a shell call the runtime reports with a cwd outside the
// workspace onto it (wire.Codec.Rebase): the workspace is the folder the
// runtime starts the hook in, unless --workspace names one.
func Rebase(c *wire.Codec, body []byte, workspace string) ([]byte, error) {
	if workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("the hook's working directory, the session's workspace, is unknown: %w", err)
		}
		workspace = wd
	}
	return c.RebaseBody(body, workspace)
}

// Forward asks the gated at r.URL, which translates and decides; the Go
// client fails closed on anything but a 2xx answer, and the runtime's codec
// on an answer that is not the runtime's. Only the fields the runtime reads
// are passed on.
func Forward(ctx context.Context, c *wire.Codec, r Remote, body []byte) (wire.Reply, error) {
	raw, err := client.New(r.URL, client.WithToken(r.Token), client.WithTimeout(r.Timeout), client.WithShadow(r.Shadow)).HookRaw(ctx, c.ID, body)
	if err != nil {
		return wire.Reply{}, fmt.Errorf("gated at %s gave no answer: %w", r.URL, err)
	}
	a, err := c.Read(raw)
	if err != nil {
		return wire.Reply{}, fmt.Errorf("gated at %s gave no usable answer: %w", r.URL, err)
	}
	return a, nil
}

// Answer prints r, unless the runtime reads only the exit code, and ends
// the command as r says. An answer that cannot be printed blocks.
func Answer(c *wire.Codec, stdout io.Writer, r wire.Reply) error {
	if err := emit(stdout, r); err != nil {
		return Block(c, stdout, err.Error())
	}
	if r.Exit == 0 && r.Stderr == "" {
		return nil
	}
	return &Exit{r.Exit, r.Stderr}
}

// Block ends the command so that the runtime blocks the tool: exit 2 with
// the reason on stderr where exit 2 blocks, and a deny printed on stdout
// where the runtime reads only that (Copilot CLI, Cline) or reads both
// (Gemini CLI, Cursor, goose).
func Block(c *wire.Codec, stdout io.Writer, reason string) error {
	r := c.Fail(reason, "")
	if err := emit(stdout, r); err != nil && r.Exit == 0 {
		// Nothing reached the runtime: exit 2 is the last word left.
		return &Exit{BlockExit, r.Stderr}
	}
	return &Exit{r.Exit, r.Stderr}
}

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

// Run is the gated-hook command: `gated-hook RUNTIME --url URL`, the
// remote half of `gated hook` alone. Flags left unset fall back to GATED_URL,
// GATED_TOKEN_ENV, GATED_TIMEOUT and GATED_SHADOW, as gated's own do. It
// returns nil or an *Exit.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	usage := "usage: gated-hook " + Usage + " --url URL [--token-env NAME] [--timeout D] [--shadow] [--workspace DIR]"
	if len(args) == 0 {
		return &Exit{BlockExit, "hook blocked the tool call: " + usage}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		_, _ = fmt.Fprintln(stdout, usage)
		return nil
	}
	c, err := Runtime(args[0])
	if err != nil {
		return &Exit{BlockExit, "hook blocked the tool call: " + err.Error()}
	}
	fs := flag.NewFlagSet("gated-hook "+c.ID, flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "the gated to ask, by base URL (required)")
	tokenEnv := fs.String("token-env", "GATED_TOKEN", "environment variable holding the bearer token")
	timeout := fs.Duration("timeout", client.DefaultTimeout, "how long to wait for gated's answer")
	shadow := fs.Bool("shadow", false, "shadow mode: allow every call and say what gated would have done")
	workspace := fs.String("workspace", "", WorkspaceUsage)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return Block(c, stdout, "bad flags for gated-hook "+c.ID)
	}
	if err := envDefaults(fs, getenv); err != nil {
		return Block(c, stdout, err.Error())
	}
	switch {
	case fs.NArg() > 0:
		return Block(c, stdout, fmt.Sprintf("gated-hook %s takes no arguments, got %q", c.ID, fs.Args()))
	case *url == "":
		return Block(c, stdout, "gated-hook needs --url (or GATED_URL); to decide without a server, use gated hook --catalog")
	}
	body, err := Input(c, getenv, stdin)
	if err != nil {
		return Block(c, stdout, err.Error())
	}
	if body, err = Rebase(c, body, *workspace); err != nil {
		return Block(c, stdout, err.Error())
	}
	r, err := Forward(ctx, c, Remote{URL: *url, Token: getenv(*tokenEnv), Timeout: *timeout, Shadow: *shadow}, body)
	if err != nil {
		return Block(c, stdout, err.Error())
	}
	return Answer(c, stdout, r)
}

// envDefaults sets each flag the command line leaves unset from its GATED_
// variable, as gated's own commands do; a value that does not parse blocks
// rather than being ignored.
func envDefaults(fs *flag.FlagSet, getenv func(string) string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		env := "GATED_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(env); !set[f.Name] && v != "" && err == nil {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("%s=%q: %v", env, v, serr)
			}
		}
	})
	return err
}
