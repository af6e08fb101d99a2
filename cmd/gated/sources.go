package main

import (
	"flag"

	"go.uber.org/zap"

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
}

func (s *sourceFlags) register(fs *flag.FlagSet) {
	fs.Var(&s.catalogDirs, "catalog", "catalog directory of ACTION.md, TOOL.md, ACTIONS.yaml, action.json files (repeatable)")
	fs.Var(&s.policyDirs, "policy", "policy directory of POLICY.md files and custom *.rego modules (repeatable)")
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
	return sources.Load(sources.Config{CatalogDirs: s.catalogDirs, PolicyDirs: s.policyDirs, UnknownTools: unknown, Arguments: args}, log)
}
