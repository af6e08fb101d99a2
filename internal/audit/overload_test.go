package audit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/testwait"
)

// gated hands its Prometheus metrics to the recorder, which reports
// backpressure only to a Metrics that has it.
var _ interface {
	audit.Metrics
	audit.Backpressure
} = (*metrics.Metrics)(nil)

// backpressureMetrics is countingMetrics that also counts backpressure.
type backpressureMetrics struct {
	*countingMetrics
	capacity     int
	queueFull    int
	spoolBatched int // records the spool's commits stored
}

func newBackpressure() *backpressureMetrics {
	return &backpressureMetrics{countingMetrics: newCounting()}
}

func (m *backpressureMetrics) QueueCapacity(n int) {
	m.mu.Lock()
	m.capacity = n
	m.mu.Unlock()
}

func (m *backpressureMetrics) QueueFull(sink string) {
	m.mu.Lock()
	m.queueFull++
	m.mu.Unlock()
}

func (m *backpressureMetrics) SpoolBatch(records int) {
	m.mu.Lock()
	m.spoolBatched += records
	m.mu.Unlock()
}

func (m *backpressureMetrics) full() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.queueFull
}

func (m *backpressureMetrics) snapshot() (capacity, queueFull, spoolBatched int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.capacity, m.queueFull, m.spoolBatched
}

// recordConcurrently records n records, each from a goroutine of its own,
// and returns the answers by decision id once all are in.
func recordConcurrently(t *testing.T, r audit.Recorder, n int) map[string]audit.Result {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	got := map[string]audit.Result{}
	for range n {
		wg.Go(func() {
			rec := audittest.Record(int(recordSeq.Add(1)), time.Now())
			res, err := r.Record(context.Background(), rec)
			if err != nil {
				t.Errorf("record %s: %v", rec.DecisionID, err)
				return
			}
			mu.Lock()
			got[rec.DecisionID] = res
			mu.Unlock()
		})
	}
	wg.Wait()
	return got
}

// With the writer stuck in a database write, the queue is full: records
// go to the spool, callers sharing its fsyncs, and each is stored once
// when the database answers again. The backpressure is counted.
func TestQueueFullSpoolsWhileTheWriterIsStuck(t *testing.T) {
	t.Parallel()
	_, u := migratedDB(t)
	p := newProxy(t, upstream(t))
	m := newBackpressure()
	cfg := testConfig(p.URL(t, u), t)
	// The writer takes one record per write, which hangs until Restore (the
	// timeout only guards the test); the queue holds one more.
	cfg.QueueSize, cfg.BatchSize, cfg.WriteTimeout, cfg.Metrics = 1, 1, time.Minute, m
	r := open(t, cfg)
	p.Stall()
	const n = 300
	got := recordConcurrently(t, r, n)
	spooled := 0
	for id, res := range got {
		switch res.Status {
		case audit.StatusSpooled:
			spooled++
		case audit.StatusQueued:
		default:
			t.Errorf("record %s: %+v, want queued or spooled", id, res)
		}
	}
	// At most two are not spooled: the one the writer is stuck with and
	// the one that fills the queue.
	capacity, full, batched := m.snapshot()
	if capacity != 1 || spooled < n-2 || full != spooled || batched != spooled {
		t.Fatalf("capacity %d, %d spooled, queue full %d times, spool commits stored %d records: want 1, at least %d, and the spooled count thrice",
			capacity, spooled, full, batched, n-2)
	}
	p.Restore()
	waitSpoolEmpty(t, r)
	closeRec(t, r)
	ids := make([]string, 0, len(got))
	for id := range got {
		ids = append(ids, id)
	}
	assertStoredOnce(t, u, ids)
}

// A file sink whose writer is stuck (a pipe nobody reads, as a disk that
// stopped taking writes): records that find the queue full join the
// writer's next batch and their callers wait for it, rather than each
// wait for the file's lock to write alone. Every record is written once.
func TestFileSinkQueueFullJoinsTheWritersBatch(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.pipe")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	pipe, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pipe.Close()
	m := newBackpressure()
	// One record per write: the writer blocks once the pipe's buffer
	// (64 KiB) is full, well before 400 records of about 1 KiB.
	r := openFile(t, path, audit.Config{QueueSize: 1, BatchSize: 1, Metrics: m})
	var got map[string]audit.Result
	answered := make(chan struct{})
	go func() {
		got = recordConcurrently(t, r, 400)
		close(answered)
	}()
	testwait.Until(t, "records to find the queue full", func() bool { return m.full() >= 10 })
	// Those wait for the writer on a channel; none waits for the sink's
	// lock, which the stuck writer holds, to write its record itself.
	stacks := make([]byte, 1<<22)
	for g := range strings.SplitSeq(string(stacks[:runtime.Stack(stacks, true)]), "\n\n") {
		if strings.Contains(g, "(*recorder).Record") && strings.Contains(g, "file.(*Sink).Write") {
			t.Errorf("a caller writes to the file sink itself, behind the stuck writer:\n%s", g)
		}
	}
	lines := make(chan map[string]int, 1)
	go func() {
		seen := map[string]int{}
		sc := bufio.NewScanner(pipe)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var f audit.Frame
			if json.Unmarshal(sc.Bytes(), &f) == nil && f.Record != nil {
				seen[f.DecisionID]++
			}
		}
		lines <- seen
	}()
	<-answered
	written := 0
	for id, res := range got {
		switch res.Status {
		case audit.StatusWritten:
			written++
		case audit.StatusQueued:
		default:
			t.Errorf("record %s: %+v, want queued or written", id, res)
		}
	}
	if written == 0 || written != m.full() {
		t.Errorf("%d records answered written, queue full %d times: want each record that found it full written", written, m.full())
	}
	// The file sink fsyncs on close, which a pipe does not support.
	if err := r.Close(context.Background()); err != nil && !errors.Is(err, syscall.EINVAL) {
		t.Fatal(err)
	}
	seen := <-lines
	if len(seen) != len(got) {
		t.Fatalf("%d records in the file, want %d", len(seen), len(got))
	}
	for id := range got {
		if seen[id] != 1 {
			t.Fatalf("record %s written %d times, want once", id, seen[id])
		}
	}
}
