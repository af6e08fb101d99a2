// Package reload keeps an immutable value (a catalog, a compiled policy
// bundle) up to date with the files it was built from. A rebuild runs off the
// hot path; readers only ever load an atomic pointer, so they see either the
// old value or the new one, never a half-built one. A failed rebuild keeps the
// last good value.
//
// A value is only published once the files it was read from have settled:
// files written in place (truncated, then written in pieces) can be read
// empty or half-written, and such a read may still build, just without what
// the missing half defined. So every build is bracketed by a fingerprint of
// the files (size, modification time, content), and Run also requires that
// no file event arrives during the build and for a settle period after it.
// A build that fails either check is thrown away, its error too, and retried
// once the files are quiet again.
package reload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long the watcher waits after the last file event
// before rebuilding: editors and ConfigMap updates touch several files in a
// burst, and one rebuild per burst is enough.
const DefaultDebounce = 250 * time.Millisecond

// maxUnsettled is how many builds in a row may find the files changing
// under them before the reloader reports it. Run keeps retrying after that,
// whenever the files go quiet; New and Reload give up.
const maxUnsettled = 5

// Config describes what to build and what to watch.
type Config[T any] struct {
	// Build produces a complete new value or an error. It runs on the
	// reloader's goroutine, never concurrently with itself.
	Build func() (*T, error)
	// Dirs are watched recursively; subdirectories created later are watched
	// too.
	Dirs []string
	// Debounce defaults to DefaultDebounce.
	Debounce time.Duration
	// Settle is how long Run waits after a build, watching for file events,
	// before publishing it; it defaults to Debounce. A writer that pauses
	// longer than this in the middle of a file cannot be told from one that
	// has finished: write files whole and rename them into place.
	Settle time.Duration
	// OnResult, when set, is called after every rebuild that is published
	// or fails (nil on success), and when the files keep changing under
	// rebuilds, so the caller can log and count reloads. A rebuild thrown
	// away because its files changed meanwhile is not reported by itself.
	OnResult func(err error)
	// OnWatchError, when set, receives errors of the file watcher itself
	// (an event queue overflow, say); the reloader rebuilds after one.
	OnWatchError func(err error)
}

// Reloader holds the current value and rebuilds it on demand.
type Reloader[T any] struct {
	cfg     Config[T]
	cur     atomic.Pointer[T]
	trigger chan struct{}

	mu      sync.Mutex
	lastErr error
	lastAt  time.Time

	unsettled int // Run's builds in a row thrown away as unsettled
}

// unsettledError is the error of a build whose files kept changing.
func unsettledError(n int) error {
	return fmt.Errorf("the files changed while they were being read, %d times in a row; the last good value stays in use until they settle", n)
}

// New builds the first value; a failure there is returned, since there is no
// last good value to fall back on.
func New[T any](cfg Config[T]) (*Reloader[T], error) {
	if cfg.Build == nil {
		return nil, errors.New("reload: Build is required")
	}
	if cfg.Debounce <= 0 {
		cfg.Debounce = DefaultDebounce
	}
	if cfg.Settle <= 0 {
		cfg.Settle = cfg.Debounce
	}
	r := &Reloader[T]{cfg: cfg, trigger: make(chan struct{}, 1)}
	v, err := r.buildChecked()
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, errors.New("the first build returned nothing to serve")
	}
	r.cur.Store(v)
	return r, nil
}

// buildChecked builds until the files are the same after the build as
// before it, pausing a debounce period between tries. Without a watcher it
// cannot see a rewrite that leaves size, time and content as they were.
func (r *Reloader[T]) buildChecked() (*T, error) {
	for try := 1; ; try++ {
		before := fingerprint(r.cfg.Dirs)
		v, err := r.cfg.Build()
		if fingerprint(r.cfg.Dirs) == before {
			return v, err
		}
		if try == maxUnsettled {
			return nil, unsettledError(try)
		}
		time.Sleep(r.cfg.Debounce)
	}
}

// Current returns the last successfully built value. It is safe for any
// number of concurrent readers.
func (r *Reloader[T]) Current() *T { return r.cur.Load() }

// LastError returns when the most recent reported rebuild ran (zero before
// the first) and its error (nil after a success); see Config.OnResult.
func (r *Reloader[T]) LastError() (time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastAt, r.lastErr
}

// Trigger asks Run for an immediate rebuild (the SIGHUP path). It never
// blocks; several triggers before the rebuild starts collapse into one.
func (r *Reloader[T]) Trigger() {
	select {
	case r.trigger <- struct{}{}:
	default:
	}
}

// Reload rebuilds now, on the caller's goroutine, and swaps the value on
// success. It is for callers without a watcher that know the files are
// written: it retries a build the files changed under, but unlike Run it
// does not wait for them to stay quiet afterwards.
func (r *Reloader[T]) Reload() error {
	v, err := r.buildChecked()
	return r.finish(v, err)
}

// finish publishes a settled build, or records its error.
func (r *Reloader[T]) finish(v *T, err error) error {
	if err == nil && v == nil {
		err = errors.New("build returned no value")
	}
	if err == nil {
		r.cur.Store(v)
	}
	r.mu.Lock()
	r.lastErr, r.lastAt = err, time.Now()
	r.mu.Unlock()
	if r.cfg.OnResult != nil {
		r.cfg.OnResult(err)
	}
	return err
}

// Run watches the directories and serves triggers until ctx is done. Rebuilds
// happen here, one at a time. It returns an error only when the watcher
// cannot be set up.
func (r *Reloader[T]) Run(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("reload: start watcher: %w", err)
	}
	defer w.Close()
	ws, err := newWatchSet(w, r.cfg.Dirs, r.cfg.OnWatchError)
	if err != nil {
		return err
	}

	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	defer debounce.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.trigger:
			debounce.Stop()
			r.settledReload(ctx, ws, debounce)
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ws.handle(ev) {
				debounce.Reset(r.cfg.Debounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			ws.report(err)
			// Events may have been lost: rebuild rather than miss a change.
			debounce.Reset(r.cfg.Debounce)
		case <-debounce.C:
			r.settledReload(ctx, ws, debounce)
		}
	}
}

// settledReload builds and publishes the result only if the files did not
// change from before the build until a settle period after it: no file
// event arrived and the fingerprint is unchanged. The event check catches
// what the fingerprint cannot, a rewrite that ends with the same content
// within one tick of the file clock. Otherwise the build (value or error)
// is dropped and debounce re-armed to try again once the files are quiet.
func (r *Reloader[T]) settledReload(ctx context.Context, ws *watchSet, debounce *time.Timer) {
	ws.follow() // in case a swap's event was lost
	before := fingerprint(r.cfg.Dirs)
	v, err := r.cfg.Build()
	settled := quietFor(ctx, ws, r.cfg.Settle) && fingerprint(r.cfg.Dirs) == before
	if ctx.Err() != nil {
		return
	}
	if settled {
		r.unsettled = 0
		_ = r.finish(v, err) // recorded in LastError and reported via OnResult
		return
	}
	r.unsettled++
	if r.unsettled == maxUnsettled {
		r.unsettled = 0
		_ = r.finish(nil, unsettledError(maxUnsettled))
	}
	debounce.Reset(r.cfg.Debounce)
}

// quietFor waits d and reports whether no relevant file event and no
// watcher error arrived meanwhile; it stops at the first one.
func quietFor(ctx context.Context, ws *watchSet, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		case ev, ok := <-ws.w.Events:
			if !ok || ws.handle(ev) {
				return false
			}
		case err, ok := <-ws.w.Errors:
			if ok {
				ws.report(err)
			}
			return false
		}
	}
}
