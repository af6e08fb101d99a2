// Package approvaltest sets up what approval tests share: a PostgreSQL
// database of the test's own with gated's schema and the audit partitions
// an approval's consumption writes into, and a synchronous audit recorder.
package approvaltest

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	auditpg "github.com/gatedhq/gated/internal/audit/postgres"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/postgres"
)

// Database is a fresh database with every migration applied and the audit
// partitions around now in place (the audit Sink's Maintain is the one
// definition of them).
func Database(t *testing.T, now time.Time) (name, dbURL string) {
	t.Helper()
	name, dbURL = pgtest.Fresh(t)
	ctx := context.Background()
	if err := postgres.Migrate(ctx, dbURL, "up", io.Discard); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	if err := auditpg.New(pgtest.DB(t, dbURL), auditpg.Config{}).Maintain(ctx, now); err != nil {
		t.Fatal(err)
	}
	return name, dbURL
}

// SyncRecorder records decisions into dbURL before answering, closed when
// the test ends.
func SyncRecorder(t *testing.T, dbURL string) audit.Recorder {
	t.Helper()
	ctx := context.Background()
	rec, err := audit.NewRecorder(ctx, auditpg.New(pgtest.DB(t, dbURL), auditpg.Config{}), audit.Config{Durability: audit.Sync, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(ctx) })
	return rec
}
