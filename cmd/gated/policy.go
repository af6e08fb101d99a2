package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/policy/cases"
	"github.com/gatedhq/gated/internal/sources"
)

const policyUsage = "usage: gated policy lint|compile|test [--catalog DIR|MANIFEST]... DIR...|MANIFEST\n       gated policy diff [flags] OLD NEW (gated policy diff --help)"

// runPolicy is `gated policy lint|compile|test [--catalog DIR]... DIR...`:
// the analogues of opa check, opa build and opa test for POLICY.md; and
// `gated policy diff OLD NEW` (policydiff.go). Both
// take a bundle manifest as --catalog and --policy do.
func runPolicy(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError(policyUsage)
	}
	verb := args[0]
	if verb == "diff" {
		return runPolicyDiff(ctx, args[1:], getenv, stdout, stderr)
	}
	fs := newFlagSet("policy "+verb, stderr)
	var sf sourceFlags
	sf.register(fs)
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	dirs := fs.Args()
	if len(dirs) == 0 {
		return usageError(policyUsage)
	}
	if verb == "test" && len(sf.catalogDirs) == 0 {
		// Without --catalog, the test files may name theirs (`catalog:`,
		// relative to the file); --catalog takes precedence.
		named, err := cases.Catalogs(dirs)
		if err != nil {
			return err
		}
		sf.catalogDirs = named
	}
	bundles, err := sf.bundles.config()
	if err != nil {
		return err
	}
	var res policy.Resolver
	if len(sf.catalogDirs) > 0 {
		cat, err := sources.LoadCatalog(sf.catalogDirs, bundles)
		if err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
		res = cat
	}
	switch verb {
	case "lint":
		s, err := sources.LoadPolicy(dirs, bundles, res)
		if !policy.Lint(s, err, stdout) {
			return exitError{code: 1}
		}
		return nil
	case "compile":
		s, err := sources.LoadPolicy(dirs, bundles, res)
		return policy.Compile(s, err, stdout)
	case "test":
		sf.policyDirs = dirs
		src, err := loadSources(&sf, nil, nil)
		if err != nil {
			return err
		}
		decide := func(ev map[string]any, principals []string, now time.Time) (string, []string) {
			e := gate.New(append(src.Opts, gate.WithClock(func() time.Time { return now }))...)
			d := e.Decide(ctx, gate.Request{Event: ev, Principals: principals})
			return d.Route.String(), d.HardBlockers
		}
		_, failed, err := cases.Run(dirs, decide, stdout)
		if err != nil {
			return err
		}
		if failed > 0 {
			return exitError{code: 1}
		}
		return nil
	}
	return usageError(policyUsage)
}
