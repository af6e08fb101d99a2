package postgres_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/testwait"
)

// A listener whose connection is cut reports why, reconnects, listens
// again (Up once more, after Down) and is notified on the new session.
func TestListenReconnectsAfterTheConnectionIsCut(t *testing.T) {
	t.Parallel()
	_, u := pgtest.Fresh(t)
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["application_name"] = "listen test"
	var ups, downs, failures atomic.Int64
	var mu sync.Mutex
	var got []string
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		postgres.Listen(ctx, postgres.Listener{
			Conn: cfg, Channel: "listen_test", Heartbeat: time.Hour,
			Up: func(context.Context, *pgx.Conn) error { ups.Add(1); return nil },
			Notify: func(_ context.Context, _ *pgx.Conn, n *pgconn.Notification) error {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, n.Payload)
				return nil
			},
			Down:   func() { downs.Add(1) },
			Failed: func(error) { failures.Add(1) },
		})
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	notified := func(payload string) func() bool {
		return func() bool {
			pgtest.ExecOn(t, u, "SELECT pg_notify('listen_test', $1)", payload)
			mu.Lock()
			defer mu.Unlock()
			return len(got) > 0 && got[len(got)-1] == payload
		}
	}
	testwait.Until(t, "the first notification", notified("one"))
	pgtest.ExecOn(t, u, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'listen test'")
	testwait.Until(t, "a second session", func() bool { return ups.Load() == 2 })
	if downs.Load() != 1 || failures.Load() != 1 {
		t.Fatalf("after one cut: %d downs, %d failures; want one each", downs.Load(), failures.Load())
	}
	testwait.Until(t, "a notification on the new session", notified("two"))
}

// A session whose Up fails never counts as up: no Down, the failure
// reported, and the listener keeps trying.
func TestListenRetriesAFailedUp(t *testing.T) {
	t.Parallel()
	_, u := pgtest.Fresh(t)
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("not ready")
	var ups, downs atomic.Int64
	var failures []error
	var mu sync.Mutex
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		postgres.Listen(ctx, postgres.Listener{
			Conn: cfg, Channel: "listen_test", Heartbeat: time.Hour,
			Up:   func(context.Context, *pgx.Conn) error { ups.Add(1); return refused },
			Down: func() { downs.Add(1) },
			Failed: func(err error) {
				mu.Lock()
				defer mu.Unlock()
				failures = append(failures, err)
			},
		})
	})
	testwait.Until(t, "a retried Up", func() bool { return ups.Load() >= 2 })
	cancel()
	wg.Wait()
	if downs.Load() != 0 {
		t.Fatalf("%d downs after Ups that failed", downs.Load())
	}
	for _, err := range failures {
		if !errors.Is(err, refused) {
			t.Fatalf("failure %v, want %v", err, refused)
		}
	}
}
