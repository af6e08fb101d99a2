package postgres

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/approval/approvaltest"
)

// listening waits until s's listener has had n sessions and listens now.
func listening(t *testing.T, ctx context.Context, s *Store, n int) {
	t.Helper()
	if n == 1 {
		if err := s.Listening(ctx); err != nil {
			t.Fatalf("the listener does not listen: %v", err)
		}
		return
	}
	for {
		s.l.mu.Lock()
		ok, changed := s.l.up && s.l.sessions >= n, s.l.changed
		s.l.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("the listener did not get to its session %d", n)
		}
	}
}

// blocked makes s report each time a Wait has read the approval and
// blocks; set it before any Wait starts.
func blocked(s *Store) <-chan string {
	c := make(chan string, 16)
	s.waiting = func(id string) { c <- id }
	return c
}

type waitResult struct {
	a   *approval.Approval
	err error
}

func waitAsync(ctx context.Context, s *Store, id string, seen approval.Status) <-chan waitResult {
	c := make(chan waitResult, 1)
	go func() {
		a, err := s.Wait(ctx, id, seen)
		c <- waitResult{a, err}
	}()
	return c
}

func receive[T any](t *testing.T, ctx context.Context, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-ctx.Done():
		t.Fatalf("no %s before the test's deadline", what)
		panic("unreachable")
	}
}

// Replicas share approvals only through PostgreSQL: a decision made
// through one Store wakes a Wait on another.
func TestWaitWakesOnAnotherReplicasChange(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	_, u := approvaltest.Database(t, now)
	a, b := openStore(t, u), openStore(t, u)
	ctx := deadline(t)
	ap := create(t, b, pendingApproval(t, now))
	listening(t, ctx, a, 1)
	waiting := blocked(a)

	res := waitAsync(ctx, a, ap.ID, approval.StatusPending)
	receive(t, ctx, waiting, "blocked wait") // it read pending and waits: only a notification can wake it now
	if _, err := b.Decide(ctx, ap.ID, alice, true, "", now); err != nil {
		t.Fatal(err)
	}
	r := receive(t, ctx, res, "Wait result")
	if r.err != nil || r.a.Status != approval.StatusApproved || r.a.Approver.TokenName != alice.TokenName {
		t.Fatalf("Wait = %+v, %v; want the approval approved by alice", r.a, r.err)
	}
	// The consumption, through the first replica, wakes a Wait on the second.
	waitingB := blocked(b)
	res = waitAsync(ctx, b, ap.ID, approval.StatusApproved)
	receive(t, ctx, waitingB, "blocked wait")
	if _, err := a.Consume(ctx, ap.ID, digestOne, runtimeA, now, consumingRecord(t, 0, ap.ID, now)); err != nil {
		t.Fatal(err)
	}
	if r := receive(t, ctx, res, "Wait result"); r.err != nil || r.a.Status != approval.StatusUsed {
		t.Fatalf("Wait = %+v, %v; want the approval used", r.a, r.err)
	}
}

// When its context ends Wait returns the approval unchanged, not an
// error; when the status already differs it returns without waiting at
// all.
func TestWaitDeadlineAndAlreadyChanged(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	_, u := approvaltest.Database(t, now)
	s := openStore(t, u)
	waiting := blocked(s)
	ap := create(t, s, pendingApproval(t, now))

	// The deadline passes while it waits (ended once it is known to wait,
	// so a slow machine cannot end it before the first read).
	ctx := deadline(t)
	short, cancel := context.WithCancel(ctx)
	res := waitAsync(short, s, ap.ID, approval.StatusPending)
	receive(t, ctx, waiting, "blocked wait")
	cancel()
	if r := receive(t, ctx, res, "Wait result"); r.err != nil || r.a == nil || r.a.Status != approval.StatusPending || r.a.ID != ap.ID {
		t.Fatalf("Wait at its deadline = %+v, %v; want the pending approval", r.a, r.err)
	}

	got, err := s.Wait(ctx, ap.ID, approval.StatusApproved) // the caller last saw approved; it is pending
	if err != nil || got.Status != approval.StatusPending {
		t.Fatalf("Wait with another status seen = %+v, %v", got, err)
	}
	select {
	case <-waiting:
		t.Fatal("Wait blocked though the status already differed")
	default:
	}
	for _, id := range []string{newID(t), "nope"} {
		if a, err := s.Wait(ctx, id, approval.StatusPending); a != nil || err != approval.ErrNotFound {
			t.Errorf("Wait(%q) = %v, %v; want approval.ErrNotFound", id, a, err)
		}
	}
	// A Store closing ends its waits with the approval as last read.
	res = waitAsync(ctx, s, ap.ID, approval.StatusPending)
	receive(t, ctx, waiting, "blocked wait")
	s.Close()
	if r := receive(t, ctx, res, "Wait result"); r.err != nil || r.a.Status != approval.StatusPending {
		t.Fatalf("Wait when the Store closed = %+v, %v", r.a, r.err)
	}
}

