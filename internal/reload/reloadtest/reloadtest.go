// Package reloadtest runs a reloader for the length of a test.
package reloadtest

import (
	"context"
	"testing"

	"github.com/gatedhq/gated/internal/reload"
)

// Start builds a reloader from cfg and runs it until the test ends; a
// failure to build, or an error from Run, fails the test.
func Start[T any](t testing.TB, cfg reload.Config[T]) *reload.Reloader[T] {
	t.Helper()
	r, err := reload.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return r
}
