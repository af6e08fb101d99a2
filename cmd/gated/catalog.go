package main

import (
	"io"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/sources"
)

const catalogUsage = "usage: gated catalog lint [--bundle-git-base URL] [--bundle-max-bytes N] [--require-pinned] DIR...|MANIFEST"

// runCatalog is `gated catalog lint DIR...|MANIFEST`: the directories, or
// the bundle a manifest composes, as --catalog takes them.
func runCatalog(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) < 1 || args[0] != "lint" {
		return usageError(catalogUsage)
	}
	fs := newFlagSet("catalog lint", stderr)
	var bf bundleFlags
	bf.register(fs)
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError(catalogUsage)
	}
	b, err := bf.config()
	if err != nil {
		return err
	}
	c, err := sources.LoadCatalog(fs.Args(), b)
	if !catalog.Lint(c, err, stdout) {
		return exitError{code: 1}
	}
	return nil
}
