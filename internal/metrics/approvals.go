package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Approval outcomes, the closed set of gated_approvals_decided_total{outcome}.
const (
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
	ApprovalExpired  = "expired" // marked expired by the sweep, pending or approved and unused
	ApprovalUsed     = "used"    // spent by the retried call it allowed
)

// Approval store operations, the closed set of
// gated_approvals_errors_total{operation}.
const (
	ApprovalOpCreate  = "create"
	ApprovalOpRead    = "read"
	ApprovalOpDecide  = "decide"
	ApprovalOpConsume = "consume"
	ApprovalOpExpire  = "expire"
	ApprovalOpPurge   = "purge"
)

// Webhook outcomes, the closed set of
// gated_approval_webhook_events_total{outcome}.
const (
	WebhookDelivered = "delivered"
	WebhookFailed    = "failed"
	WebhookDropped   = "dropped"
)

var (
	approvalOutcomes = []string{ApprovalApproved, ApprovalDenied, ApprovalExpired, ApprovalUsed}
	approvalOps      = []string{ApprovalOpCreate, ApprovalOpRead, ApprovalOpDecide, ApprovalOpConsume, ApprovalOpExpire, ApprovalOpPurge}
	webhookOutcomes  = []string{WebhookDelivered, WebhookFailed, WebhookDropped}
)

// approvals are the approval instruments. Their labels are closed sets:
// no approval id, tool, token or principal ever becomes a label.
type approvals struct {
	approvalsPending prometheus.Gauge
	approvalsDecided *prometheus.CounterVec
	approvalLatency  prometheus.Histogram
	approvalErrors   *prometheus.CounterVec
	webhookEvents    *prometheus.CounterVec
}

func newApprovals(reg *prometheus.Registry) approvals {
	a := approvals{
		approvalsPending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gated_approvals_pending",
			Help: "Approvals waiting for a person to decide, as the last expiry sweep counted them (every replica reports the shared count: aggregate with max, not sum).",
		}),
		approvalsDecided: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_approvals_decided_total",
			Help: "Approvals that reached an outcome through this replica: approved, denied, expired (by its sweep) or used (by the retried call).",
		}, []string{"outcome"}),
		approvalLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "gated_approval_decision_seconds",
			Help: "Time from an approval's creation to a person approving or denying it.",
			// 1 s to 24 h, the longest an approval stays open.
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 43200, 86400},
		}),
		approvalErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_approvals_errors_total",
			Help: "Failed approval store operations, by operation (create, read, decide, consume, expire, purge); refusals by the approval rules are not errors.",
		}, []string{"operation"}),
		webhookEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_approval_webhook_events_total",
			Help: "Approval webhook events by outcome: delivered, failed (given up) or dropped (the queue was full).",
		}, []string{"outcome"}),
	}
	reg.MustRegister(a.approvalsPending, a.approvalsDecided, a.approvalLatency, a.approvalErrors, a.webhookEvents)
	// Closed sets, pre-created so that a rate reads 0 rather than absent.
	for _, o := range approvalOutcomes {
		a.approvalsDecided.WithLabelValues(o)
	}
	for _, op := range approvalOps {
		a.approvalErrors.WithLabelValues(op)
	}
	for _, o := range webhookOutcomes {
		a.webhookEvents.WithLabelValues(o)
	}
	return a
}

func oneOf(v string, set []string) string {
	for _, s := range set {
		if v == s {
			return v
		}
	}
	return Other
}

// ApprovalsPending sets how many approvals wait for a decision.
func (m *Metrics) ApprovalsPending(n int) { m.approvalsPending.Set(float64(n)) }

// ApprovalDecided counts n approvals reaching outcome. An approval a person
// approved or denied (n 1) also observes how long it waited, took.
func (m *Metrics) ApprovalDecided(outcome string, n int, took time.Duration) {
	outcome = oneOf(outcome, approvalOutcomes)
	m.approvalsDecided.WithLabelValues(outcome).Add(float64(n))
	if outcome == ApprovalApproved || outcome == ApprovalDenied {
		m.approvalLatency.Observe(max(took, 0).Seconds())
	}
}

// ApprovalError counts one failed approval store operation.
func (m *Metrics) ApprovalError(operation string) {
	m.approvalErrors.WithLabelValues(oneOf(operation, approvalOps)).Inc()
}

// WebhookEvent counts one approval webhook event reaching outcome.
func (m *Metrics) WebhookEvent(outcome string) {
	m.webhookEvents.WithLabelValues(oneOf(outcome, webhookOutcomes)).Inc()
}
