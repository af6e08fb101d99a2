package postgres

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatedhq/gated/internal/kill"
)

// channel is the NOTIFY channel the kill_switches trigger notifies.
const channel = "gated_kill_switches"

// watcherName is the watch connection's application_name (unless the
// database URL sets one), so an operator can tell it in pg_stat_activity.
const watcherName = "gated kill switch watcher"

// Reconnect backoff of the watch connection.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 2 * time.Second
)

// Hooks are told what Watch does: Loaded after each load, with the number
// of active kills (for the gauge); Failed when connecting, listening or
// loading fails (the watcher retries).
type Hooks struct {
	Loaded func(active int)
	Failed func(error)
}

// DefaultResync is how often Watch reloads the list without being
// notified: the backstop for a lost notification, and what keeps a quiet
// list confirmed. It must stay well under the board's staleness bound.
const DefaultResync = 2 * time.Second

// Watch keeps board current until ctx ends: on its own connection it
// listens on gated_kill_switches, loads the active kills, and reloads them
// on every notification and every resync interval. Each successful load
// confirms the board; while the database is away nothing does, and the
// board goes stale by its own bound. The hooks, when set, hear of each
// load and each failure.
func (s *Store) Watch(ctx context.Context, board *kill.Board, resync time.Duration, h Hooks) error {
	cfg, err := pgx.ParseConfig(s.url)
	if err != nil {
		return err
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = watcherName
	}
	backoff := minBackoff
	for {
		if s.session(ctx, cfg, board, resync, h) {
			backoff = minBackoff
		}
		if ctx.Err() != nil {
			return nil
		}
		// Jitter spreads the replicas that lost the database together.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff/2 + rand.N(backoff/2+1)):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// session connects, listens and reloads until the connection fails or ctx
// ends. It reports whether it loaded the list at least once.
func (s *Store) session(ctx context.Context, cfg *pgx.ConnConfig, board *kill.Board, resync time.Duration, h Hooks) bool {
	failed := func(err error) {
		if h.Failed != nil && ctx.Err() == nil {
			h.Failed(err)
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		failed(err)
		return false
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resync)
		defer cancel()
		conn.Close(cctx)
	}()
	// LISTEN before the first load: a change committed between them is
	// then notified, not lost.
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		failed(err)
		return false
	}
	ok := false
	for {
		if err := load(ctx, conn, board, resync, h.Loaded); err != nil {
			failed(err)
			return ok
		}
		ok = true
		wctx, cancel := context.WithTimeout(ctx, resync)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ok
		case err == nil, errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			// Notified, or quiet for an interval: reload either way. Many
			// notifications at once cost one reload each, and each reload
			// reads the whole list, so none is missed.
		default:
			failed(err)
			return ok
		}
	}
}

// load reads the active kills on conn and sets them on board, confirmed
// as of just before the query was sent.
func load(ctx context.Context, conn *pgx.Conn, board *kill.Board, within time.Duration, loaded func(int)) error {
	qctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	asked := board.Now()
	rows, err := conn.Query(qctx, activeQuery)
	if err != nil {
		return err
	}
	ks, err := collect(rows)
	if err != nil {
		return err
	}
	board.Set(ks, asked)
	if loaded != nil {
		loaded(len(ks))
	}
	return nil
}
