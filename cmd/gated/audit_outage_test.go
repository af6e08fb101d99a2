package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/pgtest"
)

// decision is what a test keeps of one /pre-tool-check answer.
type decision struct {
	id, route, status string
	auditRefused      bool // refused with blocker audit_unavailable
}

func decide(t *testing.T, base string) decision {
	t.Helper()
	code, d := post(t, base+"/pre-tool-check", readExample(t, "search_docs_accept.json"), nil)
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, d)
	}
	return toDecision(d)
}

func toDecision(d map[string]any) decision {
	out := decision{}
	out.id, _ = d["decision_id"].(string)
	out.route, _ = d["route"].(string)
	if a, ok := d["audit"].(map[string]any); ok {
		out.status, _ = a["status"].(string)
	}
	if bl, ok := d["hard_blockers"].([]any); ok {
		out.auditRefused = slices.Contains(bl, any("audit_unavailable"))
	}
	return out
}

// waitStored waits until every id is stored, and fails on any stored twice.
func waitStored(t *testing.T, dbURL string, ids []string, logs interface{ String() string }) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		stored, dup, err := tryCountStored(dbURL, ids) // fails until the migrations ran
		if dup > 0 {
			t.Fatalf("%d decision ids stored more than once", dup)
		}
		if err == nil && stored == len(ids) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d answered decisions stored (%v)\n%s", stored, len(ids), err, logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tryCountStored(dbURL string, ids []string) (stored, dup int, err error) {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close(ctx)
	err = c.QueryRow(ctx, `SELECT count(DISTINCT decision_id), count(*) - count(DISTINCT decision_id)
		FROM audit_decisions WHERE decision_id = ANY($1)`, ids).Scan(&stored, &dup)
	return stored, dup, err
}

// Item 7: gated serve starts while its database does not exist yet (so
// neither a connection nor the migrations can succeed), is ready, answers
// every call from the spool, and once the database exists applies the
// migrations and stores every answered decision exactly once.
func TestServeStartsWhileDatabaseIsDown(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"sync", "async"} {
		t.Run(mode, func(t *testing.T) {
			dbURL, create := pgtest.Later(t)
			base, logs := startServe(t, []string{"--database-url", dbURL, "--audit-hmac-key", testHMACKey,
				"--audit-durability", mode, "--log-level", "warn"}, nil)
			if code, raw := send(t, http.MethodGet, base+"/readyz", nil, nil); code != http.StatusOK {
				t.Fatalf("/readyz %d with a writable spool: %s", code, raw)
			}
			var ids []string
			for range 30 {
				d := decide(t, base)
				if d.route != "accept" || d.status != "spooled" {
					t.Fatalf("decision while the database is missing: route %s, audit %s; want accept, spooled\n%s", d.route, d.status, logs)
				}
				ids = append(ids, d.id)
			}
			create()
			waitStored(t, dbURL, ids, logs)
		})
	}
}

