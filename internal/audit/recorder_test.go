package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testwait"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/audit/postgres"
	"github.com/gatedhq/gated/internal/audit/spool"
	"github.com/gatedhq/gated/internal/pgtest"
)

// countingMetrics records what the recorder reports.
type countingMetrics struct {
	mu       sync.Mutex
	counts   map[string]int
	minSpool int64 // the lowest spool gauge reported
}

func newCounting() *countingMetrics { return &countingMetrics{counts: map[string]int{}} }

func (m *countingMetrics) QueueDepth(int) {}
func (m *countingMetrics) SpoolBytes(n int64) {
	m.mu.Lock()
	m.minSpool = min(m.minSpool, n)
	m.mu.Unlock()
}
func (m *countingMetrics) Recorded(sink, outcome string) {
	m.mu.Lock()
	m.counts[sink+"/"+outcome]++
	m.mu.Unlock()
}
func (m *countingMetrics) WriteError(sink string) {
	m.mu.Lock()
	m.counts["error/"+sink]++
	m.mu.Unlock()
}
func (m *countingMetrics) get(k string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[k]
}

// assertStoredOnce proves every id is stored exactly once and nothing else is.
func assertStoredOnce(t *testing.T, dbURL string, ids []string) {
	t.Helper()
	n := pgtest.QueryInt(t, dbURL, "SELECT count(*) FROM audit_decisions")
	distinct := pgtest.QueryInt(t, dbURL, "SELECT count(DISTINCT decision_id) FROM audit_decisions")
	found := pgtest.QueryInt(t, dbURL, "SELECT count(*) FROM audit_decisions WHERE decision_id = ANY($1)", ids)
	if n != len(ids) || distinct != len(ids) || found != len(ids) {
		t.Fatalf("stored %d rows (%d distinct, %d of ours), want each of %d exactly once", n, distinct, found, len(ids))
	}
}

func TestAsyncWritesEveryRecord(t *testing.T) {
	t.Parallel()
	_, u := migratedDB(t)
	m := newCounting()
	cfg := testConfig(u, t)
	cfg.Metrics = m
	r := open(t, cfg)
	var ids []string
	now := time.Now()
	for i := range 1000 {
		rec := audittest.Record(i, now)
		res, err := r.Record(context.Background(), rec)
		if err != nil || res != (audit.Result{audit.SinkPostgres, audit.StatusQueued}) {
			t.Fatalf("record %d: %+v %v", i, res, err)
		}
		ids = append(ids, rec.DecisionID)
	}
	closeRec(t, r)
	assertStoredOnce(t, u, ids)
	if m.get("postgres/written") != 1000 {
		t.Fatalf("metrics: %v", m.counts)
	}
	if r.Ready() {
		t.Fatal("ready after close")
	}
	if _, err := r.Record(context.Background(), audittest.Record(1, now)); !errors.Is(err, audit.ErrUnavailable) {
		t.Fatalf("record after close: %v", err)
	}
}

