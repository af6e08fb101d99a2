package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/testwait"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/audit/spool"
	"github.com/gatedhq/gated/internal/pgtest"
)

// Item 7: a recorder opened while its database does not exist yet (so the
// migrations cannot run) answers from the spool, and once the database is
// there applies the migrations and replays every record exactly once.
func TestOpensWhileDatabaseIsMissing(t *testing.T) {
	t.Parallel()
	for _, mode := range []audit.Durability{audit.Async, audit.Sync} {
		t.Run(mode.String(), func(t *testing.T) {
			u, create := pgtest.Later(t)
			cfg := testConfig(u, t)
			cfg.Migrate, cfg.Durability = true, mode
			r := open(t, cfg)
			if !r.Ready() {
				t.Fatal("not ready although the spool can take records")
			}
			var ids []string
			for i := range 100 {
				rec := audittest.Record(i, time.Now())
				res, err := r.Record(context.Background(), rec)
				// async too: nothing is known to store it, so the caller
				// waits for the spool rather than be told "queued"
				if err != nil || res.Status != audit.StatusSpooled {
					t.Fatalf("record %d while the database is missing: %+v %v, want spooled", i, res, err)
				}
				ids = append(ids, rec.DecisionID)
			}
			create()
			waitSpoolEmpty(t, r)
			closeRec(t, r)
			assertStoredOnce(t, u, ids)
		})
	}
}

