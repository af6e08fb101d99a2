package postgres

import (
	"context"
	"io"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/postgres"
)

// migratedDB is a fresh database with the schema applied.
func migratedDB(t testing.TB) (string, string) {
	t.Helper()
	name, u := pgtest.Fresh(t)
	if err := postgres.Migrate(context.Background(), u, "up", io.Discard); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	return name, u
}

func openSink(t testing.TB, u string, retention time.Duration) *Sink {
	t.Helper()
	return New(pgtest.DB(t, u), Config{Retention: retention, Logger: zap.NewNop()})
}