// A subscription sees the ids of approvals created and changed through
// another replica, and is closed when its context ends.
func TestSubscribe(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	_, u := approvaltest.Database(t, now)
	a, b := openStore(t, u), openStore(t, u)
	ctx := deadline(t)
	subCtx, unsubscribe := context.WithCancel(ctx)
	ids := a.Subscribe(subCtx)
	listening(t, ctx, a, 1)

	ap := create(t, b, pendingApproval(t, now))
	if _, err := b.Decide(ctx, ap.ID, alice, true, "", now); err != nil {
		t.Fatal(err)
	}
	other := create(t, b, pendingApproval(t, now))
	var seen []string
	for len(seen) < 3 {
		id, ok := <-ids
		if !ok {
			t.Fatal("the subscription closed early")
		}
		if id != Resync { // the first connection resyncs whoever subscribed before it
			seen = append(seen, id)
		}
	}
	if want := []string{ap.ID, ap.ID, other.ID}; !slices.Equal(seen, want) {
		t.Fatalf("subscription saw %v, want %v (create, decide, create)", seen, want)
	}
	unsubscribe()
	for range ids { // drained, then closed
	}
	if err := b.Listening(ctx); err != nil {
		t.Fatal(err)
	}
	// Closing the Store closes the subscriptions left open.
	left := b.Subscribe(ctx)
	b.Close()
	for range left {
	}
	if _, ok := <-b.Subscribe(ctx); ok {
		t.Fatal("a closed Store's subscription is open")
	}
	if err := b.Listening(ctx); err == nil {
		t.Fatal("a closed Store says it listens")
	}
}

// A subscriber that falls behind is told to resync rather than blocking
// the listener or silently missing ids.
func TestSubscriptionOverflowResyncs(t *testing.T) {
	t.Parallel()
	sub := &subscription{ch: make(chan string, 2)}
	for _, id := range []string{"a", "b", "c", "d"} {
		sub.offer(id)
	}
	if got := []string{<-sub.ch, <-sub.ch}; !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("buffered %v", got)
	}
	sub.offer("e")
	if got := []string{<-sub.ch, <-sub.ch}; !slices.Equal(got, []string{Resync, "e"}) {
		t.Fatalf("after overflow %v, want a resync before the next id", got)
	}
	sub.offer(Resync)
	sub.offer("f")
	if got := []string{<-sub.ch, <-sub.ch}; !slices.Equal(got, []string{Resync, "f"}) {
		t.Fatalf("after a reconnect %v", got)
	}
}

// The listener survives its connection being killed: PostgreSQL ends its
// backend (as a failover or an operator would), it reconnects, and a
// change made afterwards wakes a waiter that was waiting all along, and a
// new one.
func TestListenerSurvivesDroppedConnection(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	name, u := approvaltest.Database(t, now)
	a, b := openStore(t, u), openStore(t, u)
	ctx := deadline(t)
	listening(t, ctx, a, 1)
	listening(t, ctx, b, 1)
	admin, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	listenerPIDs := func() []int32 {
		rows, err := admin.Query(ctx, `SELECT pid FROM pg_stat_activity
			WHERE datname = $1 AND application_name = $2 ORDER BY pid`, name, listenerName)
		if err != nil {
			t.Fatal(err)
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			t.Fatal(err)
		}
		return pids
	}
	before := listenerPIDs()
	if len(before) != 2 {
		t.Fatalf("%d listener backends, want one per Store", len(before))
	}

	first := create(t, b, pendingApproval(t, now))
	second := create(t, b, pendingApproval(t, now))
	waiting := blocked(a)
	oldWait := waitAsync(ctx, a, first.ID, approval.StatusPending)
	receive(t, ctx, waiting, "blocked wait")

	var killed int
	if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = $1 AND application_name = $2`, name, listenerName).Scan(&killed); err != nil || killed != 2 {
		t.Fatalf("terminated %d listener backends, %v", killed, err)
	}
	listening(t, ctx, a, 2)
	listening(t, ctx, b, 2)
	// Back, the listener woke every waiter to re-read what it may have
	// missed; the old waiter read pending again and waits once more.
	receive(t, ctx, waiting, "blocked wait after the reconnect")
	if after := listenerPIDs(); len(after) != 2 || slices.ContainsFunc(after, func(p int32) bool { return slices.Contains(before, p) }) {
		t.Fatalf("listener backends %v after killing %v: want two new ones", after, before)
	}
	newWait := waitAsync(ctx, a, second.ID, approval.StatusPending)
	receive(t, ctx, waiting, "blocked wait")

	// Changes after the reconnect, through the other replica.
	if _, err := b.Decide(ctx, first.ID, alice, true, "", now); err != nil {
		t.Fatal(err)
	}
	if r := receive(t, ctx, oldWait, "the old waiter"); r.err != nil || r.a.Status != approval.StatusApproved {
		t.Fatalf("the waiter from before the drop: %+v, %v", r.a, r.err)
	}
	if _, err := b.Decide(ctx, second.ID, alice, false, "", now); err != nil {
		t.Fatal(err)
	}
	if r := receive(t, ctx, newWait, "the new waiter"); r.err != nil || r.a.Status != approval.StatusDenied {
		t.Fatalf("the waiter from after the drop: %+v, %v", r.a, r.err)
	}
}
