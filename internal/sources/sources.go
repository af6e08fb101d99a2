// Package sources loads the decision sources — the catalog and the policy —
// and keeps them current: file watches, SIGHUP reloads, the policy rebuilt
// when the catalog changes, metrics and logs for every reload.
package sources

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/limit"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/reload"
)

// Config names the sources to load.
type Config struct {
	// CatalogDirs and PolicyDirs are directories, or one AIP-26 bundle
	// manifest (bundle.IsManifest) each.
	CatalogDirs  []string
	PolicyDirs   []string
	UnknownTools gate.UnknownTools
	Arguments    catalog.ArgumentMode
	Bundles      Bundles
	// Limits is where POLICY.md limits are counted; nil means in this
	// process only.
	Limits limit.Backend
	// Policy adjusts every load of the policy (`gated policy test
	// --coverage` traces the custom rules with it).
	Policy []policy.Option
}

// Bundles configure sources composed from a bundle manifest.
type Bundles struct {
	Git           *bundle.Git
	Limits        bundle.Limits // bundle.DefaultLimits when zero
	RequirePinned bool
	PublicKey     ed25519.PublicKey // when set, only bundles it signed load
	// RequireSigned refuses directories besides: they carry no signature,
	// so with a PublicKey they would load unchecked (and only be warned of).
	RequireSigned bool
	// PollInterval, when positive, rebuilds every bundle this often, so
	// that branches and tags are resolved again without a SIGHUP.
	PollInterval time.Duration
}

// Sources are the loaded decision sources and what keeps them current.
type Sources struct {
	// Opts join the engine to the sources.
	Opts         []gate.Option
	unknownTools gate.UnknownTools
	catalog      *reload.Reloader[catalog.Catalog] // nil without --catalog
	policy       *reload.Reloader[policy.Set]      // nil without --policy
	metrics      *metrics.Metrics
	// polled are the reloaders of bundles, rebuilt every pollInterval.
	polled       []func()
	pollInterval time.Duration
}

// Load loads every configured source once; an invalid one is an error
// listing all its problems. log may be nil (one-shot commands).
func Load(cfg Config, log *zap.Logger) (*Sources, error) {
	out := &Sources{pollInterval: cfg.Bundles.PollInterval}
	if len(cfg.CatalogDirs) > 0 {
		dirs := cfg.CatalogDirs
		build, watch, isBundle, err := composed(cfg.Bundles, "--catalog", dirs, catalog.Load, (*catalog.Catalog).SetOrigin)
		if err != nil {
			return nil, err
		}
		warnUnsigned(log, cfg.Bundles, "--catalog", dirs, isBundle)
		out.catalog, err = reload.New(reload.Config[catalog.Catalog]{
			Build:        build,
			Dirs:         watch,
			OnResult:     out.reloaded(log, "catalog"),
			OnWatchError: watchError(log, "catalog"),
		})
		if err != nil {
			return nil, fmt.Errorf("the catalog in %s cannot be loaded: %w", strings.Join(dirs, ", "), err)
		}
		if isBundle {
			out.polled = append(out.polled, out.catalog.Trigger)
		}
		out.unknownTools = cfg.UnknownTools
		out.Opts = append(out.Opts, gate.WithCatalog(out.catalog.Current, cfg.UnknownTools, cfg.Arguments))
	}
	if len(cfg.PolicyDirs) > 0 {
		dirs := cfg.PolicyDirs
		// Grants name actions by registry ref too, resolved through the
		// catalog current at build time; a catalog reload rebuilds the policy.
		load := func(dirs []string) (*policy.Set, error) { return policy.Load(dirs, out.resolver(), cfg.Policy...) }
		build, watch, isBundle, err := composed(cfg.Bundles, "--policy", dirs, load, (*policy.Set).SetOrigin)
		if err != nil {
			return nil, err
		}
		warnUnsigned(log, cfg.Bundles, "--policy", dirs, isBundle)
		out.policy, err = reload.New(reload.Config[policy.Set]{
			Build:        build,
			Dirs:         watch,
			OnResult:     out.reloaded(log, "policy"),
			OnWatchError: watchError(log, "policy"),
		})
		if err != nil {
			return nil, fmt.Errorf("the policy in %s cannot be loaded: %w", strings.Join(dirs, ", "), err)
		}
		if isBundle {
			out.polled = append(out.polled, out.policy.Trigger)
		}
		out.logPolicyWarnings(log)
		out.Opts = append(out.Opts, gate.WithPolicy(out.policy.Current, policyLimiter(cfg.Limits)))
	}
	return out, nil
}

