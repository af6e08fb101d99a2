package reload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/testwait"
)

// snapshot is built from a file holding "N" and repeats N in every slot, so
// a reader that ever sees mixed slots has seen a half-built value.
type snapshot struct{ slots [64]int }

func (s *snapshot) consistent() bool {
	for _, v := range s.slots {
		if v != s.slots[0] {
			return false
		}
	}
	return true
}

// buildFrom reads the first line of each named file below dir and sums the
// numbers; any non-number is a build error.
func buildFrom(dir string, names ...string) func() (*snapshot, error) {
	return func() (*snapshot, error) {
		total := 0
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				return nil, err
			}
			v, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", n, err)
			}
			total += v
		}
		s := &snapshot{}
		for i := range s.slots {
			s.slots[i] = total
		}
		return s, nil
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func start[T any](t *testing.T, r *Reloader[T]) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// ready waits until Run has its watches in place: a trigger is only served
// by the loop that runs after the watches are added.
func ready[T any](t *testing.T, r *Reloader[T]) {
	t.Helper()
	before, _ := r.LastError()
	r.Trigger()
	testwait.Until(t, "first triggered reload", func() bool { at, _ := r.LastError(); return at.After(before) })
}

func value(r *Reloader[snapshot]) int { return r.Current().slots[0] }

func TestNewFailsWithoutAGoodFirstValue(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "v"), "not a number")
	_, err := New(Config[snapshot]{Build: buildFrom(dir, "v")})
	if err == nil || !strings.Contains(err.Error(), "v: strconv.Atoi") {
		t.Fatalf("New = %v, want the first build's own error", err)
	}
	if _, err := New(Config[snapshot]{}); err == nil {
		t.Fatal("New without Build succeeded")
	}
}

func TestReloadUnderConcurrentReaders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "v"), "1")
	var results sync.Map // attempt error strings seen by OnResult
	var attempts atomic.Int64
	r, err := New(Config[snapshot]{
		Build:    buildFrom(dir, "v"),
		Dirs:     []string{dir},
		Debounce: 20 * time.Millisecond,
		OnResult: func(err error) {
			attempts.Add(1)
			if err != nil {
				results.Store(err.Error(), true)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	start(t, r)
	ready(t, r)

	stop := make(chan struct{})
	var readers sync.WaitGroup
	var torn atomic.Int64
	for range 8 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if !r.Current().consistent() {
					torn.Add(1)
				}
				runtime.Gosched() // two cores: leave the reloader room to run
			}
		}()
	}

	for i := 2; i <= 6; i++ {
		write(t, filepath.Join(dir, "v"), strconv.Itoa(i))
		testwait.Until(t, fmt.Sprintf("value %d", i), func() bool { return value(r) == i })
	}

	// A broken change keeps the last good value and is reported.
	before := attempts.Load()
	write(t, filepath.Join(dir, "v"), "broken")
	testwait.Until(t, "the failed rebuild", func() bool { _, err := r.LastError(); return err != nil })
	if got := value(r); got != 6 {
		t.Fatalf("after a broken change Current = %d, want the last good 6", got)
	}
	at, err := r.LastError()
	if !strings.Contains(err.Error(), "invalid syntax") || at.IsZero() {
		t.Fatalf("LastError = %v at %v, want the parse error with its time", err, at)
	}
	// LastError is set just before OnResult runs: wait for the callback.
	testwait.Until(t, "OnResult with the build error", func() bool {
		reported := false
		results.Range(func(k, _ any) bool { reported = strings.Contains(k.(string), "invalid syntax"); return !reported })
		return reported && attempts.Load() > before
	})

	// Fixing it recovers and clears the error.
	write(t, filepath.Join(dir, "v"), "7")
	testwait.Until(t, "value 7", func() bool { return value(r) == 7 })
	if _, err := r.LastError(); err != nil {
		t.Fatalf("LastError after recovery = %v", err)
	}

	close(stop)
	readers.Wait()
	if n := torn.Load(); n != 0 {
		t.Fatalf("readers saw %d half-built values", n)
	}
}

