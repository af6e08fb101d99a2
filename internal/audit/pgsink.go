package audit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// columns is the column order shared by COPY, the staging insert and reads.
var columns = []string{
	"decided_at", "decision_id", "request_id", "agent_id", "tool_name",
	"action_id", "action_version", "declared_category", "effective_category",
	"declared_auth", "effective_auth", "risk_domain", "runtime_route",
	"final_route", "gate_decision", "execute", "shadow", "hard_blockers",
	"reasons", "finding_codes", "evidence", "argument_keys", "arguments_hmac",
	"catalog_revision", "policy_revision", "token_name", "latency_ms", "gated_version",
}

var columnList = strings.Join(columns, ", ")

func (r *Record) values() []any {
	return []any{
		r.DecidedAt, r.DecisionID, r.RequestID, r.AgentID, r.ToolName,
		r.ActionID, r.ActionVersion, r.DeclaredCategory, r.EffectiveCategory,
		r.DeclaredAuth, r.EffectiveAuth, r.RiskDomain, r.RuntimeRoute,
		r.FinalRoute, r.GateDecision, r.Execute, r.Shadow, nonNil(r.HardBlockers),
		nonNil(r.Reasons), nonNil(r.FindingCodes), nonNilEvidence(r.Evidence), nonNil(r.ArgumentKeys), r.ArgumentsHMAC,
		r.CatalogRevision, r.PolicyRevision, r.TokenName, r.LatencyMS, r.GatedVersion,
	}
}

func (r *Record) scanTargets() []any {
	return []any{
		&r.DecidedAt, &r.DecisionID, &r.RequestID, &r.AgentID, &r.ToolName,
		&r.ActionID, &r.ActionVersion, &r.DeclaredCategory, &r.EffectiveCategory,
		&r.DeclaredAuth, &r.EffectiveAuth, &r.RiskDomain, &r.RuntimeRoute,
		&r.FinalRoute, &r.GateDecision, &r.Execute, &r.Shadow, &r.HardBlockers,
		&r.Reasons, &r.FindingCodes, &r.Evidence, &r.ArgumentKeys, &r.ArgumentsHMAC,
		&r.CatalogRevision, &r.PolicyRevision, &r.TokenName, &r.LatencyMS, &r.GatedVersion,
	}
}

// Records replayed from an older spool or built by hand may carry nil slices;
// the columns are NOT NULL.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilEvidence(e []EvidenceMeta) []EvidenceMeta {
	if e == nil {
		return []EvidenceMeta{}
	}
	return e
}

// stageTable receives each batch by COPY; the insert from it skips rows
// already stored (COPY itself has no ON CONFLICT). Being a per-connection
// temporary table emptied at commit, it costs no catalog churn per batch.
const stageTable = "audit_stage"

var insertFromStage = "INSERT INTO audit_decisions (" + columnList + ") SELECT " + columnList +
	" FROM " + stageTable + " ON CONFLICT (decided_at, decision_id) DO NOTHING"

// uniqueViolation is PostgreSQL's SQLSTATE for a duplicate key.
const uniqueViolation = "23505"

// partitionLock serialises partition DDL between replicas (an arbitrary
// constant: "gated" in ASCII).
const partitionLock = 0x6761746564

type pgSink struct {
	pool      *pgxpool.Pool
	retention time.Duration
	log       *zap.Logger

	mu   sync.Mutex
	days map[time.Time]bool // partitions known to exist
}

func openPGSink(ctx context.Context, cfg Config) (*pgSink, error) {
	pc, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("audit database url: %w", err)
	}
	pc.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "CREATE TEMP TABLE IF NOT EXISTS "+stageTable+
			" (LIKE audit_decisions INCLUDING DEFAULTS) ON COMMIT DELETE ROWS")
		if err != nil {
			return fmt.Errorf("create audit staging table: %w", err)
		}
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("audit database: %w", err)
	}
	return &pgSink{pool: pool, retention: cfg.Retention, log: cfg.Logger, days: map[time.Time]bool{}}, nil
}

func (s *pgSink) close() error {
	s.pool.Close()
	return nil
}

// insert stores a batch in one transaction, all of it or none. The fast
// path COPYs straight into audit_decisions; if any record is already stored
// (a replay after an outage, or a commit whose acknowledgement was lost) the
// primary key rejects the whole COPY and the batch goes again through the
// staging table with INSERT ... ON CONFLICT DO NOTHING, which skips the
// records already there. Either way each decision is stored once.
func (s *pgSink) insert(ctx context.Context, recs []*Record) error {
	if err := s.ensureDays(ctx, recs); err != nil {
		return err
	}
	rows := func() pgx.CopyFromSource {
		return pgx.CopyFromSlice(len(recs), func(i int) ([]any, error) { return recs[i].values(), nil })
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"audit_decisions"}, columns, rows())
		return err
	})
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == uniqueViolation {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{stageTable}, columns, rows()); err != nil {
				return fmt.Errorf("copy audit batch to staging: %w", err)
			}
			if _, err := tx.Exec(ctx, insertFromStage); err != nil {
				return fmt.Errorf("insert audit batch from staging: %w", err)
			}
			return nil
		})
	}
	if err != nil {
		err = fmt.Errorf("store audit batch: %w", err)
		// A partition may have been dropped under us (retention on another
		// replica): forget what we knew so the retry recreates it.
		s.mu.Lock()
		clear(s.days)
		s.mu.Unlock()
	}
	return err
}

func day(t time.Time) time.Time {
	return t.UTC().Truncate(24 * time.Hour)
}

func (s *pgSink) ensureDays(ctx context.Context, recs []*Record) error {
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

// ensurePartition creates the partition of day d if it is missing. The
// advisory lock makes concurrent IF NOT EXISTS from replicas safe.
func (s *pgSink) ensurePartition(ctx context.Context, d time.Time) error {
	ddl := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s PARTITION OF audit_decisions FOR VALUES FROM ('%s') TO ('%s')",
		pgx.Identifier{partitionName(d)}.Sanitize(), d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339))
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
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

// maintain creates partitions from yesterday (clock skew near midnight) to
// partitionsAhead days ahead, and drops partitions wholly older than the
// retention.
func (s *pgSink) maintain(ctx context.Context, now time.Time) error {
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
		if _, err := s.pool.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{n}.Sanitize()); err != nil {
			return fmt.Errorf("drop audit partition %s: %w", n, err)
		}
		s.mu.Lock()
		delete(s.days, d)
		s.mu.Unlock()
		s.log.Info("audit partition dropped by retention", zap.String("partition", n))
	}
	return nil
}

// maintainInterval is how often partitions are created ahead and expired.
const maintainInterval = time.Hour

func (r *recorder) maintainLoop(pg *pgSink) {
	run := func() {
		ctx, cancel := context.WithTimeout(r.bg, time.Minute)
		defer cancel()
		if err := pg.maintain(ctx, time.Now()); err != nil {
			r.cfg.Logger.Warn("audit partition maintenance failed", zap.Error(err))
		}
	}
	run()
	r.every(maintainInterval, run)
}
