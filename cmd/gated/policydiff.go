package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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
	"github.com/gatedhq/gated/internal/replay"
	"github.com/gatedhq/gated/internal/sources"
)

const policyDiffUsage = `usage: gated policy diff [flags] OLD NEW

OLD and NEW are each
  PATH       a policy directory or bundle manifest on disk
  REV:PATH   the policy directory or manifest PATH (from the repository's root) as git
             revision REV holds it (origin/main:policy, HEAD~1:policy, v1.2:policy)
  REV        the same, with PATH given once by --policy
--catalog is read from the same place as each side (on disk, or at REV); without it,
the catalog the side's *_test.yaml files name. Exit 0: nothing widens; 3: something
widens (unless --allow-widening); 1: failure; 2: usage.`

// policyDiffFlags are the flags of gated policy diff besides the sources.
type policyDiffFlags struct {
	repo          string
	format        string
	allowWidening bool
	replay        replayFlags
}

// replayFlags select the recorded traffic --replay decides again, as
// gated replay's flags do.
type replayFlags struct {
	on          bool
	databaseURL string
	auditFile   string
	since       string
	until       string
	identity    string
}

func (r *replayFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&r.on, "replay", false, "also decide recorded decisions (the audit store) again under NEW, as gated replay does")
	fs.StringVar(&r.databaseURL, "database-url", "", "with --replay: PostgreSQL URL of the audit store to replay")
	fs.StringVar(&r.auditFile, "audit-file", "", "with --replay: JSON-lines audit file to replay (instead of --database-url)")
	fs.StringVar(&r.since, "since", "", "with --replay: replay decisions from this time on: RFC 3339, or a duration before now (24h)")
	fs.StringVar(&r.until, "until", "", "with --replay: replay decisions before this time: RFC 3339, or a duration before now (default now)")
	fs.StringVar(&r.identity, "seal-identity", "", "with --replay: age identity file opening the records --audit-seal-to sealed, so replay sees their arguments")
}

// window checks the flags and returns the window to replay: --since is
// required, --until is now when not given.
func (r *replayFlags) window(now time.Time) (w replay.Window, err error) {
	if !r.on {
		if r.databaseURL != "" || r.auditFile != "" || r.since != "" || r.until != "" || r.identity != "" {
			return w, usageError("--database-url, --audit-file, --since, --until and --seal-identity are for --replay: give --replay")
		}
		return w, nil
	}
	if (r.databaseURL == "") == (r.auditFile == "") {
		return w, usageError("--replay needs one of --database-url and --audit-file")
	}
	if r.since == "" {
		return w, usageError("--replay needs --since: the window of decisions to replay")
	}
	return replayWindow(r.since, r.until, now)
}

// engine joins a gate to one side's catalog and policy, with the argument
// validation and the rate-limit counts given.
type engine func(args catalog.ArgumentMode, limits *policy.Limiter) []gate.Option

// replayDiff is gated replay over the flags' window and source, deciding
// with the new side's catalog and policy: its counts, and its sections of
// the report.
func replayDiff(ctx context.Context, rf replayFlags, w replay.Window, newSide engine, args catalog.ArgumentMode) (*policydiff.Replay, error) {
	u, err := unsealer(rf.identity)
	if err != nil {
		return nil, err
	}
	source, closeSource, err := replaySource(ctx, rf.databaseURL, rf.auditFile)
	if err != nil {
		return nil, err
	}
	defer closeSource()
	// Replay counts no calls (replay.Unlimited), so one limiter serves both.
	limits := policy.LimiterOn(replay.Unlimited)
	eng := replay.Engine{Options: newSide(args, limits), Blind: newSide(catalog.ArgumentsOff, limits), Unsealer: u}
	rep, err := replay.Run(ctx, source, eng, w)
	if err != nil {
		return nil, fmt.Errorf("--replay: %w", err)
	}
	var md, text, doc bytes.Buffer
	for _, write := range []error{rep.WriteMarkdown(&md), rep.WriteText(&text), rep.WriteJSON(&doc)} {
		if write != nil {
			return nil, write
		}
	}
	return &policydiff.Replay{Decisions: rep.Replayed, Changed: rep.Changed, Widened: rep.Widened,
		Markdown: md.String(), Text: text.String(), JSON: json.RawMessage(doc.Bytes())}, nil
}

// runPolicyDiff is `gated policy diff OLD NEW`.
func runPolicyDiff(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("policy diff", stderr)
	var sf sourceFlags
	sf.register(fs)
	var df policyDiffFlags
	fs.StringVar(&df.repo, "repo", ".", "the git repository REV sides are read from (any folder in it)")
	fs.StringVar(&df.format, "format", "text", "text, markdown (a pull-request comment) or json")
	fs.BoolVar(&df.allowWidening, "allow-widening", false, "exit 0 even when something widens")
	df.replay.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), policyDiffUsage+"\n\nflags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	sides := fs.Args()
	if len(sides) != 2 {
		return usageError("%s", policyDiffUsage)
	}
	if len(sf.policyDirs) > 1 {
		return usageError("--policy names the one policy path a bare REV side reads")
	}
	render, ok := map[string]func(policydiff.Report, io.Writer) error{
		"text": policydiff.Report.Text, "markdown": policydiff.Report.Markdown, "json": policydiff.Report.JSON,
	}[df.format]
	if !ok {
		return usageError("--format %q: want text, markdown or json", df.format)
	}
	window, err := df.replay.window(time.Now())
	if err != nil {
		return err
	}
	unknown, err := gate.ParseUnknownTools(sf.unknownTools)
	if err != nil {
		return usageError("%v", err)
	}
	argMode, err := catalog.ParseArgumentMode(sf.argMode)
	if err != nil {
		return usageError("--argument-validation: %v", err)
	}
	bundles, err := sf.bundles.config()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "gated-policy-diff-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var loaded [2]policydiff.Side
	var engines [2]engine
	for i, spec := range sides {
		place, err := locate(spec, &sf, df.repo, filepath.Join(tmp, fmt.Sprint(i)), bundles.Limits)
		if err != nil {
			return err
		}
		if loaded[i], engines[i], err = place.load(ctx, bundles, unknown, argMode); err != nil {
			return err
		}
	}
	report := policydiff.Compare(loaded[0], loaded[1])
	if df.replay.on {
		if report.Replay, err = replayDiff(ctx, df.replay, window, engines[1], argMode); err != nil {
			return err
		}
	}
	if err := render(report, stdout); err != nil {
		return err
	}
	if report.Widens() && !df.allowWidening {
		return exitError{code: exitBlocked}
	}
	return nil
}

