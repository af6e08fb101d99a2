package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/postgres"
)

// channel is the NOTIFY channel the kill_switches trigger notifies.
const channel = "gated_kill_switches"

// watcherName is the watch connection's application_name (unless the
// database URL sets one), so an operator can tell it in pg_stat_activity.
const watcherName = "gated kill switch watcher"

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
func (s *Store) Watch(ctx context.Context, board *kill.Board, resync time.Duration, h Hooks) {
	cfg := s.db.ConnConfig(watcherName)
	// Up runs after LISTEN: a change committed between them and the first
	// load is then notified, not lost. Each notification and each quiet
	// interval reloads the whole list, so none is missed, and a reload is
	// the heartbeat's check too.
	reload := func(ctx context.Context, conn *pgx.Conn) error { return load(ctx, conn, board, resync, h.Loaded) }
	postgres.Listen(ctx, postgres.Listener{
		Conn: cfg, Channel: channel, Heartbeat: resync,
		Up:     reload,
		Notify: func(ctx context.Context, conn *pgx.Conn, _ *pgconn.Notification) error { return reload(ctx, conn) },
		Idle:   reload,
		Failed: h.Failed,
	})
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
