package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/gatedhq/gated/internal/actionresult"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/metrics/metricstest"
	"github.com/gatedhq/gated/internal/route"
)

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape status %d", resp.StatusCode)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read scrape: %v", err)
	}
	return string(b)
}

func TestObserveDecisionLabels(t *testing.T) {
	t.Parallel()
	m := metrics.New("v1.2.3")
	m.ObserveDecision(metrics.DecisionLabels{
		Route: route.Refuse, ToolCategory: route.Write, RiskDomain: "finance",
		HardBlockers: []string{"missing_authorization", "write_without_approval"},
		Tool:         "payments:refund",
	}, 3*time.Millisecond)
	m.ObserveDecision(metrics.DecisionLabels{
		Route: route.Accept, ToolCategory: route.PublicRead, RiskDomain: "research", Execute: true, Shadow: true,
	}, 50*time.Microsecond)
	for _, id := range []string{"devops.deploy", "@acme/tools/Refund"} {
		m.ObserveDecision(metrics.DecisionLabels{Route: route.Defer, ToolCategory: route.Write, RiskDomain: "devops", Tool: id}, time.Millisecond)
	}
	// Values a caller must never leak into labels: they are clamped to "other".
	m.ObserveDecision(metrics.DecisionLabels{
		Route: route.Ask, ToolCategory: "rm -rf /", RiskDomain: "alice@example.com",
		HardBlockers: []string{"Bearer sk-live-123 token"}, Tool: "Arbitrary Tool Name!",
	}, time.Millisecond)

	out := scrape(t, m)
	for _, want := range []string{
		`gated_decisions_total{execute="false",risk_domain="finance",route="refuse",shadow="false",tool_category="write"} 1`,
		`gated_decisions_total{execute="true",risk_domain="research",route="accept",shadow="true",tool_category="public_read"} 1`,
		`gated_decisions_total{execute="false",risk_domain="other",route="ask",shadow="false",tool_category="other"} 1`,
		`gated_tool_decisions_total{route="refuse",tool="payments:refund"} 1`,
		`gated_tool_decisions_total{route="accept",tool="other"} 1`,
		`gated_tool_decisions_total{route="ask",tool="other"} 1`,
		`gated_hard_blockers_total{blocker="missing_authorization"} 1`,
		`gated_hard_blockers_total{blocker="write_without_approval"} 1`,
		`gated_hard_blockers_total{blocker="other"} 1`,
		`gated_tool_decisions_total{route="defer",tool="devops.deploy"} 1`,
		`gated_tool_decisions_total{route="defer",tool="@acme/tools/Refund"} 1`,
		`gated_decision_duration_seconds_count 5`,
		`gated_decision_duration_seconds_bucket{le="1e-05"} 0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	for _, leak := range []string{"alice@example.com", "sk-live-123", "rm -rf", "Arbitrary"} {
		if strings.Contains(out, leak) {
			t.Errorf("scrape leaks %q", leak)
		}
	}
}

func TestDecisionBucketsSpan10usTo1s(t *testing.T) {
	t.Parallel()
	out := scrape(t, observed(metrics.New("x")))
	for _, le := range []string{`le="1e-05"`, `le="1"`, `le="+Inf"`} {
		if !strings.Contains(out, `gated_decision_duration_seconds_bucket{`+le+`}`) {
			t.Errorf("decision histogram has no bucket %s", le)
		}
	}
}

func observed(m *metrics.Metrics) *metrics.Metrics {
	m.ObserveDecision(metrics.DecisionLabels{Route: route.Accept, ToolCategory: route.PublicRead, RiskDomain: "research"}, time.Microsecond)
	return m
}

// auditMetrics is internal/audit's Metrics interface, restated so this test
// fails if *Metrics stops fitting it.
type auditMetrics interface {
	QueueDepth(n int)
	Recorded(sink, outcome string)
	SpoolBytes(n int64)
	WriteError(sink string)
}

func TestAuditHooks(t *testing.T) {
	t.Parallel()
	m := metrics.New("x")
	var a auditMetrics = m
	a.QueueDepth(7)
	for range 7 {
		a.Recorded("postgres", metrics.AuditWritten)
	}
	a.Recorded("spool", metrics.AuditSpooled)
	a.Recorded("postgres", metrics.AuditReplayed)
	a.Recorded("spool", metrics.AuditDropped)
	a.Recorded("postgres", "lost_in_space")
	a.Recorded("Sink With Secret sk-1", metrics.AuditWritten)
	a.SpoolBytes(4096)
	a.WriteError("postgres")
	a.WriteError("postgres")

	out := scrape(t, m)
	for _, want := range []string{
		"gated_audit_queue_depth 7",
		`gated_audit_records_total{outcome="written",sink="postgres"} 7`,
		`gated_audit_records_total{outcome="spooled",sink="spool"} 1`,
		`gated_audit_records_total{outcome="replayed",sink="postgres"} 1`,
		`gated_audit_records_total{outcome="dropped",sink="spool"} 1`,
		`gated_audit_records_total{outcome="other",sink="postgres"} 1`,
		`gated_audit_records_total{outcome="written",sink="other"} 1`,
		"gated_audit_spool_bytes 4096",
		`gated_audit_write_errors_total{sink="postgres"} 2`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if strings.Contains(out, "sk-1") {
		t.Error("a malformed sink name reached a label")
	}
}

// auditBackpressure is internal/audit's Backpressure interface, restated
// likewise: the recorder reports overload only to a Metrics that fits it.
type auditBackpressure interface {
	QueueCapacity(n int)
	QueueFull(sink string)
	SpoolBatch(records int)
}

func TestAuditBackpressureHooks(t *testing.T) {
	t.Parallel()
	m := metrics.New("x")
	// Before any overload the counters read 0, so rate() and alerts work.
	before := scrape(t, m)
	for _, want := range []string{
		`gated_audit_queue_full_total{sink="postgres"} 0`,
		`gated_audit_queue_full_total{sink="file"} 0`,
		"gated_audit_spool_batch_records_count 0",
	} {
		if !strings.Contains(before, want) {
			t.Errorf("before any overload, the scrape lacks %q", want)
		}
	}
	var a auditBackpressure = m
	a.QueueCapacity(10000)
	a.QueueFull("postgres")
	a.QueueFull("postgres")
	a.QueueFull("Sink With Secret sk-1")
	for _, n := range []int{1, 3, 128, 5000} {
		a.SpoolBatch(n)
	}
	out := scrape(t, m)
	for _, want := range []string{
		"gated_audit_queue_capacity 10000",
		`gated_audit_queue_full_total{sink="postgres"} 2`,
		`gated_audit_queue_full_total{sink="other"} 1`,
		`gated_audit_spool_batch_records_bucket{le="1"} 1`,
		`gated_audit_spool_batch_records_bucket{le="4"} 2`,
		`gated_audit_spool_batch_records_bucket{le="128"} 3`,
		`gated_audit_spool_batch_records_bucket{le="4096"} 3`,
		`gated_audit_spool_batch_records_bucket{le="+Inf"} 4`,
		"gated_audit_spool_batch_records_sum 5132",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if strings.Contains(out, "sk-1") {
		t.Error("a malformed sink name reached a label")
	}
}

func TestReloadAndRevisions(t *testing.T) {
	t.Parallel()
	m := metrics.New("x")
	out := scrape(t, m)
	// Failures read 0 before the first one so increase() alerts work at once.
	for _, want := range []string{
		`gated_catalog_reload_total{result="failure"} 0`, `gated_policy_reload_total{result="failure"} 0`,
		`gated_audit_write_errors_total{sink="postgres"} 0`, `gated_audit_write_errors_total{sink="spool"} 0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	m.CatalogReload(true)
	m.CatalogReload(false)
	m.PolicyReload(true)
	m.PolicyReload(true)
	m.SetRevisions("cat-aaaa", "pol-1111")
	m.SetRevisions("cat-bbbb", "pol-2222")

	out = scrape(t, m)
	for _, want := range []string{
		`gated_catalog_reload_total{result="success"} 1`,
		`gated_catalog_reload_total{result="failure"} 1`,
		`gated_policy_reload_total{result="success"} 2`,
		`gated_revision_info{catalog="cat-bbbb",policy="pol-2222"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if strings.Contains(out, "cat-aaaa") {
		t.Error("the previous revision pair is still exported")
	}
}

func TestBuildInfoAndRuntimeCollectors(t *testing.T) {
	t.Parallel()
	out := scrape(t, metrics.New("v0.4.0"))
	for _, want := range []string{`gated_build_info{version="v0.4.0"} 1`, "go_goroutines ", "process_start_time_seconds "} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if !strings.Contains(scrape(t, metrics.New("")), `gated_build_info{version="unknown"} 1`) {
		t.Error("an empty version is not reported as unknown")
	}
}

func TestMetricNamesPassLint(t *testing.T) {
	t.Parallel()
	m := metrics.New("x")
	metricstest.Exercise(m)
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatalf("lint: %v", err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "gated_") {
			t.Errorf("%s: %s", p.Metric, p.Text)
		}
	}
}

// The approval instruments: closed label sets, pre-created, and a decision
// latency only for what a person decided.
func TestApprovalMetrics(t *testing.T) {
	t.Parallel()
	m := metrics.New("test")
	before := scrape(t, m)
	for _, want := range []string{
		`gated_approvals_pending 0`,
		`gated_approvals_decided_total{outcome="used"} 0`,
		`gated_approvals_errors_total{operation="consume"} 0`,
		`gated_approval_webhook_events_total{outcome="dropped"} 0`,
	} {
		if !strings.Contains(before, want) {
			t.Errorf("before any approval, the scrape lacks %s", want)
		}
	}
	m.ApprovalsPending(3)
	m.ApprovalDecided(metrics.ApprovalApproved, 1, 90*time.Second)
	m.ApprovalDecided(metrics.ApprovalExpired, 4, 0)
	m.ApprovalDecided("operator://bob", 1, time.Second) // not an outcome
	m.ApprovalError(metrics.ApprovalOpCreate)
	m.ApprovalError("SELECT 1")
	m.WebhookEvent(metrics.WebhookDelivered)
	out := scrape(t, m)
	for _, want := range []string{
		`gated_approvals_pending 3`,
		`gated_approvals_decided_total{outcome="approved"} 1`,
		`gated_approvals_decided_total{outcome="expired"} 4`,
		`gated_approvals_decided_total{outcome="other"} 1`,
		`gated_approval_decision_seconds_count 1`,
		`gated_approval_decision_seconds_bucket{le="120"} 1`,
		`gated_approvals_errors_total{operation="create"} 1`,
		`gated_approvals_errors_total{operation="other"} 1`,
		`gated_approval_webhook_events_total{outcome="delivered"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(out, "operator://bob") || strings.Contains(out, "SELECT") {
		t.Error("a value outside the closed sets became a label")
	}
}

// Outcomes: the result envelope's statuses, pre-created; nothing else
// becomes a label.
func TestOutcomeMetrics(t *testing.T) {
	t.Parallel()
	m := metrics.New("test")
	if before := scrape(t, m); !strings.Contains(before, `gated_outcomes_total{status="failed"} 0`) {
		t.Error("before any outcome, the scrape lacks the failed series at 0")
	}
	m.OutcomeRecorded(actionresult.Succeeded)
	m.OutcomeRecorded(actionresult.Succeeded)
	m.OutcomeRecorded("sk-not-a-status")
	out := scrape(t, m)
	for _, want := range []string{`gated_outcomes_total{status="succeeded"} 2`, `gated_outcomes_total{status="other"} 1`} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(out, "sk-not-a-status") {
		t.Error("a value outside the statuses became a label")
	}
}

func TestLimitBackendErrors(t *testing.T) {
	t.Parallel()
	m := metrics.New("x")
	if out := scrape(t, m); !strings.Contains(out, `gated_limit_backend_errors_total{backend="redis",outcome="refused"} 0`) {
		t.Error("the refused count is absent before the first error")
	}
	m.LimitBackendError(false)
	m.LimitBackendError(false)
	m.LimitBackendError(true)
	out := scrape(t, m)
	for _, want := range []string{
		`gated_limit_backend_errors_total{backend="redis",outcome="refused"} 2`,
		`gated_limit_backend_errors_total{backend="redis",outcome="allowed"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
}