func TestTriggerRebuildsWithoutFileEvents(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	r, err := New(Config[snapshot]{Build: func() (*snapshot, error) {
		s := &snapshot{}
		s.slots[0] = int(n.Add(1))
		return s, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	start(t, r)
	r.Trigger()
	testwait.Until(t, "the triggered rebuild", func() bool { return r.Current().slots[0] >= 2 })
}

func TestReloadRejectsANilValue(t *testing.T) {
	t.Parallel()
	calls := 0
	r, err := New(Config[snapshot]{Build: func() (*snapshot, error) {
		calls++
		if calls > 1 {
			return nil, nil
		}
		return &snapshot{}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(); err == nil {
		t.Fatal("Reload accepted a nil value")
	}
	if r.Current() == nil {
		t.Fatal("a nil build replaced the last good value")
	}
}

func TestNewSubdirectoriesAreWatched(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "v"), "1")
	r, err := New(Config[snapshot]{
		Build: func() (*snapshot, error) {
			names := []string{"v"}
			if _, err := os.Stat(filepath.Join(dir, "a", "b", "w")); err == nil {
				names = append(names, filepath.Join("a", "b", "w"))
			}
			return buildFrom(dir, names...)()
		},
		Dirs:     []string{dir},
		Debounce: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	start(t, r)
	ready(t, r)
	write(t, filepath.Join(dir, "a", "b", "w"), "10")
	testwait.Until(t, "the new file", func() bool { return value(r) == 11 })
	// The nested directory is now watched: a later change there alone reloads.
	write(t, filepath.Join(dir, "a", "b", "w"), "20")
	testwait.Until(t, "the changed nested file", func() bool { return value(r) == 21 })
}

// TestConfigMapSymlinkSwap replays how the kubelet updates a mounted
// ConfigMap: the data lives in a timestamped directory, "..data" points at
// it, the visible files point into "..data", and an update swaps "..data"
// by renaming a fresh symlink over it.
func TestConfigMapSymlinkSwap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "..2026_01_01_v1", "v"), "1")
	must(t, os.Symlink("..2026_01_01_v1", filepath.Join(dir, "..data")))
	must(t, os.Symlink(filepath.Join("..data", "v"), filepath.Join(dir, "v")))

	r, err := New(Config[snapshot]{Build: buildFrom(dir, "v"), Dirs: []string{dir}, Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if value(r) != 1 {
		t.Fatalf("initial value %d", value(r))
	}
	start(t, r)
	ready(t, r)

	write(t, filepath.Join(dir, "..2026_01_02_v2", "v"), "2")
	must(t, os.Symlink("..2026_01_02_v2", filepath.Join(dir, "..data_tmp")))
	must(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	must(t, os.RemoveAll(filepath.Join(dir, "..2026_01_01_v1")))
	testwait.Until(t, "the swapped value", func() bool { return value(r) == 2 })
}

func TestRunFailsOnAMissingDirectory(t *testing.T) {
	t.Parallel()
	r, err := New(Config[snapshot]{
		Build: func() (*snapshot, error) { return &snapshot{}, nil },
		Dirs:  []string{filepath.Join(t.TempDir(), "missing")},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = r.Run(context.Background())
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Run = %v, want a not-exist error", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestSymlinkedDirectoryIsWatched(t *testing.T) {
	t.Parallel()
	real := t.TempDir()
	write(t, filepath.Join(real, "v"), "1")
	link := filepath.Join(t.TempDir(), "link")
	must(t, os.Symlink(real, link))
	r, err := New(Config[snapshot]{Build: buildFrom(link, "v"), Dirs: []string{link}, Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start(t, r)
	ready(t, r)
	write(t, filepath.Join(real, "v"), "5")
	testwait.Until(t, "the change behind the symlink", func() bool { return value(r) == 5 })
}
