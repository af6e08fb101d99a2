// Package reload keeps an immutable value (a catalog, a compiled policy
// bundle) up to date with the files it was built from. A rebuild runs off the
// hot path; readers only ever load an atomic pointer, so they see either the
// old value or the new one, never a half-built one. A failed rebuild keeps the
// last good value.
package reload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long the watcher waits after the last file event
// before rebuilding: editors and ConfigMap updates touch several files in a
// burst, and one rebuild per burst is enough.
const DefaultDebounce = 250 * time.Millisecond

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
	// OnResult, when set, is called after every rebuild attempt (nil on
	// success) so the caller can log and count reloads.
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
	v, err := cfg.Build()
	if err != nil {
		return nil, fmt.Errorf("initial build: %w", err)
	}
	if v == nil {
		return nil, errors.New("initial build: returned no value")
	}
	r := &Reloader[T]{cfg: cfg, trigger: make(chan struct{}, 1)}
	r.cur.Store(v)
	return r, nil
}

// Current returns the last successfully built value. It is safe for any
// number of concurrent readers.
func (r *Reloader[T]) Current() *T { return r.cur.Load() }

// LastError returns when the most recent rebuild attempt ran (zero before
// the first rebuild) and its error (nil after a success).
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
// success. Run uses it; it is exported for callers without a watcher.
func (r *Reloader[T]) Reload() error {
	v, err := r.cfg.Build()
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
	for _, d := range r.cfg.Dirs {
		if err := watchTree(w, d); err != nil {
			return err
		}
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
			_ = r.Reload() // recorded in LastError and reported via OnResult
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Has(fsnotify.Create) {
				r.watchNewDir(w, ev.Name)
			}
			debounce.Reset(r.cfg.Debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if r.cfg.OnWatchError != nil {
				r.cfg.OnWatchError(err)
			}
			// Events may have been lost: rebuild rather than miss a change.
			debounce.Reset(r.cfg.Debounce)
		case <-debounce.C:
			_ = r.Reload()
		}
	}
}

// watchNewDir starts watching a directory created after Run began (and
// anything already inside it, since files may land before the watch does).
func (r *Reloader[T]) watchNewDir(w *fsnotify.Watcher, path string) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() || skipDir(filepath.Base(path)) {
		return
	}
	if err := watchTree(w, path); err != nil && r.cfg.OnWatchError != nil {
		r.cfg.OnWatchError(err)
	}
}

// watchTree adds root and every directory below it to the watcher. A root
// given as a symlink is resolved first: WalkDir does not descend into one.
func watchTree(w *fsnotify.Watcher, root string) error {
	resolved, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("reload: watch %s: %w", root, err)
	}
	err = filepath.WalkDir(resolved, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != resolved && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		return w.Add(p)
	})
	if err != nil {
		return fmt.Errorf("reload: watch %s: %w", root, err)
	}
	return nil
}

// skipDir leaves out Kubernetes' atomic-writer internals ("..data",
// "..2026_11_20_…"): their swap shows up as an event in the parent, which is
// watched, and watching the timestamped copies would only add noise.
func skipDir(name string) bool { return strings.HasPrefix(name, "..") }