// recordAll sends n records from 8 goroutines and returns the ids the
// recorder accepted (no error).
func recordAll(r audit.Recorder, n int) (accepted []string, refused int, firstErr error) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var sent atomic.Int64
	for range 8 {
		wg.Go(func() {
			for sent.Add(1) <= int64(n) {
				rec := audittest.Record(int(recordSeq.Add(1)), time.Now())
				_, err := r.Record(context.Background(), rec)
				mu.Lock()
				if err != nil {
					refused++
					if firstErr == nil {
						firstErr = err
					}
				} else {
					accepted = append(accepted, rec.DecisionID)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return accepted, refused, firstErr
}

// Item 8: with async durability and fail=closed, a call is accepted only
// when its record is kept somewhere: with the database down and a spool
// that cannot take records, every call is refused.
func TestAsyncFailClosedRefusesWhenNothingCanKeepTheRecord(t *testing.T) {
	t.Parallel()
	t.Run("spool full", func(t *testing.T) {
		_, u := migratedDB(t)
		p := newProxy(t, upstream(t))
		p.Cut()
		cfg := testConfig(p.URL(t, u), t)
		cfg.SpoolMaxBytes = 1 // no record fits
		r := open(t, cfg)
		accepted, _, err := recordAll(r, 300)
		if len(accepted) != 0 {
			t.Fatalf("%d of 300 calls accepted with the database down and the spool full", len(accepted))
		}
		if !errors.Is(err, audit.ErrUnavailable) {
			t.Fatalf("refused with %v, want ErrUnavailable", err)
		}
		if r.Ready() {
			t.Fatal("ready with the database down and the spool full")
		}
		// The database back, a call is accepted only once its record is
		// committed: there is no spool room to answer "queued" on.
		p.Restore()
		testwait.Until(t, "the database to be seen again", r.Ready)
		rec := audittest.Record(1, time.Now())
		if res, err := r.Record(context.Background(), rec); err != nil || res.Status != audit.StatusWritten {
			t.Fatalf("database back, spool full: %+v %v, want written", res, err)
		}
		closeRec(t, r)
		assertStoredOnce(t, u, []string{rec.DecisionID})
	})

	t.Run("spool unwritable", func(t *testing.T) {
		_, u := migratedDB(t)
		p := newProxy(t, upstream(t))
		p.Cut()
		cfg := testConfig(p.URL(t, u), t)
		r := open(t, cfg)
		// As root no permission stops a write, so the spool's directory
		// becomes a regular file: every create in it fails (ENOTDIR).
		dir := audit.SpoolDir(r)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir, []byte("not a directory"), 0o600); err != nil {
			t.Fatal(err)
		}
		accepted, _, err := recordAll(r, 300)
		if len(accepted) != 0 {
			t.Fatalf("%d of 300 calls accepted with the database down and the spool unwritable", len(accepted))
		}
		if !errors.Is(err, audit.ErrUnavailable) {
			t.Fatalf("refused with %v, want ErrUnavailable", err)
		}
		testwait.Until(t, "not ready", func() bool { return !r.Ready() })

		// The disk back, records are spooled again; the database back,
		// they are replayed.
		if err := os.Remove(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, "the spool to be probed writable", r.Ready)
		accepted, refused, err := recordAll(r, 50)
		if refused != 0 {
			t.Fatalf("%d calls refused with a writable spool: %v", refused, err)
		}
		p.Restore()
		waitSpoolEmpty(t, r)
		closeRec(t, r)
		assertStoredOnce(t, u, accepted)
	})

	// The database fails under load while the spool is small: records
	// answered "queued" had spool room kept for them, later ones wait and
	// are spooled or refused. Every accepted record is stored exactly once.
	t.Run("outage with a small spool", func(t *testing.T) {
		_, u := migratedDB(t)
		p := newProxy(t, upstream(t))
		one, _ := spoolFrame(audittest.Record(1_000_000, time.Now()))
		cfg := testConfig(p.URL(t, u), t)
		cfg.SpoolMaxBytes = 40 * one
		m := newCounting()
		cfg.Metrics = m
		r := open(t, cfg)
		var accepted []string
		var refusedTotal int
		for round := range 6 {
			if round == 2 {
				p.Cut()
			}
			a, refused, _ := recordAll(r, 200)
			accepted = append(accepted, a...)
			refusedTotal += refused
		}
		if m.get("postgres/dropped") != 0 {
			t.Fatalf("records lost after being answered: %v", m.counts)
		}
		if refusedTotal == 0 || m.get("postgres/spooled") == 0 {
			t.Fatalf("the outage neither filled the spool nor reached it (%d refused, metrics %v)", refusedTotal, m.counts)
		}
		p.Restore()
		waitSpoolEmpty(t, r)
		closeRec(t, r)
		assertStoredOnce(t, u, accepted)
	})
}

func spoolFrame(rec *audit.Record) (int64, error) {
	b, err := jsonFrame(rec)
	return spool.FrameSize(len(b)), err
}

// jsonFrame is a record as the spool holds it.
func jsonFrame(rec *audit.Record) ([]byte, error) { return json.Marshal(audit.Frame{Record: rec}) }

// Item 9: two recorders (two processes, or one process twice: flock locks
// are per open file) given one spool directory each take a subdirectory of
// their own, keep deciding while the database is down, report no negative
// spool size, and what one spooled before it stopped is replayed by the
// other, exactly once.
func TestTwoRecordersShareASpoolDir(t *testing.T) {
	t.Parallel()
	_, u := migratedDB(t)
	p := newProxy(t, upstream(t))
	root := filepath.Join(t.TempDir(), "spool")
	mk := func() (audit.Recorder, *countingMetrics) {
		m := newCounting()
		cfg := testConfig(p.URL(t, u), t)
		cfg.SpoolDir, cfg.SpoolOwner, cfg.Durability, cfg.Metrics = root, "host-1", audit.Sync, m
		return open(t, cfg), m
	}
	a, ma := mk()
	b, mb := mk()
	if audit.SpoolDir(a) == audit.SpoolDir(b) {
		t.Fatalf("both recorders spool in %s", audit.SpoolDir(a))
	}
	p.Cut()
	stop := make(chan struct{})
	go func() { time.Sleep(700 * time.Millisecond); close(stop) }()
	var idsA, idsB []string
	var wg sync.WaitGroup
	wg.Go(func() { idsA = sendDuring(t, a, stop) })
	wg.Go(func() { idsB = sendDuring(t, b, stop) })
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if ma.get("postgres/spooled") == 0 || mb.get("postgres/spooled") == 0 {
		t.Fatalf("the outage reached neither spool: %v %v", ma.counts, mb.counts)
	}
	dirA := audit.SpoolDir(a)
	closeRec(t, a) // a stops, its records still spooled
	if n, _, _ := spoolRecords(t, dirA); n != len(idsA) {
		t.Fatalf("%d records left in %s, want %d", n, dirA, len(idsA))
	}

	p.Restore()
	testwait.Until(t, "b to replay a's spool and remove it", func() bool {
		_, err := os.Stat(dirA)
		return errors.Is(err, os.ErrNotExist) && audit.Spooled(b) == 0
	})
	closeRec(t, b)
	assertStoredOnce(t, u, append(idsA, idsB...))
	if mb.get("postgres/replayed") < len(idsA) {
		t.Fatalf("b replayed %d records, want at least a's %d", mb.get("postgres/replayed"), len(idsA))
	}
	if ma.minSpool < 0 || mb.minSpool < 0 {
		t.Fatalf("spool gauge went negative: %d, %d", ma.minSpool, mb.minSpool)
	}
}

// Item 10: a COMMIT that reached PostgreSQL but whose answer was lost. The
// caller's answer must be what is stored: Record succeeds (the gate
// answers the decided route) only if the record is stored with that
// route; when it fails (the gate refuses) the record, if stored, must end
// up saying refuse.
func TestLostCommitAcknowledgement(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		fault      audittest.CommitFault
		spoolRoom  bool
		wantStatus string // "" means refused
	}{
		// Stored, and found stored on a new connection: answered as stored.
		{"commit stored, spool full", audittest.LoseAck, false, audit.StatusWritten},
		// Not stored (the COMMIT never arrived): found missing, written again.
		{"commit lost, spool full", audittest.Drop, false, audit.StatusWritten},
		// Unknown (the database cannot be reached to ask) and nothing else
		// can keep it: refused, and the stored record corrected to refuse.
		{"outcome unknown, spool full", audittest.LoseAckThenRefuse, false, ""},
		// The spool takes it: answered as spooled whatever the commit did,
		// and the replay stores nothing twice.
		{"commit stored, spool takes it", audittest.LoseAck, true, audit.StatusSpooled},
		{"outcome unknown, spool takes it", audittest.LoseAckThenRefuse, true, audit.StatusSpooled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, u := migratedDB(t)
			p := newProxy(t, upstream(t))
			cfg := testConfig(p.URL(t, u), t)
			cfg.Durability, cfg.ResolveTimeout = audit.Sync, time.Second
			if !c.spoolRoom {
				cfg.SpoolMaxBytes = 1
			}
			r := open(t, cfg)
			warm := audittest.Record(0, time.Now())
			if res, err := r.Record(context.Background(), warm); err != nil || res.Status != audit.StatusWritten {
				t.Fatalf("before the fault: %+v %v", res, err)
			}
			rec := audittest.Record(1, time.Now())
			if rec.FinalRoute != "accept" {
				t.Fatalf("test record has route %s, want accept", rec.FinalRoute)
			}
			p.Arm(c.fault)
			res, err := r.Record(context.Background(), rec)
			select {
			case <-p.Fired():
			case <-time.After(10 * time.Second):
				t.Fatal("the fault never fired: the test proves nothing")
			}
			answer := rec.FinalRoute
			if err != nil {
				if !errors.Is(err, audit.ErrUnavailable) {
					t.Fatalf("refused with %v, want ErrUnavailable", err)
				}
				answer = "refuse" // what the gate answers when Record fails
			}
			if c.wantStatus == "" && err == nil || c.wantStatus != "" && (err != nil || res.Status != c.wantStatus) {
				t.Fatalf("got %+v %v, want status %q", res, err, c.wantStatus)
			}
			p.Restore()
			testwait.Until(t, "the record stored as answered ("+answer+")", func() bool {
				return pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions WHERE decision_id = $1 AND final_route = $2",
					rec.DecisionID, answer) == 1
			})
			waitSpoolEmpty(t, r)
			closeRec(t, r)
			assertStoredOnce(t, u, []string{warm.DecisionID, rec.DecisionID})
			if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions WHERE decision_id = $1 AND final_route = $2",
				rec.DecisionID, answer); n != 1 {
				t.Fatalf("answered %s, but the stored record says otherwise", answer)
			}
			assertChainHolds(t, u)
		})
	}
}

