package watch

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/kill/saved"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/testgated"
	"github.com/gatedhq/gated/internal/testwait"
)

// handClock is a clock a test moves by hand.
type handClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *handClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// Set puts the clock at t.
func (c *handClock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// migratedDB is a fresh database with gated's tables.
func migratedDB(t *testing.T) string {
	t.Helper()
	_, u := pgtest.Fresh(t)
	if err := postgres.Migrate(context.Background(), u, "up", io.Discard); err != nil {
		t.Fatal(err)
	}
	return u
}

// deadDB is a database URL whose port refuses connections.
func deadDB(t *testing.T) string {
	return "postgres://postgres@" + testgated.ClosedAddr(t) + "/gated?sslmode=disable&connect_timeout=1"
}

// openTest is Open with cfg, on spoolDir, with clock and a log and
// metrics of its own; closed when the test ends.
func openTest(t *testing.T, cfg Config, dbURL, spoolDir string, c *handClock) (*Switch, *metrics.Metrics, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	m := metrics.New("test")
	cfg.Dir, cfg.Now = spoolDir, c.Now
	s := Open(context.Background(), pgtest.DB(t, dbURL), cfg, m, zap.New(core))
	t.Cleanup(s.Close)
	return s, m, logs
}

// metricValue is the value of the unlabelled metric name in m.
func metricValue(t *testing.T, m *metrics.Metrics, name string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		switch mt := mf.GetMetric()[0]; {
		case mt.Counter != nil:
			return mt.Counter.GetValue()
		case mt.Gauge != nil:
			return mt.Gauge.GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// stopped reports whether board's list stops agent, failing the test on
// an unconfirmed list.
func stopped(t *testing.T, board *kill.Board, agent string) bool {
	t.Helper()
	k, err := board.Check(kill.Target{AgentID: agent}, nil)
	if err != nil {
		t.Fatalf("agent %s: %v", agent, err)
	}
	return k != nil
}

// testConfig is gated's default bounds, closed at start.
var testConfig = Config{StaleAfter: 10 * time.Second, MaxStale: 10 * time.Minute}

// TestKillListOutlivesAFrozenDatabase freezes the database under a running
// kill switch (the fault-injecting proxy): past --kill-stale-after gated
// still decides from the last list — the killed agent stays stopped, the
// others run — reports each minute of it in the log and the metrics, and
// refuses every call only past --kill-max-stale (issue 25 §6).
func TestKillListOutlivesAFrozenDatabase(t *testing.T) {
	t.Parallel()
	dbURL := migratedDB(t)
	p := audittest.NewProxy(t, pgtest.Addr(t))
	clock := &handClock{now: time.Now()}
	k, m, logs := openTest(t, testConfig, p.URL(t, dbURL), t.TempDir(), clock)
	ks := &kill.Kill{Scope: kill.ScopeAgent, Value: "bot-7", Reason: "loops", CreatedBy: "oncall"}
	if err := k.Create(context.Background(), ks, time.Now()); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the kill to reach the board", func() bool { return stopped(t, k.board, "bot-7") })
	_, confirmed, _ := k.board.List()
	p.Stall()
	clock.Set(confirmed.Add(5 * time.Minute))
	if !stopped(t, k.board, "bot-7") || stopped(t, k.board, "bot-8") {
		t.Fatal("five minutes into the outage: the kill list is not decided from")
	}
	k.report()
	if n := metricValue(t, m, "gated_kill_list_stale_seconds_total"); n != 60 {
		t.Fatalf("stale seconds %v, want 60", n)
	}
	if age := metricValue(t, m, "gated_kill_list_age_seconds"); age != 300 {
		t.Fatalf("list age %v, want 300", age)
	}
	if lines := logs.FilterMessage("deciding from a kill switch list that could not be confirmed recently").All(); len(lines) != 1 ||
		lines[0].ContextMap()["refusing_every_call_in"] != 300*time.Second {
		t.Fatalf("the minute's log line is missing:\n%v", logs.All())
	}
	clock.Set(confirmed.Add(10*time.Minute + time.Second))
	if _, err := k.board.Check(kill.Target{AgentID: "bot-8"}, nil); !errors.Is(err, kill.ErrUnconfirmed) {
		t.Fatalf("past --kill-max-stale: %v, want ErrUnconfirmed", err)
	}
	k.report()
	if n := metricValue(t, m, "gated_kill_list_stale_seconds_total"); n != 60 {
		t.Fatalf("stale seconds past the bound %v, want still 60", n)
	}
	if logs.FilterMessageSnippet("every call is refused until it is").Len() == 0 {
		t.Fatalf("the log does not say every call is refused:\n%v", logs.All())
	}
}

// TestKillListSavedForARestart: a process that read a list saved it
// beside the spool; started again while the database refuses
// connections, it decides from that list at once, for --kill-max-stale
// from the list's confirmation.
func TestKillListSavedForARestart(t *testing.T) {
	t.Parallel()
	dbURL, spool := migratedDB(t), t.TempDir()
	clock := &handClock{now: time.Now()}
	first, _, _ := openTest(t, testConfig, dbURL, spool, clock)
	if err := first.Create(context.Background(), &kill.Kill{Scope: kill.ScopeAll, Reason: "incident", CreatedBy: "oncall"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the kill to be saved", func() bool {
		ks, _, err := saved.Load(filepath.Join(spool, saved.FileName), clock.Now())
		return err == nil && len(ks) == 1
	})
	_, confirmed, _ := saved.Load(filepath.Join(spool, saved.FileName), clock.Now())
	first.Close()

	clock.Set(confirmed.Add(9 * time.Minute))
	k, _, logs := openTest(t, testConfig, deadDB(t), spool, clock)
	if !stopped(t, k.board, "anyone") {
		t.Fatal("the saved kill of every call does not stop a call")
	}
	if logs.FilterMessageSnippet("the saved kill switch list is loaded").Len() == 0 {
		t.Fatalf("the log does not say the saved list is used:\n%v", logs.All())
	}
	clock.Set(confirmed.Add(10*time.Minute + time.Second))
	if _, err := k.board.Check(kill.Target{}, nil); !errors.Is(err, kill.ErrUnconfirmed) {
		t.Fatalf("past --kill-max-stale: %v, want ErrUnconfirmed", err)
	}
}

// TestKillStartWithoutAnyList: no database and no saved list — every call
// is refused, unless --kill-start-fail open, which decides as if no kill
// were set for --kill-max-stale from the start. A damaged saved list is no
// list.
func TestKillStartWithoutAnyList(t *testing.T) {
	t.Parallel()
	cfg := testConfig
	cfg.StaleAfter = 10 * time.Millisecond // the wait for a first list that cannot come
	clock := &handClock{now: time.Now()}
	k, _, _ := openTest(t, cfg, deadDB(t), t.TempDir(), clock)
	if _, err := k.board.Check(kill.Target{}, nil); !errors.Is(err, kill.ErrUnconfirmed) {
		t.Fatalf("closed: %v, want ErrUnconfirmed", err)
	}
	spool := t.TempDir()
	if err := os.WriteFile(filepath.Join(spool, saved.FileName), []byte(`{"content":{},"sha256":"00"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.StartOpen = true
	start := clock.Now()
	k, _, logs := openTest(t, cfg, deadDB(t), spool, clock)
	if stopped(t, k.board, "bot-7") {
		t.Fatal("open: a call is stopped")
	}
	if logs.FilterMessageSnippet("the saved kill switch list is ignored").Len() == 0 || logs.FilterMessageSnippet("--kill-start-fail open").Len() == 0 {
		t.Fatalf("the log does not say why:\n%v", logs.All())
	}
	clock.Set(start.Add(10*time.Minute + time.Second))
	if _, err := k.board.Check(kill.Target{}, nil); !errors.Is(err, kill.ErrUnconfirmed) {
		t.Fatalf("open, past --kill-max-stale: %v, want ErrUnconfirmed", err)
	}
}
