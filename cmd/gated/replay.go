package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/postgres"
	"github.com/gatedhq/gated/internal/catalog"
	pgdb "github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/replay"
)

// runReplay decides recorded decisions again with the catalog and policy
// given, reports what changed, and exits exitBlocked when one widened.
func runReplay(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("replay", stderr)
	var sf sourceFlags
	sf.register(fs)
	dbURL := fs.String("database-url", "", "PostgreSQL URL of the audit store to replay")
	auditFile := fs.String("audit-file", "", "JSON-lines audit file to replay (instead of --database-url)")
	since := fs.String("since", "", "replay decisions from this time on: RFC 3339, or a duration before now (24h)")
	until := fs.String("until", "", "replay decisions before this time: RFC 3339, or a duration before now (default now)")
	format := fs.String("format", "text", "report format: text, json or markdown")
	identity := fs.String("seal-identity", "", "age identity file opening the records --audit-seal-to sealed, so replay sees their arguments")
	allowWidening := fs.Bool("allow-widening", false, "exit 0 even when a decision widens")
	allowUnseen := fs.Bool("allow-unseen-widening", false, "exit 0 when every widening rests on something replay could not see")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gated replay --database-url URL | --audit-file FILE --since T [--until T] --catalog DIR --policy DIR [flags]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("replay takes no arguments, only flags")
	}
	f, err := replay.ParseFormat(*format)
	if err != nil {
		return usageError("--format: %v", err)
	}
	if *since == "" {
		return usageError("--since is required: the window of decisions to replay")
	}
	w, err := replayWindow(*since, *until, time.Now())
	if err != nil {
		return err
	}
	eng := replay.Engine{}
	if eng.Unsealer, err = unsealer(*identity); err != nil {
		return err
	}
	src, err := loadSources(&sf, nil, replay.Unlimited)
	if err != nil {
		return err
	}
	eng.Options, eng.Blind = src.Opts, src.ArgumentsOpts(catalog.ArgumentsOff)
	eng.Redecide = choosesServeFlags(fs)
	source, closeSource, err := replaySource(ctx, *dbURL, *auditFile)
	if err != nil {
		return err
	}
	defer closeSource()
	rep, err := replay.Run(ctx, source, eng, w)
	if err != nil {
		return err
	}
	if err := rep.Render(stdout, f); err != nil {
		return err
	}
	if *allowWidening {
		return nil
	}
	if err := rep.Gate(*allowUnseen); err != nil {
		return exitError{code: exitBlocked, msg: err.Error()}
	}
	return nil
}

// unsealer reads the --seal-identity file; nil without one.
func unsealer(identity string) (*audit.Unsealer, error) {
	if identity == "" {
		return nil, nil
	}
	b, err := os.ReadFile(identity)
	if err != nil {
		return nil, usageError("--seal-identity: %v", err)
	}
	u, err := audit.ParseUnsealer(string(b))
	if err != nil {
		return nil, usageError("--seal-identity %s: %v", identity, err)
	}
	return u, nil
}

// replaySource is the audit store to replay: the database at dbURL, or
// the file auditFile (exactly one of them); closeSource releases it.
func replaySource(ctx context.Context, dbURL, auditFile string) (_ replay.Source, closeSource func(), _ error) {
	switch {
	case (dbURL == "") == (auditFile == ""):
		return nil, nil, usageError("give one of --database-url and --audit-file: the decisions to replay")
	case auditFile != "":
		return replay.File(auditFile), func() {}, nil
	}
	db, err := pgdb.Open(ctx, dbURL)
	if err != nil {
		return nil, nil, err
	}
	return replay.Store(postgres.NewStore(db)), db.Close, nil
}

// replayWindow is the window of decisions from --since to --until (now when
// empty), as gated replay and gated policy diff --replay read them.
func replayWindow(since, until string, now time.Time) (w replay.Window, err error) {
	if w.Since, err = parseWhen(since, now); err != nil {
		return w, usageError("--since: %v", err)
	}
	w.Until = now
	if until != "" {
		if w.Until, err = parseWhen(until, now); err != nil {
			return w, usageError("--until: %v", err)
		}
	}
	if !w.Until.After(w.Since) {
		return w, usageError("--until %s is not after --since %s", w.Until.Format(time.RFC3339), w.Since.Format(time.RFC3339))
	}
	return w, nil
}

// parseWhen reads an RFC 3339 time, or a duration before now.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time nor a positive duration before now", s)
	}
	return now.Add(-d), nil
}
