package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/policy/cases"
	"github.com/gatedhq/gated/internal/policy/coverage"
	"github.com/gatedhq/gated/internal/sources"
)

const policyUsage = "usage: gated policy lint|compile|test [--catalog DIR|MANIFEST]... [--coverage] [--coverage-json FILE] [--coverage-min PERCENT] DIR...|MANIFEST\n       gated policy diff [flags] OLD NEW (gated policy diff --help)"

// coverageFlags are `gated policy test`'s: a report of what the cases did
// not exercise (docs/policy.md, "Coverage").
type coverageFlags struct {
	text bool
	json string
	min  float64
}

func (c *coverageFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.text, "coverage", false, "after the cases, list every grant, argument rule, floor and custom Rego rule no case exercised")
	fs.StringVar(&c.json, "coverage-json", "", "write the coverage report as JSON to `FILE`")
	fs.Float64Var(&c.min, "coverage-min", 0, "fail (exit 1) when fewer than `PERCENT` of the items were exercised")
}

func (c *coverageFlags) on() bool { return c.text || c.json != "" || c.min > 0 }

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
	var cf coverageFlags
	if verb == "test" {
		cf.register(fs)
	}
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	if cf.min < 0 || cf.min > 100 || math.IsNaN(cf.min) {
		return usageError("--coverage-min %v: want a percentage from 0 to 100", cf.min)
	}
	dirs := fs.Args()
	if len(dirs) == 0 {
		return usageError(policyUsage)
	}
	if verb == "test" && len(sf.catalogDirs) == 0 {
		// Without --catalog, the test files may name theirs (`catalog:`,
		// relative to the file); --catalog takes precedence.
		named, err := cases.CatalogsOnDisk(dirs)
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
		return policyTest(ctx, &sf, &cf, dirs, stdout)
	}
	return usageError(policyUsage)
}

// policyTest runs the cases under dirs through the real gate and, when
// asked, reports their coverage.
func policyTest(ctx context.Context, sf *sourceFlags, cf *coverageFlags, dirs []string, stdout io.Writer) error {
	sf.policyDirs = dirs
	var rego *policy.RegoCoverage
	var opts []policy.Option
	if cf.on() {
		rego = policy.NewRegoCoverage()
		opts = append(opts, policy.WithRegoCoverage(rego))
	}
	src, err := loadSources(sf, nil, nil, opts...)
	if err != nil {
		return err
	}
	var cov *coverage.Collector
	if cf.on() {
		cat, set := src.Current()
		cov = coverage.New(cat, set, rego)
	}
	decide := func(ev map[string]any, principals []string, now time.Time) (string, []string) {
		e := gate.New(append(src.Opts, gate.WithClock(func() time.Time { return now }))...)
		d := e.Decide(ctx, gate.Request{Event: ev, Principals: principals})
		if cov != nil {
			cov.Observe(d)
		}
		return d.Route.String(), d.HardBlockers
	}
	_, failed, err := cases.Run(dirs, decide, stdout)
	if err != nil {
		return err
	}
	if cov != nil {
		rep := cov.Report()
		if cf.text {
			rep.WriteText(stdout)
		}
		if cf.json != "" {
			b, _ := json.MarshalIndent(rep, "", "  ")
			if err := os.WriteFile(cf.json, append(b, '\n'), 0o644); err != nil {
				return fmt.Errorf("--coverage-json: %w", err)
			}
		}
		if rep.Below(cf.min) {
			// Exit 1 as a failed case does; the message says why either way.
			return exitError{code: 1, msg: fmt.Sprintf("coverage %.1f%% (%d of %d items exercised) is below --coverage-min %v%%", rep.Percent, rep.Exercised, rep.Total, cf.min)}
		}
	}
	if failed > 0 {
		return exitError{code: 1}
	}
	return nil
}
