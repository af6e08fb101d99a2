package postgres

import (
	"context"
	"io"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/pgtest"
)

// migratedDB is a fresh database with the schema applied.
func migratedDB(t testing.TB) (string, string) {
	t.Helper()
	name, u := pgtest.Fresh(t)
	if err := Migrate(context.Background(), u, "up", io.Discard); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	return name, u
}

func openSink(t testing.TB, u string, retention time.Duration) *Sink {
	t.Helper()
	s, err := Open(context.Background(), Config{URL: u, Retention: retention, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
