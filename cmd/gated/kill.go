package main

import (
	"context"
	"errors"
	"flag"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/kill"
	killpg "github.com/gatedhq/gated/internal/kill/postgres"
	"github.com/gatedhq/gated/internal/kill/saved"
	"github.com/gatedhq/gated/internal/metrics"
	pgdb "github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/server"
)

// killFlags configure the kill switch.
type killFlags struct {
	mode       string
	staleAfter time.Duration
	maxStale   time.Duration
	startFail  string
}

// Defaults of the kill switch's bounds: past DefaultKillStaleAfter without
// confirming its list a process warns and decides from the last list it
// read; past DefaultKillMaxStale it refuses every call. Minutes, not
// seconds: a database blip must not stop every agent.
const (
	DefaultKillStaleAfter = 10 * time.Second
	DefaultKillMaxStale   = 10 * time.Minute
)

func (k *killFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&k.mode, "kill-switch", "auto", "auto: the kill switch is on with --database-url (gated serve: and --tokens); on: with --database-url, tokens or not; off: never (a database outage then never refuses calls for it)")
	fs.DurationVar(&k.staleAfter, "kill-stale-after", DefaultKillStaleAfter, "once the kill list could not be confirmed for this long, warn every minute and decide from the last list read (kept beside the spool, so a restart finds it)")
	fs.DurationVar(&k.maxStale, "kill-max-stale", DefaultKillMaxStale, "refuse every call (kill_switch_unavailable) once the kill list could not be confirmed for this long")
	fs.StringVar(&k.startFail, "kill-start-fail", "closed", "starting with neither the database nor a saved kill list: closed refuses every call until a list is read; open decides as if no kill were set, for at most --kill-max-stale")
}

// check validates the flags; on reports whether the kill switch will be
// on, given whether gated has a database and tokens (a surface without
// tokens passes true: its kills come from the database alone).
func (k *killFlags) check(database, tokens bool) (on bool, err error) {
	switch k.mode {
	case "auto":
		on = database && tokens
	case "on":
		if !database {
			return false, usageError("--kill-switch on needs --database-url: the kill list lives in PostgreSQL")
		}
		on = true
	case "off":
	default:
		return false, usageError("--kill-switch must be auto, on or off, not %q", k.mode)
	}
	// Below two reloads a quiet, healthy list would go stale between them.
	if minStale := 2 * killpg.DefaultResync; k.staleAfter < minStale {
		return false, usageError("--kill-stale-after must be at least %v (the list is reloaded every %v), got %v", minStale, killpg.DefaultResync, k.staleAfter)
	}
	if k.maxStale < k.staleAfter {
		return false, usageError("--kill-max-stale (%v) must be at least --kill-stale-after (%v); equal to it, gated never decides from an unconfirmed list", k.maxStale, k.staleAfter)
	}
	if k.startFail != "closed" && k.startFail != "open" {
		return false, usageError("--kill-start-fail must be closed or open, not %q", k.startFail)
	}
	return on, nil
}

// Saving the list: on every change, and otherwise once its last saved
// confirmation is this old, so a restart during an outage finds a list
// confirmed at most this long before the outage began, at one write a
// half-minute.
const killSaveEvery = 30 * time.Second

// kills is the kill switch of one process: the store the API sets and
// lifts kills with, and the board the decision path checks, kept current
// by the store's watcher and saved beside the spool at path.
type kills struct {
	*killpg.Store
	board      *kill.Board
	path       string
	staleAfter time.Duration
	m          *metrics.Metrics
	log        *zap.Logger

	// Of the watcher's goroutine alone: what was saved last.
	savedIDs  []string
	savedAt   time.Time
	saveError bool

	stop context.CancelFunc
	wg   sync.WaitGroup
}

