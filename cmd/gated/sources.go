package main

import (
	"flag"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/sources"
)

// sourceFlags are the decision sources shared by serve and check.
type sourceFlags struct {
	catalogDirs  listFlag
	policyDirs   listFlag
	unknownTools string
	argMode      string
	gitBase      string
	pinned       bool
	pollInterval time.Duration
}

func (s *sourceFlags) register(fs *flag.FlagSet) {
	fs.Var(&s.catalogDirs, "catalog", "catalog directory of ACTION.md, TOOL.md, ACTIONS.yaml, action.json files (repeatable), or one AIP-26 bundle manifest (manifest.yaml, CODE.md)")
	fs.Var(&s.policyDirs, "policy", "policy directory of POLICY.md files and custom *.rego modules (repeatable), or one AIP-26 bundle manifest (manifest.yaml, CODE.md)")
	fs.StringVar(&s.gitBase, "bundle-git-base", bundle.DefaultGitBase, "URL that a bundle's github sources are fetched from, owner/name appended")
	fs.BoolVar(&s.pinned, "require-pinned", false, "refuse bundle github sources whose ref is not a 40-hex commit SHA")
	fs.DurationVar(&s.pollInterval, "bundle-poll-interval", 0, "rebuild bundles this often, resolving their branches and tags again (0: only on SIGHUP and local edits)")
	fs.StringVar(&s.unknownTools, "unknown-tools", "defer", "tools not in a loaded catalog: defer, refuse or allow")
	fs.StringVar(&s.argMode, "argument-validation", "enforce", "validate proposed_arguments against catalog input schemas: enforce, warn or off")
}

// loadSources checks the flags and loads the sources they name.
func loadSources(s *sourceFlags, log *zap.Logger) (*sources.Sources, error) {
	unknown, err := gate.ParseUnknownTools(s.unknownTools)
	if err != nil {
		return nil, usageError("%v", err)
	}
	args, err := catalog.ParseArgumentMode(s.argMode)
	if err != nil {
		return nil, usageError("--argument-validation: %v", err)
	}
	if s.pollInterval < 0 {
		return nil, usageError("--bundle-poll-interval must not be negative")
	}
	if u, err := url.Parse(s.gitBase); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, usageError("--bundle-git-base %q is not an http(s) URL", s.gitBase)
	}
	bundles := sources.Bundles{Git: &bundle.Git{Base: s.gitBase}, RequirePinned: s.pinned, PollInterval: s.pollInterval}
	return sources.Load(sources.Config{CatalogDirs: s.catalogDirs, PolicyDirs: s.policyDirs, UnknownTools: unknown, Arguments: args, Bundles: bundles}, log)
}
