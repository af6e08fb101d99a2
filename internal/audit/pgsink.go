package audit

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// backendStart is where a connection keeps its server session's start time
// (pgconn's CustomData): with the process id it names the session even
// after the pid is reused.
const backendStart = "gated.backend_start"

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
		var started time.Time
		if err := c.QueryRow(ctx, "SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()").Scan(&started); err != nil {
			return fmt.Errorf("read audit session start: %w", err)
		}
		c.PgConn().CustomData()[backendStart] = started
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

// ping checks that a connection can be made and set up (which needs the
// schema: see AfterConnect).
func (s *pgSink) ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("audit database: %w", err)
	}
	return nil
}

// insert stores a batch of new records.
func (s *pgSink) insert(ctx context.Context, recs []*Record) error { return s.store(ctx, recs, nil) }

// store stores a batch in one transaction, all of it or none. The fast
// path COPYs straight into audit_decisions; if any record is already stored
// (a replay after an outage, or a commit whose acknowledgement was lost) the
// primary key rejects the whole COPY and the batch goes again through the
// staging table with INSERT ... ON CONFLICT DO NOTHING, which skips the
// records already there. Either way each decision is stored once. fixes
// (corrections) then replace the stored record of their key, or are
// inserted when it is not there (it cannot arrive later: a plain insert
// never overwrites).
//
// A commit sent whose answer never came is an *ambiguousCommit: the batch
// may be stored or not, and resolve finds out which.
func (s *pgSink) store(ctx context.Context, recs, fixes []*Record) error {
	if err := s.ensureDays(ctx, slices.Concat(recs, fixes)); err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store audit batch: %w", err)
	}
	defer conn.Release()
	rows := func() pgx.CopyFromSource {
		return pgx.CopyFromSlice(len(recs), func(i int) ([]any, error) { return recs[i].values(), nil })
	}
	err = s.commit(ctx, conn, func(tx pgx.Tx) error {
		if len(recs) > 0 {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"audit_decisions"}, columns, rows()); err != nil {
				return err
			}
		}
		return applyFixes(ctx, tx, fixes)
	})
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == uniqueViolation {
		err = s.commit(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{stageTable}, columns, rows()); err != nil {
				return fmt.Errorf("copy audit batch to staging: %w", err)
			}
			if _, err := tx.Exec(ctx, insertFromStage); err != nil {
				return fmt.Errorf("insert audit batch from staging: %w", err)
			}
			return applyFixes(ctx, tx, fixes)
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

// fixColumns are what a correction changes: the answer and why.
var fixColumns = []string{"final_route", "gate_decision", "execute", "hard_blockers", "reasons", "finding_codes"}

var upsertFix = func() string {
	params := make([]string, len(columns))
	for i := range columns {
		params[i] = fmt.Sprintf("$%d", i+1)
	}
	set := make([]string, len(fixColumns))
	for i, c := range fixColumns {
		set[i] = c + " = EXCLUDED." + c
	}
	return "INSERT INTO audit_decisions (" + columnList + ") VALUES (" + strings.Join(params, ", ") +
		") ON CONFLICT (decided_at, decision_id) DO UPDATE SET " + strings.Join(set, ", ")
}()

// applyFixes writes corrections. An upsert waits for a concurrent
// transaction that holds the same key, so a correction always lands after
// the record it corrects, whichever commits first.
func applyFixes(ctx context.Context, tx pgx.Tx, fixes []*Record) error {
	if len(fixes) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, f := range fixes {
		b.Queue(upsertFix, f.values()...)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("correct audit records: %w", err)
	}
	return nil
}

// ambiguousCommit is a COMMIT that was sent and never answered: the
// connection broke or the deadline passed between the two. The batch may
// be stored or not.
type ambiguousCommit struct {
	pid     uint32    // the server session that ran the transaction
	started time.Time // its backend_start; zero if unknown
	err     error
}

func (e *ambiguousCommit) Error() string {
	return "the commit was sent but its acknowledgement was lost: " + e.err.Error()
}

func (e *ambiguousCommit) Unwrap() error { return e.err }

// commit runs fn in a transaction on conn and commits it, telling a lost
// commit acknowledgement apart from a transaction known not to be stored.
func (s *pgSink) commit(ctx context.Context, conn *pgxpool.Conn, fn func(pgx.Tx) error) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(ctx) // no COMMIT was sent: the server rolls back even if this fails
		return err
	}
	pc := conn.Conn().PgConn()
	if pc.IsClosed() {
		return errors.New("connection closed before the commit") // nothing was sent: rolled back
	}
	err = tx.Commit(ctx)
	var pgErr *pgconn.PgError
	if err == nil || errors.As(err, &pgErr) || errors.Is(err, pgx.ErrTxCommitRollback) {
		return err // the server answered
	}
	// Anything else may have reached the server. pgconn.SafeToRetry cannot
	// tell: a connection that breaks while the COMMIT's answer is awaited
	// is reported as "conn closed", which it calls safe to retry.
	started, _ := pc.CustomData()[backendStart].(time.Time)
	return &ambiguousCommit{pid: pc.PID(), started: started, err: err}
}

// resolve learns whether an ambiguous commit stored its batch, and returns
// the stored route of each record found. On a new connection it first ends
// the old session if it still runs and waits until it is gone: only then is
// its transaction committed or rolled back for good, so a record not found
// cannot appear later. It gives up with an error when ctx ends first.
func (s *pgSink) resolve(ctx context.Context, amb *ambiguousCommit, recs []*Record) (map[string]string, error) {
	c, err := s.connectFresh(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.Background())
	var started any // NULL: match the pid alone
	if !amb.started.IsZero() {
		started = amb.started
		// Ending another session of the same role needs no privilege; if
		// this fails, waiting below still finds out.
		_, _ = c.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND backend_start = $2",
			int64(amb.pid), amb.started)
	}
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		var alive bool
		err := c.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND ($2::timestamptz IS NULL OR backend_start = $2))",
			int64(amb.pid), started).Scan(&alive)
		if err != nil {
			return nil, fmt.Errorf("resolve audit commit: watch the old session: %w", err)
		}
		if !alive {
			break
		}
		if err := sleepCtx(ctx, wait); err != nil {
			return nil, fmt.Errorf("resolve audit commit: the old session did not end: %w", err)
		}
	}
	at := make([]time.Time, len(recs))
	ids := make([]string, len(recs))
	for i, r := range recs {
		at[i], ids[i] = r.DecidedAt, r.DecisionID
	}
	rows, err := c.Query(ctx, `SELECT d.decision_id, d.final_route FROM audit_decisions d
		JOIN unnest($1::timestamptz[], $2::text[]) AS k(decided_at, decision_id) USING (decided_at, decision_id)`, at, ids)
	if err != nil {
		return nil, fmt.Errorf("resolve audit commit: look the records up: %w", err)
	}
	routes := map[string]string{}
	var id, route string
	_, err = pgx.ForEachRow(rows, []any{&id, &route}, func() error {
		routes[id] = route
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("resolve audit commit: look the records up: %w", err)
	}
	return routes, nil
}

// connectFresh opens a connection outside the pool, whose idle connections
// may have broken with the one that lost the acknowledgement; it retries
// until ctx ends.
func (s *pgSink) connectFresh(ctx context.Context) (*pgx.Conn, error) {
	cfg := s.pool.Config().ConnConfig
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 250*time.Millisecond) {
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			return c, nil
		}
		if serr := sleepCtx(ctx, wait); serr != nil {
			return nil, fmt.Errorf("resolve audit commit: reconnect: %w", err)
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
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
