package postgres

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver goose runs on
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"go.uber.org/zap"

	"github.com/gatedhq/gated/migrations"
)

// Migrate applies the embedded migrations to the database: "up" applies all
// pending ones, "down" rolls back the latest, "status" lists them. It runs
// under a PostgreSQL session advisory lock so replicas starting together do
// not race; a replica that waits sees the work done and applies nothing.
// What happened is written to w, one line per migration.
func Migrate(ctx context.Context, databaseURL, direction string, w io.Writer) error {
	switch direction {
	case "up", "down", "status":
	default:
		return fmt.Errorf("migrate: unknown direction %q (want up, down or status)", direction)
	}
	db, err := sql.Open("pgx", databaseURL)
	if err != nil {
		return fmt.Errorf("migrate: open database: %w", err)
	}
	defer db.Close()
	// Goose would report an unreachable database as "failed to
	// initialize"; say what is wrong in words an operator acts on.
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("the audit database cannot be reached: %w", err)
	}
	// Probe every second for up to five minutes: the default five-second
	// probe would stall the replicas that lose the race for no reason.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
	if err != nil {
		return fmt.Errorf("migrate: advisory locker: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	switch direction {
	case "up":
		res, err := p.Up(ctx)
		for _, r := range res {
			fmt.Fprintf(w, "up %s (%s)\n", r.Source.Path, r.Duration)
		}
		if err != nil {
			return fmt.Errorf("migrate up: %w", err)
		}
		if len(res) == 0 {
			fmt.Fprintln(w, "up: nothing to apply")
		}
	case "down":
		r, err := p.Down(ctx)
		if errors.Is(err, goose.ErrNoNextVersion) {
			fmt.Fprintln(w, "down: nothing to roll back")
			return nil
		}
		if err != nil {
			return fmt.Errorf("migrate down: %w", err)
		}
		fmt.Fprintf(w, "down %s (%s)\n", r.Source.Path, r.Duration)
	case "status":
		st, err := p.Status(ctx)
		if err != nil {
			return fmt.Errorf("migrate status: %w", err)
		}
		for _, s := range st {
			applied := "pending"
			if s.State == goose.StateApplied {
				applied = "applied " + s.AppliedAt.UTC().Format("2006-01-02T15:04:05Z")
			}
			fmt.Fprintf(w, "%d %s %s\n", s.Source.Version, s.Source.Path, applied)
		}
	}
	return nil
}

// Migrate applies the pending migrations when the sink was opened with
// Config.Migrate, and does nothing otherwise. The Recorder calls it before
// anything else, retrying in the background while it fails.
func (s *Sink) Migrate(ctx context.Context) error {
	if !s.migrate {
		return nil
	}
	return Migrate(ctx, s.url, "up", logLines{s.log})
}

// logLines writes what Migrate reports as log lines, so a migration run in
// the background does not interleave raw text with the JSON logs.
type logLines struct{ log *zap.Logger }

func (w logLines) Write(p []byte) (int, error) {
	for line := range bytes.Lines(p) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			w.log.Info("audit migration", zap.ByteString("step", line))
		}
	}
	return len(p), nil
}
