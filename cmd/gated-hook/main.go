// Command gated-hook is a coding agent's command hook answered by a running
// gated: `gated-hook claude-code --url http://127.0.0.1:8080`. It does what
// `gated hook RUNTIME --url` does, in a binary that links none of the
// decision engine, so it starts about as fast as curl: a runtime spawns its
// hook on every tool call. Any failure blocks the tool the runtime's way.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/gatedhq/gated/internal/hookcmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	return hookcmd.Run(ctx, args, getenv, stdin, stdout, stderr)
}

// exitCode writes err's message on stderr and returns its exit code; an
// error that is not a hook's exit blocks.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ex *hookcmd.Exit
	if !errors.As(err, &ex) {
		ex = &hookcmd.Exit{Code: hookcmd.BlockExit, Msg: "hook blocked the tool call: " + err.Error()}
	}
	if ex.Msg != "" {
		fmt.Fprintln(stderr, ex.Msg)
	}
	return ex.Code
}
