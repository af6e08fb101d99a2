// Package watch keeps one process's kill switch current: it seeds the
// board the decision path checks with the list saved beside the spool,
// keeps it current from the database (internal/kill/postgres's watcher),
// saves each new list for a restart, and reports each minute the list
// goes unconfirmed. Its log lines name the flags an operator would change
// (--kill-max-stale, --kill-start-fail), as gated's configuration does.
package watch

import (
	"context"
	"errors"
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
	"github.com/gatedhq/gated/internal/postgres"
)

// Config bounds the kill switch and says where its list is saved.
type Config struct {
	// StaleAfter is how long the list may go unconfirmed before each
	// minute is reported; it is also the longest Open waits for the
	// first list.
	StaleAfter time.Duration
	// MaxStale is how long the board decides from an unconfirmed list
	// before it refuses every call.
	MaxStale time.Duration
	// StartOpen, with no saved list, decides as if no kill were set, for
	// at most MaxStale, rather than refusing every call until a list is
	// read.
	StartOpen bool
	// Dir is where the list is saved (saved.FileName): beside the spool.
	Dir string
	// Now is the board's clock; nil is time.Now.
	Now func() time.Time
}

// Saving the list: on every change, and otherwise once its last saved
// confirmation is this old, so a restart during an outage finds a list
// confirmed at most this long before the outage began, at one write a
// half-minute.
const saveEvery = 30 * time.Second

// Switch is the kill switch of one process: the store the API sets and
// lifts kills with, and the board the decision path checks, kept current
// by the store's watcher and saved beside the spool.
type Switch struct {
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

// Open opens the kill switch store on db, seeds the board with the saved
// list (or, by cfg.StartOpen, an empty one), and starts the watcher and
// the minute report. It waits for the first list from the database — at
// most cfg.StaleAfter, and only until the first failure when the board
// already holds a list to decide from. The migrations create the table.
func Open(ctx context.Context, db *postgres.DB, cfg Config, m *metrics.Metrics, log *zap.Logger) *Switch {
	store := killpg.New(db)
	s := &Switch{Store: store, board: kill.NewBoard(cfg.MaxStale, cfg.Now), path: filepath.Join(cfg.Dir, saved.FileName),
		staleAfter: cfg.StaleAfter, m: m, log: log}
	s.seed(cfg.StartOpen)
	m.ObserveKillListAge(s.board.Age)
	first := make(chan struct{})
	var once sync.Once
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	s.wg.Go(func() {
		// Failures are logged once per outage, not at every retry; the
		// recovery is logged too, so the log brackets the outage.
		var down atomic.Bool
		store.Watch(wctx, s.board, killpg.DefaultResync, killpg.Hooks{
			Loaded: func(active int) {
				m.KillsActive(active)
				s.save()
				once.Do(func() { close(first) })
				if down.Swap(false) {
					log.Info("the kill switch list is read again")
				}
			},
			Failed: func(err error) {
				if !down.Swap(true) {
					if _, ok := s.board.Age(); ok {
						log.Warn("the kill switch list cannot be read; gated decides from the last list read until --kill-max-stale, then refuses every call until it is", zap.Error(err))
					} else {
						log.Warn("the kill switch list cannot be read, and gated has read none (nor a saved one): it refuses every call until it can", zap.Error(err))
					}
				}
				if age, ok := s.board.Age(); ok && age <= cfg.MaxStale {
					once.Do(func() { close(first) })
				}
			},
		})
	})
	s.wg.Go(func() {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
				s.report()
			}
		}
	})
	select {
	case <-first:
	case <-time.After(cfg.StaleAfter):
		if _, ok := s.board.Age(); !ok {
			log.Warn("the kill switch list could not be read at start: every call is refused until it is", zap.Duration("waited", cfg.StaleAfter))
		}
	case <-ctx.Done():
	}
	return s
}

// Board is the list the decision path checks calls against.
func (s *Switch) Board() *kill.Board { return s.board }

// Close stops the watcher and the report.
func (s *Switch) Close() {
	s.stop()
	s.wg.Wait()
}

// seed puts the saved list on the board when there is one that reads
// whole (the board's bound still applies to its age); else, when open, an
// empty list confirmed now, so calls run for --kill-max-stale at most
// without any list.
func (s *Switch) seed(open bool) {
	ks, confirmed, err := saved.Load(s.path, s.board.Now())
	switch {
	case err == nil:
		s.board.Set(ks, confirmed)
		s.savedAt, s.savedIDs = confirmed, ids(ks)
		if age, _ := s.board.Age(); age > s.board.MaxStale() {
			s.log.Warn("the saved kill switch list is older than --kill-max-stale: every call is refused until the database answers",
				zap.String("path", s.path), zap.Time("confirmed", confirmed))
			return
		}
		s.log.Info("the saved kill switch list is loaded: gated decides from it until the database answers, for at most --kill-max-stale from when it was confirmed",
			zap.String("path", s.path), zap.Int("kills", len(ks)), zap.Time("confirmed", confirmed))
		return
	case errors.Is(err, fs.ErrNotExist):
	default:
		s.log.Error("the saved kill switch list is ignored", zap.String("path", s.path), zap.Error(err))
	}
	if open {
		s.board.Set(nil, s.board.Now())
		s.log.Warn("no saved kill switch list: by --kill-start-fail open, gated decides as if no kill were set until the database answers, for at most --kill-max-stale")
	}
}

// save writes the board's list beside the spool when it changed, or when
// the confirmation saved last is saveEvery old. A failure is logged once
// until a save succeeds; decisions do not depend on it.
func (s *Switch) save() {
	ks, confirmed, ok := s.board.List()
	now := ids(ks)
	if !ok || slices.Equal(now, s.savedIDs) && confirmed.Sub(s.savedAt) < saveEvery {
		return
	}
	if err := saved.Save(s.path, ks, confirmed); err != nil {
		if !s.saveError {
			s.log.Warn("the kill switch list cannot be saved beside the spool: a restart while the database is away would find an older list, or none", zap.Error(err))
		}
		s.saveError = true
		return
	}
	s.savedIDs, s.savedAt, s.saveError = now, confirmed, false
}

func ids(ks []kill.Kill) []string {
	out := make([]string, len(ks))
	for i := range ks {
		out[i] = ks[i].ID
	}
	return out
}

// report is the minute's account of a list gone unconfirmed: a log line
// with its age and the time left before every call is refused, and a
// minute counted in gated_kill_list_stale_seconds_total while gated still
// decides from it.
func (s *Switch) report() {
	age, ok := s.board.Age()
	maxStale := s.board.MaxStale()
	switch {
	case !ok:
		s.log.Warn("no kill switch list has been read: every call is refused until one is")
	case age <= s.staleAfter:
	case age <= maxStale:
		s.m.KillListStaleMinute()
		s.log.Warn("deciding from a kill switch list that could not be confirmed recently",
			zap.Duration("age", age.Truncate(time.Second)), zap.Duration("refusing_every_call_in", (maxStale-age).Truncate(time.Second)))
	default:
		s.log.Error("the kill switch list could not be confirmed for --kill-max-stale: every call is refused until it is",
			zap.Duration("age", age.Truncate(time.Second)))
	}
}