func TestSyncIsCommittedOnReturn(t *testing.T) {
	t.Parallel()
	_, u := migratedDB(t)
	cfg := testConfig(u, t)
	cfg.Durability = audit.Sync
	r := open(t, cfg)
	defer closeRec(t, r)
	now := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ids []string
	for g := range 20 {
		wg.Go(func() {
			for i := range 25 {
				rec := audittest.Record(g*1000+i, now)
				res, err := r.Record(context.Background(), rec)
				if err != nil || res != (audit.Result{audit.SinkPostgres, audit.StatusWritten}) {
					t.Errorf("record: %+v %v", res, err)
					return
				}
				mu.Lock()
				ids = append(ids, rec.DecisionID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// No Close yet: "written" must already mean committed.
	assertStoredOnce(t, u, ids)
}

// recordSeq numbers the records tests send concurrently, so two senders
// never share an id.
var recordSeq atomic.Int64

// sendDuring records from several goroutines until stop closes, and returns
// the ids of every record the recorder accepted.
func sendDuring(t *testing.T, r audit.Recorder, stop <-chan struct{}) []string {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ids []string
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				rec := audittest.Record(int(recordSeq.Add(1)), time.Now())
				if _, err := r.Record(context.Background(), rec); err != nil {
					t.Errorf("record during outage: %v", err)
					return
				}
				mu.Lock()
				ids = append(ids, rec.DecisionID)
				mu.Unlock()
				time.Sleep(200 * time.Microsecond)
			}
		})
	}
	wg.Wait()
	return ids
}

func TestProxyCutMidLoad(t *testing.T) {
	t.Parallel()
	for _, mode := range []audit.Durability{audit.Async, audit.Sync} {
		t.Run(mode.String(), func(t *testing.T) {
			_, u := migratedDB(t)
			p := newProxy(t, upstream(t))
			m := newCounting()
			cfg := testConfig(p.URL(t, u), t)
			cfg.Durability, cfg.Metrics = mode, m
			r := open(t, cfg)
			stop := make(chan struct{})
			go func() {
				time.Sleep(300 * time.Millisecond)
				p.Cut()
				time.Sleep(600 * time.Millisecond)
				p.Restore()
				time.Sleep(400 * time.Millisecond)
				close(stop)
			}()
			ids := sendDuring(t, r, stop)
			waitSpoolEmpty(t, r)
			closeRec(t, r)
			if m.get("postgres/spooled") == 0 || m.get("postgres/replayed") == 0 {
				t.Fatalf("the outage never reached the spool: %v", m.counts)
			}
			assertStoredOnce(t, u, ids)
			assertChainHolds(t, u)
		})
	}
}

func TestDatabaseRefusesConnectionsMidLoad(t *testing.T) {
	t.Parallel()
	name, u := migratedDB(t)
	m := newCounting()
	cfg := testConfig(u, t)
	cfg.Durability, cfg.Metrics = audit.Sync, m
	r := open(t, cfg)
	stop := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		pgtest.Exec(t, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS false")
		pgtest.Exec(t, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name)
		time.Sleep(600 * time.Millisecond)
		pgtest.Exec(t, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS true")
		time.Sleep(400 * time.Millisecond)
		close(stop)
	}()
	ids := sendDuring(t, r, stop)
	waitSpoolEmpty(t, r)
	closeRec(t, r)
	if m.get("postgres/spooled") == 0 {
		t.Fatalf("the outage never reached the spool: %v", m.counts)
	}
	assertStoredOnce(t, u, ids)
	assertChainHolds(t, u)
}

// A process that died with records in its spool (some of them already
// committed before the crash, one torn half-way) hands them over to the
// next process on the same spool.
func TestSpoolReplayedByNextProcess(t *testing.T) {
	t.Parallel()
	_, u := migratedDB(t)
	dir := filepath.Join(t.TempDir(), "spool")
	now := time.Now()
	sp, err := spool.Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 50 {
		rec := audittest.Record(i, now)
		b, _ := json.Marshal(rec)
		if err := sp.Append(b); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.DecisionID)
	}
	sp.Close()
	// committed before the crash, but its segment was never removed
	s := postgres.New(pgtest.DB(t, u), postgres.Config{})
	if err := s.Write(context.Background(), audit.Batch{Records: []*audit.Record{audittest.Record(3, now), audittest.Record(4, now)}}); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.log"))
	f, _ := os.OpenFile(segs[len(segs)-1], os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{200, 0, 0, 0, 1, 2, 3, 4, '{'}) // a torn frame
	f.Close()

	cfg := testConfig(u, t)
	cfg.SpoolDir = dir
	r := open(t, cfg)
	waitSpoolEmpty(t, r)
	closeRec(t, r)
	assertStoredOnce(t, u, ids)
}

func TestCloseDrainsIntoSpoolWhenDatabaseIsDown(t *testing.T) {
	t.Parallel()
	cfg := testConfig("postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=1", t)
	cfg.FlushInterval = time.Hour // nothing is flushed before Close
	cfg.WriteTimeout = 500 * time.Millisecond
	r := open(t, cfg)
	for i := range 300 {
		if _, err := r.Record(context.Background(), audittest.Record(i, time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	closeRec(t, r)
	n, _, err := spoolRecords(t, cfg.SpoolDir)
	if err != nil {
		t.Fatal(err)
	}
	if n != 300 {
		t.Fatalf("%d records in the spool after close, want 300", n)
	}
}

func TestFailModesWhenNothingCanStore(t *testing.T) {
	t.Parallel()
	down := "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=1"
	for _, mode := range []audit.Durability{audit.Async, audit.Sync} {
		t.Run(mode.String(), func(t *testing.T) {
			one, _ := json.Marshal(audittest.Record(0, time.Now()))
			m := newCounting()
			cfg := testConfig(down, t)
			cfg.Durability, cfg.Metrics = mode, m
			cfg.SpoolMaxBytes = int64(3 * (len(one) + 8)) // room for three records
			cfg.QueueSize, cfg.FlushInterval = 1, time.Millisecond
			r := open(t, cfg)
			defer closeRec(t, r)
			var refused error
			for i := range 50 {
				_, err := r.Record(context.Background(), audittest.Record(i, time.Now()))
				if err != nil {
					refused = err
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			if !errors.Is(refused, audit.ErrUnavailable) || !errors.Is(refused, spool.ErrFull) {
				t.Fatalf("fail=closed with a full spool: got %v, want ErrUnavailable naming the full spool", refused)
			}
			if r.Ready() {
				t.Fatal("ready with the database down and the spool full")
			}

			audit.SetFail(r, audit.FailOpen)
			res, err := r.Record(context.Background(), audittest.Record(99, time.Now()))
			if err != nil || res != (audit.Result{audit.SinkPostgres, audit.StatusDropped}) {
				t.Fatalf("fail=open: %+v %v, want dropped", res, err)
			}
			if m.get("postgres/dropped") == 0 {
				t.Fatalf("dropped record not counted: %v", m.counts)
			}
		})
	}
}

// A sync caller whose deadline passes while the database does not answer
// is refused (fail=closed), and the record stored in the end says so: the
// writer stores a refusal in its place, or corrects the record it had
// already sent. With fail=open the decision stands, and so does its record.
func TestSyncContextEnds(t *testing.T) {
	t.Parallel()
	_, u := migratedDB(t)
	p := newProxy(t, upstream(t))
	cfg := testConfig(p.URL(t, u), t)
	cfg.Durability = audit.Sync
	r := open(t, cfg)
	p.Stall() // connections stay open; nothing answers
	closed, open := audittest.Record(1, time.Now()), audittest.Record(2, time.Now())
	if closed.FinalRoute != "accept" {
		t.Fatalf("test record 1 has route %s, want accept", closed.FinalRoute)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := r.Record(ctx, closed); !errors.Is(err, audit.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want ErrUnavailable after the deadline", err)
	}
	audit.SetFail(r, audit.FailOpen)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if res, err := r.Record(ctx2, open); err != nil || res.Status != audit.StatusQueued {
		t.Fatalf("fail=open: %+v %v, want queued", res, err)
	}
	audit.SetFail(r, audit.FailClosed)
	p.Restore()
	testwait.Until(t, "the refused record stored as a refusal", func() bool {
		return pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions WHERE decision_id = $1 AND final_route = 'refuse' AND NOT execute AND $2 = ANY(hard_blockers)",
			closed.DecisionID, route.CodeAuditUnavailable) == 1 &&
			pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions WHERE decision_id = $1 AND final_route = $2", open.DecisionID, open.FinalRoute) == 1
	})
	waitSpoolEmpty(t, r)
	closeRec(t, r)
	assertStoredOnce(t, u, []string{closed.DecisionID, open.DecisionID})
	assertChainHolds(t, u)
}

// spoolRecords counts the records in every segment under a spool
// directory: its own (left by an older gated) and its processes'.
func spoolRecords(t *testing.T, dir string) (int, int64, error) {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.log"))
	sub, _ := filepath.Glob(filepath.Join(dir, "*", "seg-*.log"))
	segs = append(segs, sub...)
	n, skipped := 0, int64(0)
	for _, s := range segs {
		recs, sk, err := spool.ReadSegment(s)
		if err != nil {
			return n, skipped, err
		}
		n += len(recs)
		skipped += sk
	}
	return n, skipped, nil
}

// Durability and fail mode are read once, from their words, and nothing else.
func TestParseSettings(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]audit.Durability{"": audit.Async, "async": audit.Async, "sync": audit.Sync} {
		if got, err := audit.ParseDurability(in); err != nil || got != want {
			t.Errorf("ParseDurability(%q) = %v, %v", in, got, err)
		}
	}
	for in, want := range map[string]audit.FailMode{"": audit.FailClosed, "closed": audit.FailClosed, "open": audit.FailOpen} {
		if got, err := audit.ParseFailMode(in); err != nil || got != want {
			t.Errorf("ParseFailMode(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := audit.ParseDurability("eventually"); err == nil {
		t.Error("durability eventually accepted")
	}
	if _, err := audit.ParseFailMode("sometimes"); err == nil {
		t.Error("fail mode sometimes accepted")
	}
}

func TestInvalidRecordsRefused(t *testing.T) {
	t.Parallel()
	r := openFile(t, filepath.Join(t.TempDir(), "a.jsonl"), audit.Config{Fail: audit.FailOpen})
	defer closeRec(t, r)
	good := audittest.Record(1, time.Now())
	noID, noTime, noRoute := *good, *good, *good
	noID.DecisionID, noTime.DecidedAt, noRoute.FinalRoute = "", time.Time{}, ""
	for name, rec := range map[string]*audit.Record{"nil": nil, "no id": &noID, "no time": &noTime, "no route": &noRoute} {
		if _, err := r.Record(context.Background(), rec); !errors.Is(err, audit.ErrUnavailable) {
			t.Errorf("%s: got %v, want ErrUnavailable even with fail=open", name, err)
		}
	}
}

// A record another transaction stored (an approval's spending) is counted
// by the recorder as written to PostgreSQL, whatever its own sink.
func TestStoredElsewhereIsCounted(t *testing.T) {
	t.Parallel()
	m := newCounting()
	r := openFile(t, filepath.Join(t.TempDir(), "audit.jsonl"), audit.Config{SpoolDir: t.TempDir(), Metrics: m})
	defer closeRec(t, r)
	res := r.Stored(audittest.Record(1, time.Now()))
	if res != (audit.Result{Sink: audit.SinkPostgres, Status: audit.StatusWritten}) || m.get("postgres/written") != 1 {
		t.Fatalf("result %+v, counted %v", res, m.counts)
	}
}
