// Package diffside finds and loads one side of `gated policy diff`: a
// policy directory or bundle manifest on disk, or one as a git revision
// holds it, with the catalogs it is judged with and its test cases.
package diffside

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/policy/cases"
	"github.com/gatedhq/gated/internal/policydiff"
	"github.com/gatedhq/gated/internal/sources"
)

// ErrNoPath is a side that is neither a path here nor a REV:PATH, given
// without a policy path for its revision: the caller's usage error.
var ErrNoPath = errors.New("not a file or folder here; as a git revision it needs its policy's path: REV:PATH, or --policy PATH")

// Place is where one side's sources are on disk.
type Place struct {
	Label    string
	Policy   []string // a directory or one manifest
	Catalogs []string
	Cases    string // where its *_test.yaml files are
}

// Locate finds side spec: a path on disk, judged with catalogDirs (or the
// catalogs its test files name); or REV:PATH (REV alone with policyPath)
// in the git repository at repo, written below dir with the catalogs as
// that revision holds them.
func Locate(spec string, catalogDirs []string, policyPath, repo, dir string, limits bundle.Limits) (Place, error) {
	if _, err := os.Stat(spec); err == nil {
		p := Place{Label: spec, Policy: []string{spec}, Catalogs: catalogDirs, Cases: CasesDir(spec)}
		if len(p.Catalogs) == 0 {
			named, err := cases.CatalogsOnDisk([]string{p.Cases})
			if err != nil && !errors.Is(err, cases.ErrNoTestFiles) {
				return Place{}, err
			}
			p.Catalogs = named
		}
		return p, nil
	}
	rev, path, hasPath := strings.Cut(spec, ":")
	if !hasPath {
		if policyPath == "" {
			return Place{}, fmt.Errorf("%s is %w", spec, ErrNoPath)
		}
		path = policyPath
	}
	r, err := bundle.OpenGitRevision(repo, rev, limits)
	if err != nil {
		return Place{}, err
	}
	write := func(p string) (string, error) {
		tree := p
		if bundle.IsManifest(p) {
			tree = CasesDir(p) // a manifest's local sources are in its folder
		}
		if err := r.WriteTo(dir, tree); err != nil {
			return "", err
		}
		return filepath.Join(dir, filepath.FromSlash(p)), nil
	}
	p := Place{Label: fmt.Sprintf("%s:%s (%s)", rev, path, r.Commit[:12])}
	local, err := write(path)
	if errors.Is(err, bundle.ErrNotInRevision) {
		// A policy the revision does not have (yet): gated without one,
		// which enforces no grants.
		local, err = filepath.Join(dir, "no-policy"), os.MkdirAll(filepath.Join(dir, "no-policy"), 0o700)
		p.Label = fmt.Sprintf("%s:%s (%s: no policy there)", rev, path, r.Commit[:12])
	}
	if err != nil {
		return Place{}, err
	}
	p.Policy, p.Cases = []string{local}, CasesDir(local)
	for _, c := range catalogDirs {
		local, err := write(c)
		if errors.Is(err, bundle.ErrNotInRevision) {
			continue // as gated without this --catalog
		}
		if err != nil {
			return Place{}, fmt.Errorf("--catalog: %w", err)
		}
		p.Catalogs = append(p.Catalogs, local)
	}
	if len(catalogDirs) == 0 {
		named, err := cases.Catalogs([]string{p.Cases})
		if err != nil && !errors.Is(err, cases.ErrNoTestFiles) {
			return Place{}, err
		}
		for _, c := range named {
			rel, err := filepath.Rel(dir, c)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return Place{}, fmt.Errorf("the test files of %s name the catalog %s, which is outside the repository", spec, c)
			}
			local, err := write(filepath.ToSlash(rel))
			if err != nil {
				return Place{}, fmt.Errorf("the catalog the test files of %s name: %w", spec, err)
			}
			p.Catalogs = append(p.Catalogs, local)
		}
	}
	return p, nil
}

// CasesDir is where a policy's test files are: the directory itself, or a
// manifest's folder.
func CasesDir(p string) string {
	if bundle.IsManifest(p) {
		return filepath.Dir(p)
	}
	return p
}

// Engine joins a gate to one side's catalog and policy, with the argument
// validation and the rate-limit counts given.
type Engine func(args catalog.ArgumentMode, limits *policy.Limiter) []gate.Option

// Load loads the side's catalog, policy and test cases, and the gate that
// decides them; the Engine joins another gate to its catalog and policy.
func (p Place) Load(ctx context.Context, bundles sources.Bundles, unknown gate.UnknownTools, args catalog.ArgumentMode) (s policydiff.Side, join Engine, err error) {
	s = policydiff.Side{Label: p.Label}
	var cat *catalog.Catalog
	var res policy.Resolver
	if len(p.Catalogs) > 0 {
		if cat, err = sources.LoadCatalog(p.Catalogs, bundles); err != nil {
			return s, nil, fmt.Errorf("%s: the catalog: %w", p.Label, err)
		}
		s.Catalog, res = cat, cat
	}
	pol, err := sources.LoadPolicy(p.Policy, bundles, res)
	if err != nil {
		return s, nil, fmt.Errorf("%s: the policy: %w", p.Label, err)
	}
	s.Policy = pol
	if s.Cases, err = cases.Read([]string{p.Cases}); err != nil {
		return s, nil, fmt.Errorf("%s: %w", p.Label, err)
	}
	join = func(args catalog.ArgumentMode, limits *policy.Limiter) []gate.Option {
		opts := []gate.Option{gate.WithPolicy(func() *policy.Set { return pol }, limits)}
		if cat != nil {
			opts = append(opts, gate.WithCatalog(func() *catalog.Catalog { return cat }, unknown, args))
		}
		return opts
	}
	s.Decide = func(ev map[string]any, principals []string, now time.Time) (string, []string) {
		// An engine per case: rate limits count one case only.
		e := gate.New(append(join(args, policy.NewLimiter()), gate.WithClock(func() time.Time { return now }))...)
		d := e.Decide(ctx, gate.Request{Event: ev, Principals: principals})
		return d.Route.String(), d.HardBlockers
	}
	return s, join, nil
}
