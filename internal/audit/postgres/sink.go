// Package postgres is the audit sink gated uses with a database: records
// batched by COPY into audit_decisions, partitioned by day, on the pool
// of internal/postgres, with the Store that reads records back. Every
// column is defined once, in columns.go.
package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/chain"
	"github.com/gatedhq/gated/internal/postgres"
)

// uniqueViolation is PostgreSQL's SQLSTATE for a duplicate key.
const uniqueViolation = "23505"

// Config configures New. Zero values take the documented defaults.
type Config struct {
	Migrate   bool          // Sink.Migrate applies pending migrations; without it they are not the sink's to apply (gated migrate up)
	Retention time.Duration // Maintain drops daily partitions older than this; default 90 days
	Signer    *chain.Signer // signs the point where a retention purge leaves each chain starting; nil: unsigned
	Logger    *zap.Logger
}

// Sink is the PostgreSQL audit.RemoteSink.
type Sink struct {
	db        *postgres.DB
	pool      *pgxpool.Pool
	migrate   bool
	retention time.Duration
	signer    *chain.Signer
	log       *zap.Logger

	mu   sync.Mutex
	days map[time.Time]bool // partitions known to exist
}

// The Recorder spools only for a RemoteSink: should Sink stop being one,
// this fails to build rather than records going unspooled.
var _ audit.RemoteSink = (*Sink)(nil)

// New is the sink writing to db.
func New(db *postgres.DB, cfg Config) *Sink {
	if cfg.Retention <= 0 {
		cfg.Retention = 90 * 24 * time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return &Sink{db: db, pool: db.Pool(), migrate: cfg.Migrate, retention: cfg.Retention, signer: cfg.Signer, log: cfg.Logger, days: map[time.Time]bool{}}
}

// Name is audit.SinkPostgres.
func (s *Sink) Name() string { return audit.SinkPostgres }

// Close does nothing: the pool is the DB's, closed by whoever opened it.
func (s *Sink) Close() error { return nil }

// Ping checks that a connection can be made and that the schema is there.
func (s *Sink) Ping(ctx context.Context) error {
	if _, err := s.pool.Exec(ctx, "SELECT FROM audit_decisions LIMIT 0"); err != nil {
		return fmt.Errorf("audit database: %w", err)
	}
	return nil
}

// Migrate applies the pending migrations when the sink was made with
// Config.Migrate, and does nothing otherwise. The Recorder calls it before
// anything else, retrying in the background while it fails.
func (s *Sink) Migrate(ctx context.Context) error {
	if !s.migrate {
		return nil
	}
	return postgres.Migrate(ctx, s.db.URL(), "up", logLines{s.log})
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

// Write stores a batch in one transaction, all of it or none. The fast
// path COPYs straight into audit_decisions; if any record is already stored
// (a replay after an outage, or a commit whose acknowledgement was lost) the
// primary key rejects the whole COPY and the batch goes again through the
// staging table with INSERT ... ON CONFLICT DO NOTHING, which skips the
// records already there. Either way each decision is stored once. fixes
// (corrections) then replace the stored record of their key, or are
// inserted when it is not there (it cannot arrive later: a plain insert
// never overwrites); then the links of records stored by another
// transaction, and the checkpoints.
//
// A commit sent whose answer never came is an *ambiguousCommit: the batch
// may be stored or not, and its Stored finds out which.
func (s *Sink) Write(ctx context.Context, b audit.Batch) error {
	recs := b.Records
	days := slices.Clone(recs)
	for _, f := range b.Fixes {
		days = append(days, f.Record)
	}
	if err := s.ensureDays(ctx, days); err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store audit batch: %w", err)
	}
	defer conn.Release()
	err = s.commit(ctx, conn, func(tx pgx.Tx) error {
		if err := InsertRecords(ctx, tx, recs); err != nil {
			return err
		}
		return writeRest(ctx, tx, b)
	})
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == uniqueViolation {
		err = s.commit(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, createStage); err != nil {
				return fmt.Errorf("create audit staging table: %w", err)
			}
			if err := copyRecords(ctx, tx, stageTable, recs); err != nil {
				return fmt.Errorf("copy audit batch to staging: %w", err)
			}
			if _, err := tx.Exec(ctx, insertFromStage); err != nil {
				return fmt.Errorf("insert audit batch from staging: %w", err)
			}
			return writeRest(ctx, tx, b)
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

// ambiguousCommit is a COMMIT that was sent and never answered: the
// connection broke or the deadline passed between the two. The batch may
// be stored or not.
type ambiguousCommit struct {
	sink    *Sink     // whose pool's settings reach the server again
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
func (s *Sink) commit(ctx context.Context, conn *pgxpool.Conn, fn func(pgx.Tx) error) error {
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
	started, _ := postgres.SessionStart(pc)
	return &ambiguousCommit{sink: s, pid: pc.PID(), started: started, err: err}
}

// Stored learns whether the ambiguous commit stored its batch, recs, and
// returns the stored route of each record found (so *ambiguousCommit is an
// audit.UncertainWrite). On a new connection it first ends
// the old session if it still runs and waits until it is gone: only then is
// its transaction committed or rolled back for good, so a record not found
// cannot appear later. It gives up with an error when ctx ends first.
func (e *ambiguousCommit) Stored(ctx context.Context, recs []*audit.Record) (map[string]string, error) {
	c, err := e.sink.connectFresh(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.Background())
	var started any // NULL: match the pid alone
	if !e.started.IsZero() {
		started = e.started
		// Ending another session of the same role needs no privilege; if
		// this fails, waiting below still finds out.
		_, _ = c.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND backend_start = $2",
			int64(e.pid), e.started)
	}
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		var alive bool
		err := c.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND ($2::timestamptz IS NULL OR backend_start = $2))",
			int64(e.pid), started).Scan(&alive)
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
func (s *Sink) connectFresh(ctx context.Context) (*pgx.Conn, error) {
	cfg := s.db.ConnConfig("")
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
