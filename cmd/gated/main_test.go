package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// asGated makes the test binary act as the gated command when re-executed
// with this variable set, so process-level tests (SIGKILL, restart) run the
// real wiring without building a second binary.
const asGated = "GATED_TEST_RUN_AS_GATED"

func TestMain(m *testing.M) {
	if os.Getenv(asGated) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := run(ctx, append([]string{"gated"}, os.Args[1:]...), os.Getenv, os.Stdin, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "gated:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
