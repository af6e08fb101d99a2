package audit

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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

// query runs a single-value query on the test database.
func queryInt(t testing.TB, dbURL, sql string, args ...any) int {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// testRecord is a plausible redacted record with id i.
func testRecord(i int, at time.Time) *Record {
	rd := NewRedactor([]byte("test-key"))
	return rd.Build(Input{
		DecisionID: fmt.Sprintf("dec-%06d", i), Time: at,
		RequestID: fmt.Sprintf("req-%d", i), AgentID: "agent-1", ToolName: []string{"send_email", "get_weather"}[i%2],
		ActionID: "email:send", ActionVersion: "1.0.0",
		DeclaredCategory: "write", EffectiveCategory: "write", DeclaredAuth: "user_claimed", EffectiveAuth: "user_claimed",
		RiskDomain: "customer_support", RuntimeRoute: "accept", FinalRoute: []string{"ask", "accept", "refuse"}[i%3],
		GateDecision: "fail", HardBlockers: []string{"write_missing_explicit_confirmation"},
		Reasons: []string{"write needs confirmation"}, FindingCodes: []string{"contract.write_missing_explicit_confirmation"},
		Arguments: map[string]any{"to": "x", "body": "y"}, CatalogRevision: "cat-1", PolicyRevision: "pol-1",
		TokenName: "ci", Version: "test", Latency: 1500 * time.Microsecond,
	})
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
