package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit/spool"
	"github.com/gatedhq/gated/internal/pgtest"
)

// countingMetrics records what the recorder reports.
type countingMetrics struct {
	mu     sync.Mutex
	counts map[string]int
}

func newCounting() *countingMetrics { return &countingMetrics{counts: map[string]int{}} }

func (m *countingMetrics) QueueDepth(int)   {}
func (m *countingMetrics) SpoolBytes(int64) {}
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

// proxy is a TCP proxy in front of PostgreSQL that the test can cut: cut
// closes every open connection and refuses new ones until restore.
type proxy struct {
	ln     net.Listener
	target string
	down   atomic.Bool
	mu     sync.Mutex
	conns  map[net.Conn]bool
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.down.Load() {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.track(c, s)
		go func() { io.Copy(s, c); s.Close(); c.Close() }()
		go func() { io.Copy(c, s); s.Close(); c.Close() }()
	}
}

func (p *proxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = true
	}
}

func (p *proxy) cut() {
	p.down.Store(true)
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *proxy) restore() { p.down.Store(false) }

// proxiedURL points dbURL at the proxy.
func proxiedURL(t *testing.T, dbURL string, p *proxy) string {
	t.Helper()
	cfg, err := url2host(dbURL, p.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func upstream(t *testing.T) string {
	t.Helper()
	u, err := parseHost(pgtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func testConfig(dbURL string, t *testing.T) Config {
	return Config{
		DatabaseURL: dbURL, SpoolDir: filepath.Join(t.TempDir(), "spool"),
		FlushInterval: 10 * time.Millisecond, RetryInterval: 50 * time.Millisecond,
		WriteTimeout: 2 * time.Second, BatchSize: 200,
	}
}

func open(t *testing.T, cfg Config) *recorder {
	t.Helper()
	r, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r.(*recorder)
}

func closeRec(t *testing.T, r Recorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// waitSpoolEmpty waits until every spooled record has been replayed.
func waitSpoolEmpty(t *testing.T, r *recorder) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for r.spool.Size() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("spool still holds %d bytes", r.spool.Size())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// assertStoredOnce proves every id is stored exactly once and nothing else is.
func assertStoredOnce(t *testing.T, dbURL string, ids []string) {
	t.Helper()
	n := queryInt(t, dbURL, "SELECT count(*) FROM audit_decisions")
	distinct := queryInt(t, dbURL, "SELECT count(DISTINCT decision_id) FROM audit_decisions")
	found := queryInt(t, dbURL, "SELECT count(*) FROM audit_decisions WHERE decision_id = ANY($1)", ids)
	if n != len(ids) || distinct != len(ids) || found != len(ids) {
		t.Fatalf("stored %d rows (%d distinct, %d of ours), want each of %d exactly once", n, distinct, found, len(ids))
	}
}

func TestAsyncWritesEveryRecord(t *testing.T) {
	_, u := migratedDB(t)
	m := newCounting()
	cfg := testConfig(u, t)
	cfg.Metrics = m
	r := open(t, cfg)
	var ids []string
	now := time.Now()
	for i := range 1000 {
		rec := testRecord(i, now)
		res, err := r.Record(context.Background(), rec)
		if err != nil || res != (Result{SinkPostgres, StatusQueued}) {
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
	if _, err := r.Record(context.Background(), testRecord(1, now)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("record after close: %v", err)
	}
}

func TestSyncIsCommittedOnReturn(t *testing.T) {
	_, u := migratedDB(t)
	cfg := testConfig(u, t)
	cfg.Durability = "sync"
	r := open(t, cfg)
	defer closeRec(t, r)
	now := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ids []string
	for g := range 20 {
		wg.Go(func() {
			for i := range 25 {
				rec := testRecord(g*1000+i, now)
				res, err := r.Record(context.Background(), rec)
				if err != nil || res != (Result{SinkPostgres, StatusWritten}) {
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

// sendDuring records from several goroutines until stop closes, and returns
// the ids of every record the recorder accepted.
func sendDuring(t *testing.T, r Recorder, stop <-chan struct{}) []string {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ids []string
	var n atomic.Int64
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				rec := testRecord(int(n.Add(1)), time.Now())
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
	for _, mode := range []string{"async", "sync"} {
		t.Run(mode, func(t *testing.T) {
			_, u := migratedDB(t)
			p := newProxy(t, upstream(t))
			m := newCounting()
			cfg := testConfig(proxiedURL(t, u, p), t)
			cfg.Durability, cfg.Metrics = mode, m
			r := open(t, cfg)
			stop := make(chan struct{})
			go func() {
				time.Sleep(300 * time.Millisecond)
				p.cut()
				time.Sleep(600 * time.Millisecond)
				p.restore()
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
		})
	}
}

func TestDatabaseRefusesConnectionsMidLoad(t *testing.T) {
	name, u := migratedDB(t)
	m := newCounting()
	cfg := testConfig(u, t)
	cfg.Durability, cfg.Metrics = "sync", m
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
}

// A process that died with records in its spool (some of them already
// committed before the crash, one torn half-way) hands them over to the
// next process on the same spool.
func TestSpoolReplayedByNextProcess(t *testing.T) {
	_, u := migratedDB(t)
	dir := filepath.Join(t.TempDir(), "spool")
	now := time.Now()
	sp, err := spool.Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 50 {
		rec := testRecord(i, now)
		b, _ := json.Marshal(rec)
		if err := sp.Append(b); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.DecisionID)
	}
	sp.Close()
	// committed before the crash, but its segment was never removed
	s := openSink(t, u, 0)
	if err := s.insert(context.Background(), []*Record{testRecord(3, now), testRecord(4, now)}); err != nil {
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
	cfg := testConfig("postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=1", t)
	cfg.FlushInterval = time.Hour // nothing is flushed before Close
	cfg.WriteTimeout = 500 * time.Millisecond
	r := open(t, cfg)
	for i := range 300 {
		if _, err := r.Record(context.Background(), testRecord(i, time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	closeRec(t, r)
	segs, _ := filepath.Glob(filepath.Join(cfg.SpoolDir, "seg-*.log"))
	n := 0
	for _, s := range segs {
		recs, _, err := spool.ReadSegment(s)
		if err != nil {
			t.Fatal(err)
		}
		n += len(recs)
	}
	if n != 300 {
		t.Fatalf("%d records in the spool after close, want 300", n)
	}
}

func TestFailModesWhenNothingCanStore(t *testing.T) {
	down := "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=1"
	for _, mode := range []string{"async", "sync"} {
		t.Run(mode, func(t *testing.T) {
			one, _ := json.Marshal(testRecord(0, time.Now()))
			m := newCounting()
			cfg := testConfig(down, t)
			cfg.Durability, cfg.Metrics = mode, m
			cfg.SpoolMaxBytes = int64(3 * (len(one) + 8)) // room for three records
			cfg.QueueSize, cfg.FlushInterval = 1, time.Millisecond
			r := open(t, cfg)
			defer closeRec(t, r)
			var refused error
			for i := range 50 {
				_, err := r.Record(context.Background(), testRecord(i, time.Now()))
				if err != nil {
					refused = err
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			if !errors.Is(refused, ErrUnavailable) || !errors.Is(refused, spool.ErrFull) {
				t.Fatalf("fail=closed with a full spool: got %v, want ErrUnavailable naming the full spool", refused)
			}
			if r.Ready() {
				t.Fatal("ready with the database down and the spool full")
			}

			r.cfg.Fail = "open"
			res, err := r.Record(context.Background(), testRecord(99, time.Now()))
			if err != nil || res != (Result{SinkPostgres, StatusDropped}) {
				t.Fatalf("fail=open: %+v %v, want dropped", res, err)
			}
			if m.get("postgres/dropped") == 0 {
				t.Fatalf("dropped record not counted: %v", m.counts)
			}
		})
	}
}

func TestSyncContextEnds(t *testing.T) {
	// A database that accepts the connection but never answers: the caller's
	// deadline ends the wait, and fail=closed refuses.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	cfg := testConfig("postgres://postgres@"+ln.Addr().String()+"/x?sslmode=disable", t)
	cfg.Durability = "sync"
	r := open(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := r.Record(ctx, testRecord(1, time.Now())); !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want ErrUnavailable after the deadline", err)
	}
	r.cfg.Fail = "open"
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if res, err := r.Record(ctx2, testRecord(2, time.Now())); err != nil || res.Status != StatusQueued {
		t.Fatalf("fail=open: %+v %v, want queued", res, err)
	}
	closeRec(t, r) // the write times out and both records land in the spool
	recs, _, _ := spoolRecords(t, cfg.SpoolDir)
	if recs != 2 {
		t.Fatalf("%d records spooled, want 2", recs)
	}
}

func spoolRecords(t *testing.T, dir string) (int, int64, error) {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.log"))
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

func TestFileSink(t *testing.T) {
	for _, mode := range []string{"async", "sync"} {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			r := open(t, Config{File: path, Durability: mode})
			want := map[Result]bool{{SinkFile, StatusQueued}: mode == "async", {SinkFile, StatusWritten}: mode == "sync"}
			for i := range 100 {
				res, err := r.Record(context.Background(), testRecord(i, time.Now()))
				if err != nil || !want[res] {
					t.Fatalf("record: %+v %v", res, err)
				}
			}
			if !r.Ready() {
				t.Fatal("file sink not ready")
			}
			closeRec(t, r)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			n := 0
			for sc.Scan() {
				var rec Record
				if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
					t.Fatalf("line %d: %v", n, err)
				}
				n++
			}
			if n != 100 {
				t.Fatalf("%d lines, want 100", n)
			}
		})
	}
}

func TestOpenRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"durability": {Durability: "eventually"},
		"fail":       {Fail: "sometimes"},
		"file":       {File: filepath.Join(t.TempDir(), "missing", "dir", "a.jsonl")},
		"url":        {DatabaseURL: "postgres://%zz"},
	} {
		if _, err := Open(context.Background(), cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestInvalidRecordsRefused(t *testing.T) {
	r := open(t, Config{File: filepath.Join(t.TempDir(), "a.jsonl"), Fail: "open"})
	defer closeRec(t, r)
	good := testRecord(1, time.Now())
	noID, noTime, noRoute := *good, *good, *good
	noID.DecisionID, noTime.DecidedAt, noRoute.FinalRoute = "", time.Time{}, ""
	for name, rec := range map[string]*Record{"nil": nil, "no id": &noID, "no time": &noTime, "no route": &noRoute} {
		if _, err := r.Record(context.Background(), rec); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: got %v, want ErrUnavailable even with fail=open", name, err)
		}
	}
}
