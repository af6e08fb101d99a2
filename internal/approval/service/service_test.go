package service

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/postgres"
)

// The sweep marks due approvals expired (counted), purges those past the
// retention and counts what is pending.
func TestApprovalsSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, dbURL := pgtest.Fresh(t)
	if err := postgres.Migrate(ctx, dbURL, "up", io.Discard); err != nil {
		t.Fatal(err)
	}
	m := metrics.New("test")
	s, err := Open(ctx, pgtest.DB(t, dbURL), Config{Retention: 24 * time.Hour}, m, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	now := time.Now()
	mk := func(created time.Time, ttl time.Duration) string {
		ap := &approval.Approval{ID: uuid.Must(uuid.NewV7()).String(), Status: approval.StatusPending, Digest: "sha256:00",
			CreatedAt: created, ExpiresAt: created.Add(ttl), Requester: approval.Identity{TokenName: "runtime"},
			ToolName: "refund", Route: "ask", DecisionID: uuid.Must(uuid.NewV7()).String()}
		if err := s.Create(ctx, ap); err != nil {
			t.Fatal(err)
		}
		return ap.ID
	}
	due := mk(now.Add(-time.Hour), time.Minute)
	old := mk(now.Add(-72*time.Hour), time.Minute)
	open := mk(now, time.Hour)
	s.sweep(ctx, 24*time.Hour)
	if ap, err := s.Get(ctx, due); err != nil || ap.Status != approval.StatusExpired {
		t.Errorf("a due approval after the sweep: %v %v", ap, err)
	}
	if _, err := s.Get(ctx, old); err == nil {
		t.Error("an approval past the retention was not purged")
	}
	if ap, err := s.Get(ctx, open); err != nil || ap.Status != approval.StatusPending {
		t.Errorf("an open approval after the sweep: %v %v", ap, err)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{"gated_approvals_pending 1", `gated_approvals_decided_total{outcome="expired"} 2`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
