package service

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/testgated"
)

// newApproval is a pending approval the runtime asked for, open an hour.
func newApproval() *approval.Approval {
	now := time.Now()
	return &approval.Approval{ID: uuid.Must(uuid.NewV7()).String(), Status: approval.StatusPending, Digest: "sha256:00",
		CreatedAt: now, ExpiresAt: now.Add(time.Hour), Requester: approval.Identity{TokenName: "runtime"},
		ToolName: "refund", Route: "ask", DecisionID: uuid.Must(uuid.NewV7()).String()}
}

// scrape is m's exposition text.
func scrape(m *metrics.Metrics) string {
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

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
	text := scrape(m)
	for _, want := range []string{"gated_approvals_pending 1", `gated_approvals_decided_total{outcome="expired"} 2`} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// A creation and a decision are each announced to the webhook, signed, and
// counted; deciding again is a refusal, not a store failure; what the
// webhook still holds at Close is delivered.
func TestServiceAnnouncesAndCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	secret := []byte("service-webhook-secret-0123456789abcdef")
	var (
		mu  sync.Mutex
		got []approval.EventType
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev approval.Event
		if approval.Verify(secret, r.Header.Get(approval.SignatureHeader), body, time.Now(), 0) != nil || json.Unmarshal(body, &ev) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		got = append(got, ev.Type)
		mu.Unlock()
	}))
	defer hook.Close()
	_, dbURL := pgtest.Fresh(t)
	if err := postgres.Migrate(ctx, dbURL, "up", io.Discard); err != nil {
		t.Fatal(err)
	}
	m := metrics.New("test")
	s, err := Open(ctx, pgtest.DB(t, dbURL), Config{Webhook: hook.URL, WebhookSecret: secret}, m, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	ap := newApproval()
	if err := s.Create(ctx, ap); err != nil {
		t.Fatal(err)
	}
	alice := approval.Identity{TokenName: "alice"}
	if _, err := s.Decide(ctx, ap.ID, alice, true, "checked", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decide(ctx, ap.ID, alice, false, "again", time.Now()); !errors.As(err, new(*approval.Error)) {
		t.Fatalf("deciding again: %v, want a refusal", err)
	}
	s.Close(ctx)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != approval.EventRequested || got[1] != approval.EventDecided {
		t.Errorf("webhook events %v, want requested then decided", got)
	}
	text := scrape(m)
	for _, want := range []string{`gated_approvals_decided_total{outcome="approved"} 1`, "gated_approval_decision_seconds_count 1",
		`gated_approval_webhook_events_total{outcome="delivered"} 2`} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if !strings.Contains(text, `gated_approvals_errors_total{operation="decide"} 0`) {
		t.Errorf("a refusal was counted as a store failure:\n%s", text)
	}
}

// A store that cannot be reached fails the operation, counted by name; a
// webhook URL that is not one stops Open.
func TestServiceCountsStoreFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := metrics.New("test")
	dead := "postgres://postgres@" + testgated.ClosedAddr(t) + "/gated?sslmode=disable&connect_timeout=1"
	s, err := Open(ctx, pgtest.DB(t, dead), Config{}, m, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if err := s.Create(ctx, newApproval()); err == nil {
		t.Fatal("creating with the database away succeeded")
	}
	if text := scrape(m); !strings.Contains(text, `gated_approvals_errors_total{operation="create"} 1`) {
		t.Errorf("the failed create is not counted:\n%s", text)
	}
	if _, err := Open(ctx, pgtest.DB(t, dead), Config{Webhook: "hooks.example.com/x", WebhookSecret: []byte("s")}, m, zap.NewNop()); err == nil {
		t.Error("a webhook that is no URL opened")
	}
}