// Every field of Record is in encodedSizeBound, and the bound holds
// against the encoder for awkward strings.
func TestEncodedSizeBound(t *testing.T) {
	t.Parallel()
	if n := reflect.TypeFor[audit.Record]().NumField(); n != 36 {
		t.Fatalf("Record has %d fields, encodedSizeBound knows 36: add the new ones to it", n)
	}
	if n := reflect.TypeFor[audit.EvidenceMeta]().NumField(); n != 6 {
		t.Fatalf("EvidenceMeta has %d fields, encodedSizeBound knows 6: add the new ones to it", n)
	}
	awkward := []string{"", "plain", `quote"back\\slash`, "<tag>&amp;", "\x00\x01\x1f", "日本語", "\u2028\u2029", string([]byte{0xff, 0xfe, 'x'})}
	for i, s := range awkward {
		rec := audittest.Record(i, time.Date(2026, 12, 31, 23, 59, 59, 999999000, time.UTC))
		rec.RequestID, rec.AgentID, rec.ArgumentsHMAC = s, s+s, s
		rec.HardBlockers = append(rec.HardBlockers, s, s)
		rec.Reasons = nil
		rec.BundleCommits = []string{s, "policy:" + s}
		rec.Principals, rec.Sealed = []string{s, "bot://" + s}, s
		rec.LatencyMS = -1.2345678901234567e-300
		rec.Evidence = []audit.EvidenceMeta{{SourceID: s, Kind: s}, {SourceFingerprint: s}}
		id := "pod-" + s + ".0123456789abcdef"
		rec.ChainID, rec.ChainSeq, rec.Supersedes = id, math.MinInt64, math.MinInt64
		rec.LinkHash = strings.Repeat("f", 64)
		b, err := jsonFrame(rec)
		if err != nil {
			t.Fatal(err)
		}
		if bound := audit.EncodedSizeBound(rec, id); bound < len(b) {
			t.Errorf("%q: bound %d < encoded %d", s, bound, len(b))
		}
	}
}
