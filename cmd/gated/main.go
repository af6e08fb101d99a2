// Command gated is the policy-decision service that stands between AI agents
// and their tools. main only wires the process to run.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	var ex exitError
	switch {
	case errors.As(err, &ex):
		if ex.msg != "" {
			fmt.Fprintln(os.Stderr, "gated:", ex.msg)
		}
		os.Exit(ex.code)
	case err != nil:
		fmt.Fprintln(os.Stderr, "gated:", err)
		os.Exit(1)
	}
}