// ArgumentsOpts are Opts with arguments validated in mode instead: replay
// judges a call whose argument values it cannot see without validating
// them (the options after the catalog's stay as they are).
func (s *Sources) ArgumentsOpts(mode catalog.ArgumentMode) []gate.Option {
	opts := slices.Clone(s.Opts)
	if s.catalog != nil { // Load puts the catalog's option first
		opts[0] = gate.WithCatalog(s.catalog.Current, s.unknownTools, mode)
	}
	return opts
}

// composed returns how to build a source from dirs, and what to watch:
// the loader over the directories themselves, or, when the one value is a
// bundle manifest, the loader over the bundle it composes, watching the
// manifest's workspace for local edits.
func composed[T any](b Bundles, flag string, dirs []string, load func([]string) (*T, error), setOrigin func(*T, *bundle.Origin)) (build func() (*T, error), watch []string, isBundle bool, err error) {
	manifests := 0
	for _, d := range dirs {
		if isManifest(d) {
			manifests++
		}
	}
	if manifests == 0 {
		if b.RequireSigned {
			return nil, nil, false, fmt.Errorf("%s %s: --require-signed loads only bundle manifests signed with gated bundle sign, and a directory carries no signature",
				flag, strings.Join(dirs, ", "))
		}
		return func() (*T, error) { return load(dirs) }, dirs, false, nil
	}
	if len(dirs) != 1 {
		return nil, nil, false, fmt.Errorf("%s %s: a bundle manifest must be the only %s value", flag, strings.Join(dirs, ", "), flag)
	}
	manifest := dirs[0]
	opts := bundle.Options{Limits: b.Limits, Git: b.Git, RequirePinned: b.RequirePinned, PublicKey: b.PublicKey}
	build = func() (*T, error) {
		bun, err := bundle.Compose(manifest, opts)
		if err != nil {
			return nil, fmt.Errorf("the bundle %s cannot be composed: %w", manifest, err)
		}
		v, err := bundle.Materialise(bun, func(dir string) (*T, error) { return load([]string{dir}) })
		if err != nil {
			return nil, fmt.Errorf("the bundle %s (revision %s) does not load: %w", manifest, bun.Revision, err)
		}
		setOrigin(v, bun.Origin(manifest))
		return v, nil
	}
	return build, []string{filepath.Dir(manifest)}, true, nil
}

// warnUnsigned says that directories load without a signature although
// the operator gave a key to check bundles with: the key protects
// nothing there, which the operator may not expect.
func warnUnsigned(log *zap.Logger, b Bundles, flag string, dirs []string, isBundle bool) {
	if log == nil || isBundle || b.PublicKey == nil {
		return
	}
	log.Warn(flag+" names directories, which carry no signature: they load unchecked although --bundle-public-key is set (--require-signed refuses them)",
		zap.Strings("dirs", dirs))
}

// isManifest reports whether a --catalog or --policy value names a bundle
// manifest rather than a directory or a single policy file.
func isManifest(p string) bool {
	if !bundle.IsManifest(p) {
		return false
	}
	fi, err := os.Stat(p)
	return err != nil || !fi.IsDir() // a missing manifest is reported by Compose
}

// policyLimiter counts POLICY.md limits in backend, or in this process.
func policyLimiter(backend limit.Backend) *policy.Limiter {
	if backend == nil {
		return policy.NewLimiter()
	}
	return policy.LimiterOn(backend)
}

// LoadCatalog loads a catalog once from dirs, or from the bundle the one
// manifest among them composes: what the lint commands check.
func LoadCatalog(dirs []string, b Bundles) (*catalog.Catalog, error) {
	build, _, _, err := composed(b, "--catalog", dirs, catalog.Load, (*catalog.Catalog).SetOrigin)
	if err != nil {
		return nil, err
	}
	return build()
}

// LoadPolicy loads a policy once from dirs, or from the bundle the one
// manifest among them composes, resolving registry refs with res.
func LoadPolicy(dirs []string, b Bundles, res policy.Resolver) (*policy.Set, error) {
	load := func(dirs []string) (*policy.Set, error) { return policy.Load(dirs, res) }
	build, _, _, err := composed(b, "--policy", dirs, load, (*policy.Set).SetOrigin)
	if err != nil {
		return nil, err
	}
	return build()
}

// Current is the catalog and the policy in use, each nil when not
// configured.
func (s *Sources) Current() (*catalog.Catalog, *policy.Set) {
	var cat *catalog.Catalog
	var set *policy.Set
	if s.catalog != nil {
		cat = s.catalog.Current()
	}
	if s.policy != nil {
		set = s.policy.Current()
	}
	return cat, set
}

