package postgres_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/migrations"
)

func TestMigrateUpStatusDown(t *testing.T) {
	t.Parallel()
	_, u := pgtest.Fresh(t)
	ctx := context.Background()
	var out bytes.Buffer
	if err := postgres.Migrate(ctx, u, "status", &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "00001_audit_decisions.sql pending") {
		t.Fatalf("status before up: %q", out.String())
	}
	// Replicas starting together: the advisory lock lets one apply, the rest see nothing to do.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	outs := make([]bytes.Buffer, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = postgres.Migrate(ctx, u, "up", &outs[i]) })
	}
	wg.Wait()
	applied := 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent up %d: %v", i, err)
		}
		if strings.Contains(outs[i].String(), "up 00001_audit_decisions.sql") {
			applied++
		}
	}
	if applied != 1 {
		t.Fatalf("migration applied %d times", applied)
	}
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM pg_class WHERE relname = 'audit_decisions'"); n != 1 {
		t.Fatal("no audit_decisions table after up")
	}
	out.Reset()
	postgres.Migrate(ctx, u, "status", &out)
	if !strings.Contains(out.String(), "00001_audit_decisions.sql applied") {
		t.Fatalf("status after up: %q", out.String())
	}
	// down rolls back the latest migration: as many as there are.
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for range files {
		if err := postgres.Migrate(ctx, u, "down", io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM pg_class WHERE relname = 'audit_decisions'"); n != 0 {
		t.Fatal("audit_decisions still there after down")
	}
	out.Reset()
	if err := postgres.Migrate(ctx, u, "down", &out); err != nil || !strings.Contains(out.String(), "nothing to roll back") {
		t.Fatalf("down with nothing applied: %v %q", err, out.String())
	}
	if err := postgres.Migrate(ctx, u, "sideways", &out); err == nil {
		t.Fatal("unknown direction accepted")
	}
	if err := postgres.Migrate(ctx, "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=1", "up", &out); err == nil {
		t.Fatal("unreachable database accepted")
	}
}

// TestMigrateSaysTheDatabaseIsUnreachable: an operator reads what is wrong,
// not goose's "failed to initialize".
func TestMigrateSaysTheDatabaseIsUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	err = postgres.Migrate(context.Background(), "postgres://postgres@"+addr+"/x?sslmode=disable&connect_timeout=5", "up", io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "the audit database cannot be reached: ") || strings.Contains(err.Error(), "failed to initialize") {
		t.Fatalf("Migrate to a closed port = %v, want the database named unreachable", err)
	}
}
