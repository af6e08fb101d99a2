package postgres_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/postgres"
)

func TestOpenRejectsABadURL(t *testing.T) {
	t.Parallel()
	if _, err := postgres.Open(context.Background(), "postgres://%zz"); err == nil {
		t.Error("a URL that does not parse was accepted")
	}
}

// The one pool is sized for the four parts that used to have a pool each,
// unless the URL sizes it.
func TestPoolSize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url  string
		want int32
	}{
		{"postgres://postgres@127.0.0.1:1/x", 4 * int32(max(4, runtime.NumCPU()))},
		{"postgres://postgres@127.0.0.1:1/x?pool_max_conns=3", 3},
		{"host=127.0.0.1 port=1 pool_max_conns=7", 7},
	} {
		db, err := postgres.Open(context.Background(), c.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := db.Pool().Config().MaxConns; got != c.want {
			t.Errorf("%s: %d connections, want %d", c.url, got, c.want)
		}
		db.Close()
	}
}

// Every connection of the pool knows its server session's start, which
// names the session even after its pid is reused.
func TestSessionStart(t *testing.T) {
	t.Parallel()
	_, u := pgtest.Fresh(t)
	db := pgtest.DB(t, u)
	conn, err := db.Pool().Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	started, ok := postgres.SessionStart(conn.Conn().PgConn())
	if !ok || started.IsZero() {
		t.Fatalf("session start %v, %v", started, ok)
	}
}