// place is where one side's sources are on disk.
type place struct {
	label    string
	policy   []string // a directory or one manifest
	catalogs []string
	cases    string // where its *_test.yaml files are
}

// locate finds a side on disk, writing it below dir when it names a git
// revision.
func locate(spec string, sf *sourceFlags, repo, dir string, limits bundle.Limits) (place, error) {
	if _, err := os.Stat(spec); err == nil {
		p := place{label: spec, policy: []string{spec}, catalogs: sf.catalogDirs, cases: casesDir(spec)}
		if len(p.catalogs) == 0 {
			named, err := cases.Catalogs([]string{p.cases})
			if err != nil && !errors.Is(err, cases.ErrNoTestFiles) {
				return place{}, err
			}
			p.catalogs = named
		}
		return p, nil
	}
	rev, path, hasPath := strings.Cut(spec, ":")
	if !hasPath {
		if len(sf.policyDirs) == 0 {
			return place{}, usageError("%s is not a file or folder here; as a git revision it needs its policy's path: REV:PATH, or --policy PATH", spec)
		}
		path = sf.policyDirs[0]
	}
	r, err := bundle.OpenGitRevision(repo, rev, limits)
	if err != nil {
		return place{}, err
	}
	write := func(p string) (string, error) {
		tree := p
		if bundle.IsManifest(p) {
			tree = casesDir(p) // a manifest's local sources are in its folder
		}
		if err := r.WriteTo(dir, tree); err != nil {
			return "", err
		}
		return filepath.Join(dir, filepath.FromSlash(p)), nil
	}
	p := place{label: fmt.Sprintf("%s:%s (%s)", rev, path, r.Commit[:12])}
	local, err := write(path)
	if errors.Is(err, bundle.ErrNotInRevision) {
		// A policy the revision does not have (yet): gated without one,
		// which enforces no grants.
		local, err = filepath.Join(dir, "no-policy"), os.MkdirAll(filepath.Join(dir, "no-policy"), 0o700)
		p.label = fmt.Sprintf("%s:%s (%s: no policy there)", rev, path, r.Commit[:12])
	}
	if err != nil {
		return place{}, err
	}
	p.policy, p.cases = []string{local}, casesDir(local)
	for _, c := range sf.catalogDirs {
		local, err := write(c)
		if errors.Is(err, bundle.ErrNotInRevision) {
			continue // as gated without this --catalog
		}
		if err != nil {
			return place{}, fmt.Errorf("--catalog: %w", err)
		}
		p.catalogs = append(p.catalogs, local)
	}
	if len(sf.catalogDirs) == 0 {
		named, err := cases.Catalogs([]string{p.cases})
		if err != nil && !errors.Is(err, cases.ErrNoTestFiles) {
			return place{}, err
		}
		for _, c := range named {
			rel, err := filepath.Rel(dir, c)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return place{}, fmt.Errorf("the test files of %s name the catalog %s, which is outside the repository", spec, c)
			}
			local, err := write(filepath.ToSlash(rel))
			if err != nil {
				return place{}, fmt.Errorf("the catalog the test files of %s name: %w", spec, err)
			}
			p.catalogs = append(p.catalogs, local)
		}
	}
	return p, nil
}

// casesDir is where a policy's test files are: the directory itself, or a
// manifest's folder.
func casesDir(p string) string {
	if bundle.IsManifest(p) {
		return filepath.Dir(p)
	}
	return p
}

// load loads a side's catalog, policy and test cases, and the gate that
// decides them; join joins another gate to the side's catalog and policy.
func (p place) load(ctx context.Context, bundles sources.Bundles, unknown gate.UnknownTools, args catalog.ArgumentMode) (s policydiff.Side, join engine, err error) {
	s = policydiff.Side{Label: p.label}
	var cat *catalog.Catalog
	var res policy.Resolver
	if len(p.catalogs) > 0 {
		if cat, err = sources.LoadCatalog(p.catalogs, bundles); err != nil {
			return s, nil, fmt.Errorf("%s: the catalog: %w", p.label, err)
		}
		s.Catalog, res = cat, cat
	}
	pol, err := sources.LoadPolicy(p.policy, bundles, res)
	if err != nil {
		return s, nil, fmt.Errorf("%s: the policy: %w", p.label, err)
	}
	s.Policy = pol
	if s.Cases, err = cases.Read([]string{p.cases}); err != nil {
		return s, nil, fmt.Errorf("%s: %w", p.label, err)
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
