package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver goose runs on
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/gatedhq/gated/migrations"
)

// Migrate applies the embedded migrations to the database: "up" applies all
// pending ones, "down" rolls back the latest, "status" lists them. It runs
// under a PostgreSQL session advisory lock so replicas starting together do
// not race; a replica that waits sees the work done and applies nothing.
// What happened is written to w, one line per migration. It opens a
// connection of its own: goose runs on database/sql, and gated migrate has
// no pool.
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
