package spool

import (
	"errors"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/gatedhq/gated/internal/testwait"
)

// held is a spool whose appender is stopped inside the commit callback of
// its first commit, so appends made meanwhile wait together, as they do
// behind a slow fsync. The callback runs after the write and outside every
// lock: nothing but the appender is held.
type held struct {
	*Spool
	mu      sync.Mutex
	commits []int // frames per commit
	stopped chan struct{}
	release chan struct{}
}

func holdSpool(t *testing.T, dir string, maxBytes int64) *held {
	t.Helper()
	s, err := Open(dir, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	h := &held{Spool: s, stopped: make(chan struct{}), release: make(chan struct{})}
	s.OnCommit(func(frames int) {
		h.mu.Lock()
		h.commits = append(h.commits, frames)
		first := len(h.commits) == 1
		h.mu.Unlock()
		if first {
			close(h.stopped)
			<-h.release
		}
	})
	return h
}

// stop appends first and returns once the appender is held after writing it.
func (h *held) stop(t *testing.T, first []byte) chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- h.Append(first) }()
	<-h.stopped
	return done
}

// appendAll appends each record from a goroutine of its own, waits until
// all of them wait for the appender, and returns their results in order.
func (h *held) appendAll(t *testing.T, recs [][]byte) []chan error {
	t.Helper()
	out := make([]chan error, len(recs))
	for i, r := range recs {
		out[i] = make(chan error, 1)
		go func() { out[i] <- h.Append(r) }()
	}
	testwait.Until(t, "every append to wait for the appender", func() bool {
		h.pendMu.Lock()
		defer h.pendMu.Unlock()
		return len(h.pending) == len(recs)
	})
	return out
}

func (h *held) commitSizes() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.commits)
}

// Appends that wait while the appender is busy share one write and one
// fsync, and each caller returns only once that fsync is done.
func TestWaitingAppendsShareOneCommit(t *testing.T) {
	t.Parallel()
	h := holdSpool(t, t.TempDir(), 0)
	defer h.Close()
	first := h.stop(t, payloads(0, 1)[0])
	results := h.appendAll(t, payloads(1, 40))
	for i, r := range results {
		select {
		case err := <-r:
			t.Fatalf("append %d returned (%v) before its records were written", i, err)
		default:
		}
	}
	close(h.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if err := <-r; err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	if got := h.commitSizes(); !slices.Equal(got, []int{1, 40}) {
		t.Fatalf("records per commit %v, want [1 40]: the 40 waiting appends in one", got)
	}
	got := readAll(t, h.Spool)
	if len(got) != 41 {
		t.Fatalf("%d records in the spool, want 41", len(got))
	}
	slices.SortFunc(got, func(a, b []byte) int { return slices.Compare(a, b) })
	if want := payloads(0, 41); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("spool holds\n%q\nwant\n%q", got, want)
	}
}

// A group commit is bounded: appends beyond groupBytes wait for the next.
func TestGroupCommitIsBounded(t *testing.T) {
	t.Parallel()
	h := holdSpool(t, t.TempDir(), 0)
	defer h.Close()
	first := h.stop(t, payloads(0, 1)[0])
	half := make([][]byte, 3) // frames of groupBytes/2: two fit one commit
	for i := range half {
		half[i] = make([]byte, groupBytes/2-headerSize)
	}
	results := h.appendAll(t, half)
	close(h.release)
	for _, r := range append(results, first) {
		if err := <-r; err != nil {
			t.Fatal(err)
		}
	}
	if got := h.commitSizes(); !slices.Equal(got, []int{1, 2, 1}) {
		t.Fatalf("records per commit %v, want [1 2 1]", got)
	}
}

// The size limit refuses exactly the appends that do not fit, in the order
// they came; the others are written.
func TestFullFailsOnlyTheAppendsThatDoNotFit(t *testing.T) {
	t.Parallel()
	frame := FrameSize(len(payloads(0, 1)[0]))
	h := holdSpool(t, t.TempDir(), 6*frame) // the first, and five of ten
	defer h.Close()
	first := h.stop(t, payloads(0, 1)[0])
	recs := payloads(1, 10)
	results := h.appendAll(t, recs)
	close(h.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	written, full := 0, 0
	for i, r := range results {
		switch err := <-r; {
		case err == nil:
			written++
		case errors.Is(err, ErrFull):
			full++
		default:
			t.Fatalf("append %d: %v, want nil or ErrFull", i, err)
		}
	}
	if written != 5 || full != 5 {
		t.Fatalf("%d written, %d refused as full; want 5 and 5", written, full)
	}
	if got := h.commitSizes(); !slices.Equal(got, []int{1, 5}) {
		t.Fatalf("records per commit %v, want [1 5]", got)
	}
	if !h.Healthy() || h.Size() != 6*frame {
		t.Fatalf("healthy %v, size %d: want healthy (full is not a disk fault) and %d bytes", h.Healthy(), h.Size(), 6*frame)
	}
}

// A write that fails fails every append in its commit, and no other: the
// commit before it and the append after it are written.
func TestDiskErrorFailsExactlyItsCommit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := holdSpool(t, dir, 0)
	defer h.Close()
	first := h.stop(t, payloads(0, 1)[0])
	// The next commit must create a segment, in a directory that is now a
	// regular file (as root no permission stops a write: ENOTDIR does).
	if _, err := h.Sealed(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	results := h.appendAll(t, payloads(1, 10))
	close(h.release)
	if err := <-first; err != nil {
		t.Fatalf("the commit before the fault: %v", err)
	}
	for i, r := range results {
		if err := <-r; err == nil || errors.Is(err, ErrFull) {
			t.Fatalf("append %d in the failed commit: %v, want the disk error", i, err)
		}
	}
	if h.Healthy() {
		t.Fatal("healthy after a failed write")
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir+".away", dir); err != nil {
		t.Fatal(err)
	}
	if err := h.Append(payloads(11, 1)[0]); err != nil {
		t.Fatalf("append once the disk is back: %v", err)
	}
	if want := 2 * FrameSize(len(payloads(0, 1)[0])); h.Size() != want {
		t.Fatalf("size %d, want %d: the failed commit's bytes must not count", h.Size(), want)
	}
	got := readAll(t, h.Spool)
	if want := [][]byte{payloads(0, 1)[0], payloads(11, 1)[0]}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("spool holds %q, want only the records of the commits that succeeded %q", got, want)
	}
}

// Close writes the appends it finds waiting and refuses later ones.
func TestCloseWritesWaitingAppends(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := holdSpool(t, dir, 0)
	first := h.stop(t, payloads(0, 1)[0])
	results := h.appendAll(t, payloads(1, 5))
	closed := make(chan error, 1)
	go func() { closed <- h.Close() }()
	testwait.Until(t, "Close to stop taking appends", func() bool {
		h.pendMu.Lock()
		defer h.pendMu.Unlock()
		return h.stopping
	})
	if err := h.Append(payloads(9, 1)[0]); !errors.Is(err, ErrClosed) {
		t.Fatalf("append while closing: %v, want ErrClosed", err)
	}
	close(h.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if err := <-r; err != nil {
			t.Fatalf("append %d waiting when Close began: %v", i, err)
		}
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := readAll(t, s); len(got) != 6 {
		t.Fatalf("%d records after reopening, want 6", len(got))
	}
}
