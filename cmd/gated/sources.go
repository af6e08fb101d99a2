package main

import (
	"context"
	"flag"
	"fmt"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/reload"
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

// sources are the loaded decision sources and what keeps them current.
type sources struct {
	opts    []gate.Option
	catalog *reload.Reloader[catalog.Catalog] // nil without --catalog
	policy  *reload.Reloader[policy.Set]      // nil without --policy
	metrics *metrics.Metrics
}

// loadSources loads every configured source once; an invalid one is an
// error listing all its problems. log may be nil (check).
func loadSources(s *sourceFlags, log *zap.Logger) (*sources, error) {
	unknown, err := gate.ParseUnknownTools(s.unknownTools)
	if err != nil {
		return nil, usageError("%v", err)
	}
	args, err := catalog.ParseArgumentMode(s.argMode)
	if err != nil {
		return nil, usageError("--argument-validation: %v", err)
	}
	out := &sources{}
	if len(s.catalogDirs) > 0 {
		dirs := []string(s.catalogDirs)
		out.catalog, err = reload.New(reload.Config[catalog.Catalog]{
			Build:        func() (*catalog.Catalog, error) { return catalog.Load(dirs) },
			Dirs:         dirs,
			OnResult:     out.reloaded(log, "catalog"),
			OnWatchError: watchError(log, "catalog"),
		})
		if err != nil {
			return nil, fmt.Errorf("catalog: %w", err)
		}
		out.opts = append(out.opts, gate.WithCatalog(out.catalog.Current, unknown, args))
	}
	if len(s.policyDirs) > 0 {
		dirs := []string(s.policyDirs)
		out.policy, err = reload.New(reload.Config[policy.Set]{
			// Grants name actions by registry ref too, resolved through the
			// catalog current at build time; a catalog reload rebuilds the policy.
			Build:        func() (*policy.Set, error) { return policy.Load(dirs, out.resolver()) },
			Dirs:         dirs,
			OnResult:     out.reloaded(log, "policy"),
			OnWatchError: watchError(log, "policy"),
		})
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		out.logPolicyWarnings(log)
		out.opts = append(out.opts, gate.WithPolicy(out.policy.Current, policy.NewLimiter()))
	}
	return out, nil
}

// resolver resolves registry refs in grants through the current catalog.
func (s *sources) resolver() policy.Resolver {
	if s.catalog == nil {
		return nil
	}
	return s.catalog.Current()
}

// watch keeps every source current until ctx ends.
func (s *sources) watch(ctx context.Context, log *zap.Logger) {
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

// reloadAll asks every source to rebuild (SIGHUP).
func (s *sources) reloadAll() {
	if s.catalog != nil {
		s.catalog.Trigger()
	}
	if s.policy != nil {
		s.policy.Trigger()
	}
}

// catalogDocument is GET /v1/catalog, or nil without a catalog.
func (s *sources) catalogDocument() func() any {
	if s.catalog == nil {
		return nil
	}
	return func() any {
		at, err := s.catalog.LastError()
		return s.catalog.Current().Document(err, at)
	}
}

// policyDocument is GET /v1/policy, or nil without a policy.
func (s *sources) policyDocument() func() any {
	if s.policy == nil {
		return nil
	}
	return func() any {
		at, err := s.policy.LastError()
		return s.policy.Current().Summary(err, at)
	}
}

// observe starts counting reloads and publishing revisions on m.
func (s *sources) observe(m *metrics.Metrics) {
	s.metrics = m
	s.publishRevisions()
}

func (s *sources) publishRevisions() {
	if s.metrics == nil {
		return
	}
	var cat, pol string
	if s.catalog != nil {
		cat = s.catalog.Current().Revision()
	}
	if s.policy != nil {
		pol = s.policy.Current().Revision()
	}
	s.metrics.SetRevisions(cat, pol)
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
func (s *sources) reloaded(log *zap.Logger, what string) func(error) {
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
// current policy (an unknown condition kind, a default of allow, …).
func (s *sources) logPolicyWarnings(log *zap.Logger) {
	if log == nil {
		return
	}
	for _, w := range s.policy.Current().Warnings() {
		log.Warn("policy warning", zap.String("problem", w.String()))
	}
}
