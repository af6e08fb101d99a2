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
	"time"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/diffside"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/policydiff"
	"github.com/gatedhq/gated/internal/replay"
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

// replayDiff is gated replay over the flags' window and source, deciding
// with the new side's catalog and policy: its counts, and its sections of
// the report.
func replayDiff(ctx context.Context, rf replayFlags, w replay.Window, newSide diffside.Engine, args catalog.ArgumentMode, redecide bool) (*policydiff.Replay, error) {
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
	eng := replay.Engine{Options: newSide(args, limits), Blind: newSide(catalog.ArgumentsOff, limits), Unsealer: u, Redecide: redecide}
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
	var engines [2]diffside.Engine
	var policyPath string // what a bare REV side reads
	if len(sf.policyDirs) > 0 {
		policyPath = sf.policyDirs[0]
	}
	for i, spec := range sides {
		place, err := diffside.Locate(spec, sf.catalogDirs, policyPath, df.repo, filepath.Join(tmp, fmt.Sprint(i)), bundles.Limits)
		if errors.Is(err, diffside.ErrNoPath) {
			return usageError("%v", err)
		}
		if err != nil {
			return err
		}
		if loaded[i], engines[i], err = place.Load(ctx, bundles, unknown, argMode); err != nil {
			return err
		}
	}
	report := policydiff.Compare(loaded[0], loaded[1])
	if df.replay.on {
		if report.Replay, err = replayDiff(ctx, df.replay, window, engines[1], argMode, choosesServeFlags(fs)); err != nil {
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