// spoolBytes is what the process reports as gated_audit_spool_bytes.
func spoolBytes(t *testing.T, base string) (float64, bool) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "gated_audit_spool_bytes "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// Item 9: two gated processes given one --spool-dir (the chart's
// existingClaim with two replicas) keep deciding while the database is
// down, never report a negative spool size, and what the first spooled
// before it was killed is replayed by the second exactly once.
func TestTwoProcessesShareASpoolDir(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("process-level test")
	}
	name, dbURL := pgtest.Fresh(t)
	root := filepath.Join(t.TempDir(), "spool")
	args := []string{"--database-url", dbURL, "--audit-hmac-key", testHMACKey, "--audit-durability", "sync",
		"--spool-dir", root, "--log-level", "warn"}
	first := startProcess(t, args...)
	second := startProcess(t, args...)
	defer func() { _ = second.cmd.Process.Signal(os.Interrupt) }()
	for _, p := range []*gatedProcess{first, second} {
		if d := decide(t, p.base); d.status != "written" {
			t.Fatalf("before the outage: %+v\n%s", d, p.logs)
		}
	}

	var mu sync.Mutex
	var ids []string
	var refused, spooled int
	minGauge := 0.0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for _, p := range []*gatedProcess{first, second, first, second} {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := client.Post(p.base+"/pre-tool-check", "application/json", strings.NewReader(readExample(t, "search_docs_accept.json")))
				if err != nil {
					time.Sleep(5 * time.Millisecond) // killed
					continue
				}
				var d map[string]any
				derr := decodeJSON(resp, &d)
				if derr != nil || resp.StatusCode != http.StatusOK {
					continue
				}
				dd := toDecision(d)
				mu.Lock()
				switch {
				case dd.auditRefused:
					refused++
				case dd.status == "written" || dd.status == "spooled":
					ids = append(ids, dd.id)
					if dd.status == "spooled" {
						spooled++
					}
				}
				mu.Unlock()
			}
		})
	}
	watch := func(p *gatedProcess) {
		if v, ok := spoolBytes(t, p.base); ok {
			mu.Lock()
			minGauge = min(minGauge, v)
			mu.Unlock()
		}
	}
	time.Sleep(300 * time.Millisecond)
	pgtest.Exec(t, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS false")
	pgtest.Exec(t, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name)
	for range 30 { // 1.5 s of outage, both spooling
		watch(first)
		watch(second)
		time.Sleep(50 * time.Millisecond)
	}
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	close(stop)
	wg.Wait()
	if refused > 0 {
		t.Fatalf("%d calls refused with audit_unavailable although each process has a spool\n%s\n%s", refused, first.logs, second.logs)
	}
	if spooled == 0 {
		t.Fatal("nothing spooled: the outage proves nothing")
	}
	pgtest.Exec(t, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS true")
	deadline := time.Now().Add(60 * time.Second)
	for {
		watch(second)
		stored, dup := countStored(t, context.Background(), dbURL, ids)
		if dup > 0 {
			t.Fatalf("%d decision ids stored more than once", dup)
		}
		if stored == len(ids) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d answered decisions stored\n%s", stored, len(ids), second.logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if minGauge < 0 {
		t.Fatalf("gated_audit_spool_bytes went negative: %v", minGauge)
	}
	// The killed process's chain, replayed by the other from its spool,
	// holds as well as the live one's.
	var report bytes.Buffer
	if err := run(context.Background(), []string{"gated", "audit", "verify", "--database-url", dbURL}, func(string) string { return "" }, nil, &report, io.Discard); err != nil {
		t.Fatalf("the chains do not hold after the replay: %v\n%s", err, report.String())
	}
	if n := strings.Count(report.String(), "hold; unsigned"); n != 2 {
		t.Fatalf("want the two processes' chains, each holding:\n%s", report.String())
	}
	t.Logf("%d decisions answered by two processes on one spool dir, %d of them spooled", len(ids), spooled)
}

func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// mountTinyFS mounts a tmpfs of size bytes at dir: a disk that really
// fills up (ENOSPC even on files already open). It needs root's mount
// privilege; without it the test is skipped (the audit package's tests
// cover a full spool through its size limit).
func mountTinyFS(t *testing.T, dir string, size int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.Itoa(size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a tmpfs (needs root's mount privilege): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
}

// fill writes into dir until its filesystem is full.
func fill(t *testing.T, dir string) (undo func()) {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	_ = f.Close()
	return func() { _ = os.Remove(p) }
}

// Item 8: async durability, fail=closed. With the database down and the
// spool's disk full, gated must not answer a call whose record it cannot
// keep: once the spool fails every call is refused, and every call it did
// accept is stored, exactly once, after the outage.
func TestServeAsyncRefusesWhenDatabaseDownAndSpoolFull(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "spool")
	mountTinyFS(t, root, 1<<20)
	name, dbURL := pgtest.Fresh(t)
	base, logs := startServe(t, []string{"--database-url", dbURL, "--audit-hmac-key", testHMACKey,
		"--spool-dir", root, "--log-level", "warn"}, nil) // async and fail=closed are the defaults
	var accepted []string
	keep := func(d decision) {
		if d.route == "accept" {
			accepted = append(accepted, d.id)
		} else if !d.auditRefused {
			t.Fatalf("unexpected answer %+v", d)
		}
	}
	keep(decide(t, base))

	pgtest.Exec(t, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS false")
	pgtest.Exec(t, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name)
	deadline := time.Now().Add(30 * time.Second)
	for spoolUsed(t, root) == 0 { // the database's failure has been seen
		if time.Now().After(deadline) {
			t.Fatalf("nothing reached the spool\n%s", logs)
		}
		keep(decide(t, base))
	}
	// Records accepted so far hold spool room that only the spool's own
	// writes use; another writer filling the disk under them is a disk
	// fault after the answer, the async window docs/audit.md names. Fill
	// the disk once they are on it: then nothing may be accepted unkept.
	waitSpooled(t, base, len(accepted)-1, logs)
	undo := fill(t, root)
	// A record may still fit in a page the disk had already given the
	// spool; then it is kept, and accepted. Soon nothing fits.
	for i := 0; ; i++ {
		d := decide(t, base)
		keep(d)
		if d.auditRefused {
			break
		}
		if i == 200 {
			t.Fatalf("still accepting with the database down and the spool's disk full\n%s", logs)
		}
	}
	for range 50 {
		if d := decide(t, base); !d.auditRefused {
			t.Fatalf("accepted %+v with the database down and the spool's disk full", d)
		}
	}
	undo()
	pgtest.Exec(t, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS true")
	waitStored(t, dbURL, accepted, logs)
}

// waitSpooled waits until gated has spooled n records
// (gated_audit_records_total{outcome="spooled"} on its /metrics).
func waitSpooled(t *testing.T, base string, n int, logs interface{ String() string }) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, raw := send(t, http.MethodGet, base+"/metrics", nil, nil)
		got := 0
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "gated_audit_records_total{") && strings.Contains(line, `outcome="spooled"`) {
				f := strings.Fields(line)
				v, _ := strconv.ParseFloat(f[len(f)-1], 64)
				got += int(v)
			}
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d records spooled\n%s", got, n, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// spoolUsed is the bytes in segment files under root.
func spoolUsed(t *testing.T, root string) int64 {
	t.Helper()
	var n int64
	_ = filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && strings.HasPrefix(fi.Name(), "seg-") {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// Item 10: the COMMIT of a decision's record reaches PostgreSQL but its
// answer is lost (a proxy forwards the COMMIT, lets it finish and cuts the
// connection), and the spool cannot take the record. The answer gated
// gives must be what is stored.
func TestServeAnswerMatchesStoredRecordAfterLostCommit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		fault audittest.CommitFault
		want  string // the route answered and stored
	}{
		{"commit stored", audittest.LoseAck, "accept"},
		{"outcome unknown", audittest.LoseAckThenRefuse, "refuse"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, dbURL := pgtest.Fresh(t)
			p := pgProxy(t)
			root := filepath.Join(t.TempDir(), "spool")
			base, logs := startServe(t, []string{"--database-url", p.URL(t, dbURL), "--audit-hmac-key", testHMACKey,
				"--audit-durability", "sync", "--spool-dir", root, "--log-level", "warn"}, nil)
			if d := decide(t, base); d.route != "accept" || d.status != "written" {
				t.Fatalf("before the fault: %+v", d)
			}
			// The spool can take nothing: its directory is a file now.
			if err := os.Rename(root, root+".moved"); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(root, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			p.Arm(c.fault)
			d := decide(t, base)
			select {
			case <-p.Fired():
			case <-time.After(10 * time.Second):
				t.Fatal("the fault never fired: the test proves nothing")
			}
			if d.route != c.want {
				t.Fatalf("answered %+v, want %s\n%s", d, c.want, logs)
			}
			p.Restore()
			deadline := time.Now().Add(30 * time.Second)
			for {
				route, n := storedRoute(t, dbURL, d.id)
				if n > 1 {
					t.Fatalf("decision stored %d times", n)
				}
				if n == 1 && route == d.route {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("answered %s, stored %q (%d rows)\n%s", d.route, route, n, logs)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

func storedRoute(t *testing.T, dbURL, id string) (route string, n int) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	err = c.QueryRow(ctx, "SELECT coalesce(max(final_route), ''), count(*) FROM audit_decisions WHERE decision_id = $1", id).Scan(&route, &n)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		t.Fatal(err)
	}
	return route, n
}

// pgProxy is a fault-injecting proxy in front of the test PostgreSQL.
func pgProxy(t *testing.T) *audittest.Proxy { return audittest.NewProxy(t, pgtest.Addr(t)) }
