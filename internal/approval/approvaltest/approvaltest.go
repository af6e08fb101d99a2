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
)

// Database is a fresh database with every migration applied and the audit
// partitions around now in place (the audit Sink's Maintain is the one
// definition of them).
func Database(t *testing.T, now time.Time) (name, dbURL string) {
	t.Helper()
	name, dbURL = pgtest.Fresh(t)
	ctx := context.Background()
	if err := auditpg.Migrate(ctx, dbURL, "up", io.Discard); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	sink, err := auditpg.Open(ctx, auditpg.Config{URL: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	if err := sink.Maintain(ctx, now); err != nil {
		t.Fatal(err)
	}
	return name, dbURL
}

// SyncRecorder records decisions into dbURL before answering, closed when
// the test ends.
func SyncRecorder(t *testing.T, dbURL string) audit.Recorder {
	t.Helper()
	ctx := context.Background()
	sink, err := auditpg.Open(ctx, auditpg.Config{URL: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := audit.NewRecorder(ctx, sink, audit.Config{Durability: audit.Sync, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(ctx) })
	return rec
}
