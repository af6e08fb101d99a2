package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit"
)

// partitionLock serialises partition DDL between replicas (an arbitrary
// constant: "gated" in ASCII).
const partitionLock = 0x6761746564

func day(t time.Time) time.Time {
	return t.UTC().Truncate(24 * time.Hour)
}

func (s *Sink) ensureDays(ctx context.Context, recs []*audit.Record) error {
	s.mu.Lock()
	var missing []time.Time
	for _, r := range recs {
		d := day(r.DecidedAt)
		if !s.days[d] {
			s.days[d] = true // optimistic; undone below on failure
			missing = append(missing, d)
		}
	}
	s.mu.Unlock()
	for i, d := range missing {
		if err := s.ensurePartition(ctx, d); err != nil {
			s.mu.Lock()
			for _, m := range missing[i:] {
				delete(s.days, m)
			}
			s.mu.Unlock()
			return err
		}
	}
	return nil
}

func partitionName(d time.Time) string {
	return "audit_decisions_p" + d.Format("20060102")
}

// ensurePartition creates the partition of day d if it is missing.
func (s *Sink) ensurePartition(ctx context.Context, d time.Time) error {
	return createPartition(ctx, s.pool, d)
}

// EnsurePartition creates the partition that a record decided at t goes
// into, if it is missing: InsertRecords needs it, and a writer outside the
// Sink (an approval's consumption) may come before the Sink has made it.
func EnsurePartition(ctx context.Context, pool *pgxpool.Pool, t time.Time) error {
	return createPartition(ctx, pool, day(t))
}

// createPartition creates the partition of day d if it is missing. The
// advisory lock makes concurrent IF NOT EXISTS from replicas safe.
func createPartition(ctx context.Context, pool *pgxpool.Pool, d time.Time) error {
	ddl := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s PARTITION OF audit_decisions FOR VALUES FROM ('%s') TO ('%s')",
		pgx.Identifier{partitionName(d)}.Sanitize(), d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339))
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(partitionLock)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, ddl)
		return err
	})
	if err != nil {
		return fmt.Errorf("create audit partition %s: %w", partitionName(d), err)
	}
	return nil
}

// partitionsAhead is how many days beyond today get a partition in advance,
// so the writer rarely pays for DDL on the hot path.
const partitionsAhead = 3

// Maintain creates partitions from yesterday (clock skew near midnight) to
// partitionsAhead days ahead, so the writer rarely pays for DDL, and drops
// partitions wholly older than the retention, with their decisions'
// outcomes, signing where each chain now starts.
func (s *Sink) Maintain(ctx context.Context, now time.Time) error {
	today := day(now)
	for i := -1; i <= partitionsAhead; i++ {
		if err := s.ensurePartition(ctx, today.AddDate(0, 0, i)); err != nil {
			return err
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'audit_decisions'::regclass`)
	if err != nil {
		return fmt.Errorf("list audit partitions: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list audit partitions: %w", err)
	}
	cutoff := now.Add(-s.retention)
	for _, n := range names {
		d, err := time.Parse("20060102", strings.TrimPrefix(n, "audit_decisions_p"))
		if err != nil {
			continue // not one of ours (an operator's own partition): leave it alone
		}
		if d.AddDate(0, 0, 1).After(cutoff) {
			continue
		}
		if err := s.purge(ctx, n, d.AddDate(0, 0, 1), day(cutoff)); err != nil {
			return fmt.Errorf("drop audit partition %s: %w", n, err)
		}
		s.mu.Lock()
		delete(s.days, d)
		s.mu.Unlock()
		s.log.Info("audit partition dropped by retention", zap.String("partition", n))
	}
	// Outcomes go with their decisions. A partition is dropped once its
	// whole day is before the cutoff, so the dropped ones held exactly the
	// decisions made before the cutoff's day.
	if _, err := s.pool.Exec(ctx, "DELETE FROM decision_outcomes WHERE decided_at < $1", day(cutoff)); err != nil {
		return fmt.Errorf("delete outcomes past retention: %w", err)
	}
	if _, err := s.pool.Exec(ctx, "DELETE FROM audit_candidate_decisions WHERE decided_at < $1", day(cutoff)); err != nil {
		return fmt.Errorf("delete candidate decisions past retention: %w", err)
	}
	return nil
}
