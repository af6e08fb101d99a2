package reload

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/testwait"
)

// published records every value a reloader published, from OnResult (which
// runs on the reloader's goroutine right after the swap).
type published struct {
	mu     sync.Mutex
	values []int
	errs   []string
}

func (p *published) onResult(r **Reloader[snapshot]) func(error) {
	return func(err error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			p.errs = append(p.errs, err.Error())
			return
		}
		p.values = append(p.values, (*r).Current().slots[0])
	}
}

func (p *published) snapshot() ([]int, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.values), slices.Clone(p.errs)
}

// TestRewriteDuringBuildIsNotPublished has a writer truncate the file and
// write it back in two pieces while a build reads it: the build sees only
// the first piece, "1", a valid but wrong value. The file ends as it began,
// "12", possibly within one tick of the file clock, so only the file events
// seen during the build can tell. Before the fix the 1 was published.
func TestRewriteDuringBuildIsNotPublished(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "v")
	write(t, path, "12")
	var armed atomic.Bool
	var r *Reloader[snapshot]
	var got published
	r, err := New(Config[snapshot]{
		Build: func() (*snapshot, error) {
			if !armed.CompareAndSwap(true, false) {
				return buildFrom(dir, "v")()
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			if _, err := f.WriteString("1"); err != nil {
				return nil, err
			}
			s, err := buildFrom(dir, "v")()
			if _, werr := f.WriteString("2"); werr != nil {
				return nil, werr
			}
			return s, err
		},
		Dirs:     []string{dir},
		Debounce: 20 * time.Millisecond,
		Settle:   100 * time.Millisecond, // time for the events to arrive on a busy machine
		OnResult: got.onResult(&r),
	})
	if err != nil {
		t.Fatal(err)
	}
	start(t, r)
	ready(t, r)

	armed.Store(true)
	r.Trigger()
	testwait.Until(t, "the rebuild after the rewrite", func() bool {
		values, _ := got.snapshot()
		return !armed.Load() && len(values) >= 2
	})
	values, errs := got.snapshot()
	if slices.Contains(values, 1) || value(r) != 12 {
		t.Fatalf("published %v (now %d), want only 12: a build that read a half-written file was published", values, value(r))
	}
	if len(errs) != 0 {
		t.Fatalf("reload errors %v", errs)
	}
}

// TestNewRetriesABuildTheFilesChangedUnder: the first build reads version 1
// and the file changes before it ends; New must not start on version 1.
func TestNewRetriesABuildTheFilesChangedUnder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "v"), "1")
	builds := 0
	r, err := New(Config[snapshot]{
		Build: func() (*snapshot, error) {
			builds++
			s, err := buildFrom(dir, "v")()
			if builds == 1 {
				if werr := os.WriteFile(filepath.Join(dir, "v"), []byte("22"), 0o644); werr != nil {
					return nil, werr
				}
			}
			return s, err
		},
		Dirs:     []string{dir},
		Debounce: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if value(r) != 22 || builds != 2 {
		t.Fatalf("New started on %d after %d builds, want 22 after 2", value(r), builds)
	}
}

// TestFilesThatKeepChangingAreReported: when every build finds the files
// changed under it, nothing is published, the last good value stays, and
// after maxUnsettled tries in a row the reloader says why; once the files
// settle the new value is published.
func TestFilesThatKeepChangingAreReported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "v")
	write(t, path, "1")
	var churn atomic.Bool
	var n atomic.Int64
	var r *Reloader[snapshot]
	var got published
	r, err := New(Config[snapshot]{
		Build: func() (*snapshot, error) {
			s, err := buildFrom(dir, "v")()
			if churn.Load() {
				// Another writer, still at work: same value, new bytes.
				if werr := os.WriteFile(path, []byte(strings.Repeat("0", int(n.Add(1)%8))+"5"), 0o644); werr != nil {
					return nil, werr
				}
			}
			return s, err
		},
		Dirs:     []string{dir},
		Debounce: 10 * time.Millisecond,
		OnResult: got.onResult(&r),
	})
	if err != nil {
		t.Fatal(err)
	}
	start(t, r)
	ready(t, r)

	churn.Store(true)
	write(t, path, "5")
	testwait.Until(t, "the report of files that keep changing", func() bool {
		_, errs := got.snapshot()
		return len(errs) > 0
	})
	_, errs := got.snapshot()
	if !strings.Contains(errs[0], "changed while they were being read") {
		t.Fatalf("reload error %q, want one saying the files kept changing", errs[0])
	}
	if values, _ := got.snapshot(); len(values) != 1 || value(r) != 1 {
		t.Fatalf("published %v (now %d) while the files kept changing, want only the first 1", values, value(r))
	}

	churn.Store(false)
	testwait.Until(t, "the settled value", func() bool { return value(r) == 5 })
	if _, err := r.LastError(); err != nil {
		t.Fatalf("LastError after the files settled = %v", err)
	}
}

// TestReloadGivesUpOnFilesThatKeepChanging: Reload, without a watcher,
// retries a bounded number of times and then keeps the last good value.
func TestReloadGivesUpOnFilesThatKeepChanging(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "v")
	write(t, path, "1")
	var churn bool
	builds := 0
	r, err := New(Config[snapshot]{
		Build: func() (*snapshot, error) {
			builds++
			s, err := buildFrom(dir, "v")()
			if churn {
				if werr := os.WriteFile(path, []byte(strings.Repeat("0", builds%8)+"3"), 0o644); werr != nil {
					return nil, werr
				}
			}
			return s, err
		},
		Dirs:     []string{dir},
		Debounce: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	churn, builds = true, 0
	err = r.Reload()
	if err == nil || !strings.Contains(err.Error(), "changed while they were being read") {
		t.Fatalf("Reload = %v, want the files-kept-changing error", err)
	}
	if builds != maxUnsettled || value(r) != 1 {
		t.Fatalf("%d builds, value %d; want %d builds and the last good 1", builds, value(r), maxUnsettled)
	}
}

// TestSymlinkedDirectorySwapsAreFollowed points the reloader at a symlink
// that a deployment tool (git-sync, a ConfigMap's "..data") swaps by
// renaming a new link over it. The watches must move to each new target:
// before the fix they stayed on the first one, so after a swap a change
// inside the new target was never seen.
func TestSymlinkedDirectorySwapsAreFollowed(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	link := filepath.Join(base, "current")
	swap := func(target string) {
		tmp := filepath.Join(base, "current.tmp")
		must(t, os.Symlink(target, tmp))
		must(t, os.Rename(tmp, link))
	}
	write(t, filepath.Join(base, "rev1", "v"), "1")
	swap("rev1")
	r, err := New(Config[snapshot]{Build: buildFrom(link, "v"), Dirs: []string{link}, Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start(t, r)
	ready(t, r)

	for rev := 2; rev <= 3; rev++ {
		name := "rev" + strconv.Itoa(rev)
		write(t, filepath.Join(base, name, "v"), strconv.Itoa(rev))
		swap(name)
		must(t, os.RemoveAll(filepath.Join(base, "rev"+strconv.Itoa(rev-1))))
		testwait.Until(t, "the swapped value", func() bool { return value(r) == rev })
		// A change inside the new target, with no swap: only a watch that
		// followed the link sees it.
		write(t, filepath.Join(base, name, "v"), strconv.Itoa(rev*10))
		testwait.Until(t, "the change inside the new target", func() bool { return value(r) == rev*10 })
	}
}
