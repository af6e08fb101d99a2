// Package metricstest drives every gated metric so tests (the metrics lint,
// the Grafana dashboard check) see each family with at least one series.
package metricstest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/gatedhq/gated/internal/actionresult"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/route"
)

// Exercise calls every recording method of m, the HTTP middleware included.
func Exercise(m *metrics.Metrics) {
	m.ObserveDecision(metrics.DecisionLabels{
		Route: route.Refuse, ToolCategory: route.Write, RiskDomain: "finance",
		HardBlockers: []string{"missing_authorization"}, Tool: "payments:refund",
	}, 2*time.Millisecond)
	m.ObserveDecision(metrics.DecisionLabels{
		Route: route.Accept, ToolCategory: route.PublicRead, RiskDomain: "research", Execute: true,
	}, 40*time.Microsecond)

	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	m.HTTP(func(context.Context) string { return "/pre-tool-check" })(ok).
		ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/pre-tool-check", nil))
	m.HTTP(func(context.Context) string { return metrics.Unmatched })(http.NotFoundHandler()).
		ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/missing", nil))

	m.QueueDepth(3)
	m.QueueCapacity(10000)
	m.QueueFull("postgres")
	m.SpoolBatch(12)
	for _, o := range []string{metrics.AuditWritten, metrics.AuditSpooled, metrics.AuditReplayed, metrics.AuditDropped, metrics.AuditUnavailable} {
		m.Recorded("postgres", o)
	}
	m.SpoolBytes(1024)
	m.WriteError("postgres")
	m.CatalogReload(true)
	m.PolicyReload(false)
	m.SetRevisions("catalog-rev", "policy-rev")
	m.OutcomeRecorded(actionresult.Succeeded)
	m.CandidateOn()
	m.CandidateDecided(route.Refuse, route.Accept)
	m.CandidateSkipped()
	m.CandidateWriteErrors(1)
}