// resolver resolves registry refs in grants through the current catalog.
func (s *Sources) resolver() policy.Resolver {
	if s.catalog == nil {
		return nil
	}
	return s.catalog.Current()
}

// Watch keeps every source current until ctx ends.
func (s *Sources) Watch(ctx context.Context, log *zap.Logger) {
	if len(s.polled) > 0 && s.pollInterval > 0 {
		go s.poll(ctx)
	}
	if s.catalog != nil {
		go func() {
			if err := s.catalog.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("catalog watcher stopped; the catalog will no longer reload", zap.Error(err))
			}
		}()
	}
	if s.policy != nil {
		go func() {
			if err := s.policy.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("policy watcher stopped; the policy will no longer reload", zap.Error(err))
			}
		}()
	}
}

// poll rebuilds the bundles every pollInterval, so that their branches and
// tags are resolved again.
func (s *Sources) poll(ctx context.Context) {
	t := time.NewTicker(s.pollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, trigger := range s.polled {
				trigger()
			}
		}
	}
}

// ReloadAll asks every source to rebuild (SIGHUP).
func (s *Sources) ReloadAll() {
	if s.catalog != nil {
		s.catalog.Trigger()
	}
	if s.policy != nil {
		s.policy.Trigger()
	}
}

// CatalogDocument is GET /v1/catalog, or nil without a catalog.
func (s *Sources) CatalogDocument() func() any {
	if s.catalog == nil {
		return nil
	}
	return func() any { return s.CatalogSummary()() }
}

// PolicyDocument is GET /v1/policy, or nil without a policy.
func (s *Sources) PolicyDocument() func() any {
	if s.policy == nil {
		return nil
	}
	return func() any { return s.PolicySummary()() }
}

// CatalogSummary returns the current catalog's document, as GET
// /v1/catalog and the console show it, or nil without a catalog.
func (s *Sources) CatalogSummary() func() catalog.Document {
	if s.catalog == nil {
		return nil
	}
	return func() catalog.Document {
		at, err := s.catalog.LastError()
		return s.catalog.Current().Document(err, at)
	}
}

// PolicySummary returns the current policy's summary, as GET /v1/policy
// and the console show it, or nil without a policy.
func (s *Sources) PolicySummary() func() policy.Summary {
	if s.policy == nil {
		return nil
	}
	return func() policy.Summary {
		at, err := s.policy.LastError()
		return s.policy.Current().Summary(err, at)
	}
}

// Observe starts counting reloads and publishing revisions on m.
func (s *Sources) Observe(m *metrics.Metrics) {
	s.metrics = m
	s.publishRevisions()
}

func (s *Sources) publishRevisions() {
	if s.metrics == nil {
		return
	}
	s.metrics.SetRevisions(s.Revisions())
}

// Revisions names the current catalog and policy revisions ("" for a
// source not configured).
func (s *Sources) Revisions() (catalog, policy string) {
	if s.catalog != nil {
		catalog = s.catalog.Current().Revision()
	}
	if s.policy != nil {
		policy = s.policy.Current().Revision()
	}
	return catalog, policy
}

// watchError logs a failure of the file watcher itself; the reloader
// rebuilds after one, so nothing is missed for long.
func watchError(log *zap.Logger, what string) func(error) {
	return func(err error) {
		if log != nil {
			log.Warn(what+" watcher error; rebuilding", zap.Error(err))
		}
	}
}

// reloaded logs and counts each rebuild of what.
func (s *Sources) reloaded(log *zap.Logger, what string) func(error) {
	return func(err error) {
		if what == "catalog" && err == nil && s.policy != nil {
			s.policy.Trigger() // re-resolve grants against the new catalog
		}
		if s.metrics != nil {
			switch what {
			case "catalog":
				s.metrics.CatalogReload(err == nil)
			case "policy":
				s.metrics.PolicyReload(err == nil)
			}
			s.publishRevisions()
		}
		if log == nil {
			return
		}
		if err != nil {
			log.Error(what+" reload failed; keeping the last good "+what, zap.Error(err))
			return
		}
		log.Info(what + " reloaded")
		if what == "policy" {
			s.logPolicyWarnings(log)
		}
	}
}

// logPolicyWarnings logs what gated policy lint would warn about in the
// current policy (an unknown condition kind, a default of allow, …), and
// which evaluator decides its grants.
func (s *Sources) logPolicyWarnings(log *zap.Logger) {
	if log == nil {
		return
	}
	p := s.policy.Current()
	for _, w := range p.Warnings() {
		log.Warn("policy warning", zap.String("problem", w.String()))
	}
	name, why := p.Evaluator()
	log.Info("policy evaluator", zap.String("evaluator", name), zap.String("why", why), zap.String("revision", p.Revision()))
}