// openKills opens the kill switch store, seeds the board with the list
// saved in spoolDir (or, by --kill-start-fail open, an empty one), and
// starts the watcher and the minute report. It waits for the first list
// from the database — at most --kill-stale-after, and only until the first
// failure when the board already holds a list to decide from. now is the
// board's clock (time.Now when nil). The audit recorder applies the
// migration that creates the table.
func openKills(ctx context.Context, f *killFlags, db *pgdb.DB, spoolDir string, m *metrics.Metrics, log *zap.Logger, now func() time.Time) (*kills, error) {
	store := killpg.New(db)
	k := &kills{Store: store, board: kill.NewBoard(f.maxStale, now), path: filepath.Join(spoolDir, saved.FileName),
		staleAfter: f.staleAfter, m: m, log: log}
	k.seed(f.startFail == "open")
	m.ObserveKillListAge(k.board.Age)
	first := make(chan struct{})
	var once sync.Once
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	k.stop = stop
	k.wg.Go(func() {
		// Failures are logged once per outage, not at every retry; the
		// recovery is logged too, so the log brackets the outage.
		var down atomic.Bool
		store.Watch(wctx, k.board, killpg.DefaultResync, killpg.Hooks{
			Loaded: func(active int) {
				m.KillsActive(active)
				k.save()
				once.Do(func() { close(first) })
				if down.Swap(false) {
					log.Info("the kill switch list is read again")
				}
			},
			Failed: func(err error) {
				if !down.Swap(true) {
					log.Warn("the kill switch list cannot be read; gated decides from the last list read until --kill-max-stale, then refuses every call until it is", zap.Error(err))
				}
				if age, ok := k.board.Age(); ok && age <= f.maxStale {
					once.Do(func() { close(first) })
				}
			},
		})
	})
	k.wg.Go(func() {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
				k.report()
			}
		}
	})
	select {
	case <-first:
	case <-time.After(f.staleAfter):
		if _, ok := k.board.Age(); !ok {
			log.Warn("the kill switch list could not be read at start: every call is refused until it is", zap.Duration("waited", f.staleAfter))
		}
	case <-ctx.Done():
	}
	return k, nil
}

// seed puts the saved list on the board when there is one that reads
// whole (the board's bound still applies to its age); else, when open, an
// empty list confirmed now, so calls run for --kill-max-stale at most
// without any list.
func (k *kills) seed(open bool) {
	ks, confirmed, err := saved.Load(k.path, k.board.Now())
	switch {
	case err == nil:
		k.board.Set(ks, confirmed)
		k.savedAt, k.savedIDs = confirmed, killIDs(ks)
		if age, _ := k.board.Age(); age > k.board.MaxStale() {
			k.log.Warn("the saved kill switch list is older than --kill-max-stale: every call is refused until the database answers",
				zap.String("path", k.path), zap.Time("confirmed", confirmed))
			return
		}
		k.log.Info("the saved kill switch list is loaded: gated decides from it until the database answers, for at most --kill-max-stale from when it was confirmed",
			zap.String("path", k.path), zap.Int("kills", len(ks)), zap.Time("confirmed", confirmed))
		return
	case errors.Is(err, fs.ErrNotExist):
	default:
		k.log.Error("the saved kill switch list is ignored", zap.String("path", k.path), zap.Error(err))
	}
	if open {
		k.board.Set(nil, k.board.Now())
		k.log.Warn("no saved kill switch list: by --kill-start-fail open, gated decides as if no kill were set until the database answers, for at most --kill-max-stale")
	}
}

// save writes the board's list beside the spool when it changed, or when
// the confirmation saved last is killSaveEvery old. A failure is logged
// once until a save succeeds; decisions do not depend on it.
func (k *kills) save() {
	ks, confirmed, ok := k.board.List()
	ids := killIDs(ks)
	if !ok || slices.Equal(ids, k.savedIDs) && confirmed.Sub(k.savedAt) < killSaveEvery {
		return
	}
	if err := saved.Save(k.path, ks, confirmed); err != nil {
		if !k.saveError {
			k.log.Warn("the kill switch list cannot be saved beside the spool: a restart while the database is away would find an older list, or none", zap.Error(err))
		}
		k.saveError = true
		return
	}
	k.savedIDs, k.savedAt, k.saveError = ids, confirmed, false
}

func killIDs(ks []kill.Kill) []string {
	ids := make([]string, len(ks))
	for i := range ks {
		ids[i] = ks[i].ID
	}
	return ids
}

// report is the minute's account of a list gone unconfirmed: a log line
// with its age and the time left before every call is refused, and a
// minute counted in gated_kill_list_stale_seconds_total while gated still
// decides from it.
func (k *kills) report() {
	age, ok := k.board.Age()
	maxStale := k.board.MaxStale()
	switch {
	case !ok:
		k.log.Warn("no kill switch list has been read: every call is refused until one is")
	case age <= k.staleAfter:
	case age <= maxStale:
		k.m.KillListStaleMinute()
		k.log.Warn("deciding from a kill switch list that could not be confirmed recently",
			zap.Duration("age", age.Truncate(time.Second)), zap.Duration("refusing_every_call_in", (maxStale-age).Truncate(time.Second)))
	default:
		k.log.Error("the kill switch list could not be confirmed for --kill-max-stale: every call is refused until it is",
			zap.Duration("age", age.Truncate(time.Second)))
	}
}

// close stops the watcher and the report.
func (k *kills) close() {
	k.stop()
	k.wg.Wait()
}

// serverKills is ks as server.Deps holds it: a nil interface when the kill
// switch is off, not an interface holding a nil pointer.
func serverKills(ks *kills) server.Kills {
	if ks == nil {
		return nil
	}
	return ks
}
