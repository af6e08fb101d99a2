package audit_test

import (
	"context"
	"io"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/audit/file"
	"github.com/gatedhq/gated/internal/audit/postgres"
	"github.com/gatedhq/gated/internal/pgtest"
	pgdb "github.com/gatedhq/gated/internal/postgres"
)

// migratedDB is a fresh database with the schema applied.
func migratedDB(t testing.TB) (string, string) {
	t.Helper()
	name, u := pgtest.Fresh(t)
	if err := pgdb.Migrate(context.Background(), u, "up", io.Discard); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	return name, u
}

// parseHost returns the host:port of a PostgreSQL URL.
func parseHost(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	if p.Port() == "" {
		return p.Hostname() + ":5432", nil
	}
	return p.Host, nil
}

// newProxy is a TCP proxy in front of the test PostgreSQL.
func newProxy(t *testing.T, target string) *audittest.Proxy { return audittest.NewProxy(t, target) }

func upstream(t *testing.T) string {
	t.Helper()
	u, err := parseHost(pgtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// config is a recorder's settings and its PostgreSQL sink's.
type config struct {
	audit.Config
	DatabaseURL string
	Migrate     bool
}

func testConfig(dbURL string, t *testing.T) config {
	return config{
		DatabaseURL: dbURL,
		Config: audit.Config{
			SpoolDir:      filepath.Join(t.TempDir(), "spool"),
			FlushInterval: 10 * time.Millisecond, RetryInterval: 50 * time.Millisecond,
			WriteTimeout: 2 * time.Second, BatchSize: 200,
		},
	}
}

// open starts a recorder on a PostgreSQL sink, as gated does with a database.
func open(t testing.TB, cfg config) audit.Recorder {
	t.Helper()
	ctx := context.Background()
	sink := postgres.New(pgtest.DB(t, cfg.DatabaseURL), postgres.Config{Migrate: cfg.Migrate, Logger: cfg.Logger})
	r, err := audit.NewRecorder(ctx, sink, cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// openFile starts a recorder on the file sink, as gated does without one.
func openFile(t testing.TB, path string, cfg audit.Config) audit.Recorder {
	t.Helper()
	sink, err := file.Open(path, cfg.Durability == audit.Sync)
	if err != nil {
		t.Fatal(err)
	}
	r, err := audit.NewRecorder(context.Background(), sink, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func closeRec(t testing.TB, r audit.Recorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// assertChainHolds verifies every chain the database holds (checkpoints
// taken as stored): spool replays and corrections keep them whole.
func assertChainHolds(t *testing.T, dbURL string) {
	t.Helper()
	tr, err := postgres.ReadTrail(context.Background(), pgtest.DB(t, dbURL))
	if err != nil {
		t.Fatal(err)
	}
	if v := tr.Verify(nil); !v.OK() || len(v.Chains) == 0 {
		for _, c := range v.Chains {
			t.Logf("chain %s: %+v", c.Chain, c.Problem)
		}
		t.Fatalf("the stored chains do not verify: %d unlinked records", len(v.Unlinked))
	}
}

// waitSpoolEmpty waits until every spooled record has been replayed, the
// spools adopted from stopped processes included.
func waitSpoolEmpty(t *testing.T, r audit.Recorder) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for audit.Spooled(r) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("spool still holds %d bytes", audit.Spooled(r))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
