package postgres

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/pgtest"
	pgdb "github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/testwait"
)

// openStore migrates a fresh database and opens a Store on it, closed
// when the test ends.
func openStore(t *testing.T) (*Store, string) {
	t.Helper()
	s, _, u := openStoreNamed(t)
	return s, u
}

// openStoreNamed is openStore, also naming the database.
func openStoreNamed(t *testing.T) (*Store, string, string) {
	t.Helper()
	name, u := pgtest.Fresh(t)
	if err := pgdb.Migrate(context.Background(), u, "up", io.Discard); err != nil {
		t.Fatal(err)
	}
	return New(pgtest.DB(t, u)), name, u
}

func create(t *testing.T, s *Store, k kill.Kill) kill.Kill {
	t.Helper()
	if err := s.Create(context.Background(), &k, time.Now()); err != nil {
		t.Fatal(err)
	}
	return k
}

func ids(ks []kill.Kill) []string {
	out := []string{}
	for _, k := range ks {
		out = append(out, k.ID)
	}
	return out
}

func TestCreateListLift(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	expires := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	a := create(t, s, kill.Kill{Scope: kill.ScopeAgent, Value: "agent-7", Reason: "loops on refunds", CreatedBy: "oncall", ExpiresAt: expires})
	b := create(t, s, kill.Kill{Scope: kill.ScopeAll, Reason: "incident 42", CreatedBy: "oncall"})

	active, err := s.List(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(active); len(got) != 2 || got[0] != a.ID || got[1] != b.ID {
		t.Fatalf("active = %v, want [%s %s]", got, a.ID, b.ID)
	}
	if k := active[0]; k.Scope != kill.ScopeAgent || k.Value != "agent-7" || k.Reason != "loops on refunds" ||
		k.CreatedBy != "oncall" || !k.ExpiresAt.Equal(expires) || !k.LiftedAt.IsZero() || !k.CreatedAt.Equal(a.CreatedAt) {
		t.Fatalf("stored kill = %+v, want %+v", k, a)
	}

	lifted, err := s.Lift(ctx, b.ID, "lead", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if lifted.LiftedBy != "lead" || lifted.LiftedAt.IsZero() || lifted.ID != b.ID {
		t.Fatalf("lifted = %+v", lifted)
	}
	if _, err := s.Lift(ctx, b.ID, "lead", time.Now()); !errors.Is(err, kill.ErrNotFound) {
		t.Fatalf("lifting twice: %v, want kill.ErrNotFound", err)
	}
	for _, id := range []string{"not-a-uuid", "0190b4a8-0000-7000-8000-000000000000", "\xff"} {
		if _, err := s.Lift(ctx, id, "lead", time.Now()); !errors.Is(err, kill.ErrNotFound) {
			t.Fatalf("Lift(%q): %v, want kill.ErrNotFound", id, err)
		}
	}

	active, _ = s.List(ctx, false)
	if got := ids(active); len(got) != 1 || got[0] != a.ID {
		t.Fatalf("active after lift = %v, want [%s]", got, a.ID)
	}
	// The history keeps the lifted kill, newest first.
	all, err := s.List(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(all); len(got) != 2 || got[0] != b.ID || all[0].LiftedBy != "lead" {
		t.Fatalf("all = %+v", all)
	}
}

func TestExpiredKillIsNotActive(t *testing.T) {
	s, u := openStore(t)
	k := create(t, s, kill.Kill{Scope: kill.ScopeTool, Value: "shell.exec", Reason: "r", CreatedBy: "oncall", ExpiresAt: time.Now().Add(time.Hour)})
	pgtest.ExecOn(t, u, "UPDATE kill_switches SET expires_at = now() - interval '1 second' WHERE id = $1", k.ID)
	active, err := s.List(context.Background(), false)
	if err != nil || len(active) != 0 {
		t.Fatalf("active = %v, %v; want none", active, err)
	}
	if _, err := s.Lift(context.Background(), k.ID, "lead", time.Now()); !errors.Is(err, kill.ErrNotFound) {
		t.Fatalf("lifting an expired kill: %v, want kill.ErrNotFound", err)
	}
}

// watch runs Watch on board until the test ends.
func watch(t *testing.T, s *Store, board *kill.Board, resync time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Watch(ctx, board, resync, Hooks{}) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

func TestWatchFollowsKillsOfAnotherStore(t *testing.T) {
	s, u := openStore(t)
	other := New(pgtest.DB(t, u))
	// A resync far beyond the test's deadline: only notifications can
	// bring the kills in.
	board := kill.NewBoard(time.Hour, nil)
	watch(t, s, board, time.Hour)
	testwait.Until(t, "the first load", func() bool { _, err := board.Check(kill.Target{}, nil); return err == nil })

	agent := kill.Target{AgentID: "agent-7"}
	k := create(t, other, kill.Kill{Scope: kill.ScopeAgent, Value: "agent-7", Reason: "r", CreatedBy: "oncall"})
	testwait.Until(t, "the kill to reach the board", func() bool { got, _ := board.Check(agent, nil); return got != nil && got.ID == k.ID })
	if got, err := board.Check(kill.Target{AgentID: "agent-8"}, nil); got != nil || err != nil {
		t.Fatalf("another agent: %v, %v", got, err)
	}
	if _, err := other.Lift(context.Background(), k.ID, "lead", time.Now()); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the lift to reach the board", func() bool { got, err := board.Check(agent, nil); return got == nil && err == nil })
}

func TestWatchGoesStaleWithoutTheDatabase(t *testing.T) {
	s, name, _ := openStoreNamed(t)
	// Stale after a second without a confirmed list: long enough that a
	// loaded machine's slow resyncs still confirm it, short enough to wait.
	board := kill.NewBoard(time.Second, nil)
	var failures atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Watch(ctx, board, 10*time.Millisecond, Hooks{Failed: func(error) { failures.Add(1) }}) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	testwait.Until(t, "the list to be confirmed", func() bool { _, err := board.Check(kill.Target{}, nil); return err == nil })
	pgtest.Exec(t, "DROP DATABASE "+name+" WITH (FORCE)")
	testwait.Until(t, "the board to go stale", func() bool {
		_, err := board.Check(kill.Target{}, nil)
		return errors.Is(err, kill.ErrUnconfirmed)
	})
	testwait.Until(t, "the failure to be reported", func() bool { return failures.Load() > 0 })
}
