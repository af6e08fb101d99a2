package main

import (
	"context"
	"flag"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/kill"
	killpg "github.com/gatedhq/gated/internal/kill/postgres"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/server"
)

// killFlags configure the kill switch.
type killFlags struct {
	mode       string
	staleAfter time.Duration
}

// DefaultKillStaleAfter is how long a replica decides on a kill list it
// could not confirm before refusing every call.
const DefaultKillStaleAfter = 10 * time.Second

func (k *killFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&k.mode, "kill-switch", "auto", "auto: the kill switch is on when --database-url and --tokens are both set; off: never (a database outage then never refuses calls for it)")
	fs.DurationVar(&k.staleAfter, "kill-stale-after", DefaultKillStaleAfter, "refuse every call (kill_switch_unavailable) once the kill list could not be confirmed for this long")
}

// check validates the flags; on reports whether the kill switch will be
// on, given whether gated has a database and tokens.
func (k *killFlags) check(database, tokens bool) (on bool, err error) {
	switch k.mode {
	case "auto":
		on = database && tokens
	case "off":
	default:
		return false, usageError("--kill-switch must be auto or off, not %q", k.mode)
	}
	// Below two reloads a quiet, healthy list would go stale between them.
	if minStale := 2 * killpg.DefaultResync; k.staleAfter < minStale {
		return false, usageError("--kill-stale-after must be at least %v (the list is reloaded every %v), got %v", minStale, killpg.DefaultResync, k.staleAfter)
	}
	return on, nil
}

// kills is the kill switch of one replica: the store the API sets and
// lifts kills with, and the board the decision path checks, kept current
// by the store's watcher.
type kills struct {
	*killpg.Store
	board *kill.Board
	stop  context.CancelFunc
	wg    sync.WaitGroup
}

// openKills opens the kill switch store and starts its watcher, then waits
// for the first kill list — at most the staleness bound, since until it
// comes every call is refused anyway. The audit recorder applies the
// migration that creates the table.
func openKills(ctx context.Context, f *killFlags, databaseURL string, m *metrics.Metrics, log *zap.Logger) (*kills, error) {
	store, err := killpg.Open(ctx, databaseURL)
	if err != nil {
		return nil, err
	}
	k := &kills{Store: store, board: kill.NewBoard(f.staleAfter, nil)}
	first := make(chan struct{})
	var once sync.Once
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	k.stop = stop
	k.wg.Go(func() {
		// Failures are logged once per outage, not at every retry; the
		// recovery is logged too, so the log brackets the outage.
		var down atomic.Bool
		err := store.Watch(wctx, k.board, killpg.DefaultResync, killpg.Hooks{
			Loaded: func(active int) {
				m.KillsActive(active)
				once.Do(func() { close(first) })
				if down.Swap(false) {
					log.Info("the kill switch list is read again")
				}
			},
			Failed: func(err error) {
				if !down.Swap(true) {
					log.Warn("the kill switch list cannot be read; past --kill-stale-after every call is refused until it is", zap.Error(err))
				}
			},
		})
		if err != nil {
			log.Error("the kill switch list cannot be watched: every call is refused", zap.Error(err))
		}
	})
	select {
	case <-first:
	case <-time.After(f.staleAfter):
		log.Warn("the kill switch list could not be read at start: every call is refused until it is", zap.Duration("waited", f.staleAfter))
	case <-ctx.Done():
	}
	return k, nil
}

// close stops the watcher and closes the store.
func (k *kills) close() {
	k.stop()
	k.wg.Wait()
	k.Store.Close()
}

// serverKills is ks as server.Deps holds it: a nil interface when the kill
// switch is off, not an interface holding a nil pointer.
func serverKills(ks *kills) server.Kills {
	if ks == nil {
		return nil
	}
	return ks
}
