package main

import (
	"flag"
	"net/url"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/limit"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/sources"
)

// sourceFlags are the decision sources shared by serve and check.
type sourceFlags struct {
	catalogDirs  listFlag
	policyDirs   listFlag
	unknownTools string
	argMode      string
	bundles      bundleFlags
}

// bundleFlags configure how bundle manifests are composed.
type bundleFlags struct {
	gitBase      string
	maxBytes     int64
	pinned       bool
	pollInterval time.Duration
	publicKey    string
	signed       bool
}

func (b *bundleFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.gitBase, "bundle-git-base", bundle.DefaultGitBase, "URL that a bundle's github sources are fetched from, owner/name appended")
	fs.Int64Var(&b.maxBytes, "bundle-max-bytes", bundle.DefaultLimits.Bytes, "bytes a bundle's sources may hold together, and one github commit fetched")
	fs.BoolVar(&b.pinned, "require-pinned", false, "refuse bundle github sources whose ref is not a 40-hex commit SHA")
	fs.DurationVar(&b.pollInterval, "bundle-poll-interval", 0, "rebuild bundles this often, resolving their branches and tags again (0: only on SIGHUP and local edits)")
	fs.StringVar(&b.publicKey, "bundle-public-key", "", "PEM Ed25519 public key: load a bundle only when <manifest>.sig signs its revision with it")
	fs.BoolVar(&b.signed, "require-signed", false, "with --bundle-public-key, refuse --catalog and --policy directories: they carry no signature")
}

// config checks the flags.
func (b *bundleFlags) config() (sources.Bundles, error) {
	if b.pollInterval < 0 {
		return sources.Bundles{}, usageError("--bundle-poll-interval must not be negative")
	}
	if u, err := url.Parse(b.gitBase); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return sources.Bundles{}, usageError("--bundle-git-base %q is not an http(s) URL", b.gitBase)
	}
	if b.maxBytes <= 0 {
		return sources.Bundles{}, usageError("--bundle-max-bytes must be positive")
	}
	if b.signed && b.publicKey == "" {
		return sources.Bundles{}, usageError("--require-signed needs --bundle-public-key, the key bundles must be signed with")
	}
	limits := bundle.DefaultLimits
	limits.Bytes = b.maxBytes
	out := sources.Bundles{Git: &bundle.Git{Base: b.gitBase, MaxBytes: b.maxBytes}, Limits: limits, RequirePinned: b.pinned, PollInterval: b.pollInterval, RequireSigned: b.signed}
	if b.publicKey != "" {
		data, err := os.ReadFile(b.publicKey)
		if err != nil {
			return sources.Bundles{}, usageError("--bundle-public-key: %v", err)
		}
		if out.PublicKey, err = bundle.ParsePublicKey(data); err != nil {
			return sources.Bundles{}, usageError("--bundle-public-key %s: %v", b.publicKey, err)
		}
	}
	return out, nil
}

func (s *sourceFlags) register(fs *flag.FlagSet) {
	fs.Var(&s.catalogDirs, "catalog", "catalog directory of ACTION.md, TOOL.md, ACTIONS.yaml, action.json files (repeatable), or one AIP-26 bundle manifest (manifest.yaml, CODE.md)")
	fs.Var(&s.policyDirs, "policy", "policy directory of POLICY.md files and custom *.rego modules (repeatable), or one AIP-26 bundle manifest (manifest.yaml, CODE.md)")
	s.bundles.register(fs)
	fs.StringVar(&s.unknownTools, flagUnknownTools, "defer", "tools not in a loaded catalog: defer, refuse or allow")
	fs.StringVar(&s.argMode, flagArgumentValidation, "enforce", "validate proposed_arguments against catalog input schemas: enforce, warn or off")
}

// The flags of a decision that no revision covers: serve's choice, which
// replay takes as recorded unless told otherwise.
const (
	flagUnknownTools       = "unknown-tools"
	flagArgumentValidation = "argument-validation"
)

// choosesServeFlags reports whether --unknown-tools or
// --argument-validation was given on the command line (not by the
// environment, which is serve's as often as the operator's choice), so
// that a replay judges that choice: records decided with the same catalog
// and policy are decided again rather than kept (replay.Engine.Redecide).
func choosesServeFlags(fs *flag.FlagSet) bool {
	chosen := false
	fs.Visit(func(f *flag.Flag) { chosen = chosen || f.Name == flagUnknownTools || f.Name == flagArgumentValidation })
	return chosen
}

// loadSources checks the flags and loads the sources they name. POLICY.md
// limits are counted in limits, or in this process when it is nil; opts
// adjust the policy's loads.
func loadSources(s *sourceFlags, log *zap.Logger, limits limit.Backend, opts ...policy.Option) (*sources.Sources, error) {
	unknown, err := gate.ParseUnknownTools(s.unknownTools)
	if err != nil {
		return nil, usageError("%v", err)
	}
	args, err := catalog.ParseArgumentMode(s.argMode)
	if err != nil {
		return nil, usageError("--argument-validation: %v", err)
	}
	bundles, err := s.bundles.config()
	if err != nil {
		return nil, err
	}
	return sources.Load(sources.Config{CatalogDirs: s.catalogDirs, PolicyDirs: s.policyDirs, UnknownTools: unknown, Arguments: args, Bundles: bundles, Limits: limits, Policy: opts}, log)
}
