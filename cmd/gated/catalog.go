package main

import (
	"io"

	"github.com/gatedhq/gated/internal/catalog"
)

// runCatalog is `gated catalog lint DIR...`.
func runCatalog(args []string, stdout io.Writer) error {
	if len(args) < 2 || args[0] != "lint" {
		return usageError("usage: gated catalog lint DIR...")
	}
	if !catalog.Lint(args[1:], stdout) {
		return exitError{code: 1}
	}
	return nil
}
