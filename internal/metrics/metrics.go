// Package metrics holds gated's Prometheus instruments on a registry of its
// own, so tests and several servers in one process never collide, and so
// nothing but gated's own metrics (plus Go and process collectors) is exposed.
//
// Every label value is taken from a closed set or clamped to one: a label
// never carries an argument, a principal, a token or a raw request path.
package metrics

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Other is the label value used for anything outside a label's closed set:
// uncatalogued tools, malformed codes, unknown enum values.
const Other = "other"

// Metrics is the set of gated's instruments. All methods are safe for
// concurrent use; a nil *Metrics is not.
type Metrics struct {
	reg *prometheus.Registry

	decisions        *prometheus.CounterVec
	toolDecisions    *prometheus.CounterVec
	decisionDuration prometheus.Histogram
	hardBlockers     *prometheus.CounterVec

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec

	auditQueueDepth    prometheus.Gauge
	auditQueueCapacity prometheus.Gauge
	auditQueueFull     *prometheus.CounterVec
	auditRecords       *prometheus.CounterVec
	auditSpoolBytes    prometheus.Gauge
	auditSpoolBatch    prometheus.Histogram
	auditWriteErrors   *prometheus.CounterVec

	catalogReloads *prometheus.CounterVec
	policyReloads  *prometheus.CounterVec
	revisionInfo   *prometheus.GaugeVec

	outcomes    *prometheus.CounterVec
	limitErrors *prometheus.CounterVec

	approvals
	kills
	candidate
}

// New builds the instruments on a fresh registry with the Go runtime and
// process collectors and gated_build_info{version} set to 1.
func New(version string) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_decisions_total",
			Help: "Decisions made, by final route, tool category, risk domain, whether the tool may execute and whether gated ran in shadow mode.",
		}, []string{"route", "tool_category", "risk_domain", "execute", "shadow"}),
		toolDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_tool_decisions_total",
			Help: "Decisions by catalogued tool (\"other\" when the tool is not in the catalog) and final route.",
		}, []string{"tool", "route"}),
		decisionDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "gated_decision_duration_seconds",
			Help: "Time to decide one event, from decoded event to combined outcome, audit enqueue included.",
			// 10 µs to 1 s: a decision is in-memory work unless audit runs in sync mode.
			Buckets: decades(1e-5, 1),
		}),
		hardBlockers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_hard_blockers_total",
			Help: "Hard blockers raised, by blocker code.",
		}, []string{"blocker"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_http_requests_total",
			Help: "HTTP requests served, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gated_http_request_duration_seconds",
			Help:    "HTTP request duration, by route pattern, method and status code.",
			Buckets: decades(1e-4, 10),
		}, []string{"route", "method", "code"}),
		auditQueueDepth: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gated_audit_queue_depth",
			Help: "Audit records waiting in memory to be written.",
		}),
		auditQueueCapacity: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gated_audit_queue_capacity",
			Help: "Audit records the in-memory queue holds; past it, records are stored without the queue.",
		}),
		auditQueueFull: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_audit_queue_full_total",
			Help: "Audit records that found the queue full, by sink: spooled (postgres) or written with the writer's next batch (file).",
		}, []string{"sink"}),
		auditRecords: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_audit_records_total",
			Help: "Audit records by sink and outcome (written, spooled, replayed, dropped, unavailable).",
		}, []string{"sink", "outcome"}),
		auditSpoolBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gated_audit_spool_bytes",
			Help: "Bytes of audit records spooled on local disk awaiting replay.",
		}),
		auditSpoolBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "gated_audit_spool_batch_records",
			Help: "Audit records per spool write (one fsync): concurrent appends share one.",
			// 1 to 4096, the most one write takes (a writer batch of more goes alone).
			Buckets: prometheus.ExponentialBuckets(1, 2, 13),
		}),
		auditWriteErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_audit_write_errors_total",
			Help: "Failed audit writes, by sink.",
		}, []string{"sink"}),
		catalogReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_catalog_reload_total",
			Help: "Catalog reload attempts by result (success, failure).",
		}, []string{"result"}),
		policyReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_policy_reload_total",
			Help: "Policy reload attempts by result (success, failure).",
		}, []string{"result"}),
		revisionInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gated_revision_info",
			Help: "Always 1; labels name the catalog and policy revisions decisions currently use.",
		}, []string{"catalog", "policy"}),
	}
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "gated_build_info",
		Help:        "Always 1; the version label names the running build.",
		ConstLabels: prometheus.Labels{"version": clamp(version)},
	})
	buildInfo.Set(1)

	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfo,
		m.decisions, m.toolDecisions, m.decisionDuration, m.hardBlockers,
		m.httpRequests, m.httpDuration,
		m.auditQueueDepth, m.auditQueueCapacity, m.auditQueueFull,
		m.auditRecords, m.auditSpoolBytes, m.auditSpoolBatch, m.auditWriteErrors,
		m.catalogReloads, m.policyReloads, m.revisionInfo,
	)
	m.approvals = newApprovals(m.reg)
	m.outcomes = newOutcomes(m.reg)
	m.limitErrors = newLimitErrors(m.reg)
	m.kills = newKills(m.reg)
	m.candidate = newCandidate(m.reg)
	// Reload results are a closed set: pre-create them so "failure" reads 0,
	// not absent, and alerts on increase() work from the first failure.
	for _, r := range []string{resultSuccess, resultFailure} {
		m.catalogReloads.WithLabelValues(r)
		m.policyReloads.WithLabelValues(r)
	}
	// Likewise for write errors of the audit recorder's sinks, and for the
	// outcomes of its two primary sinks: an async record is counted only
	// when its batch is flushed, and "dropped" must read 0 until it is not.
	for _, sink := range []string{"postgres", "file", "spool"} {
		m.auditWriteErrors.WithLabelValues(sink)
	}
	for _, sink := range []string{"postgres", "file"} {
		for outcome := range auditOutcomes {
			m.auditRecords.WithLabelValues(sink, outcome)
		}
		m.auditQueueFull.WithLabelValues(sink)
	}
	return m
}

// Registry exposes the registry so tests and embedders can gather from it.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats. Errors
// while gathering are reported on the scrape (HTTP 500), never hidden.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		Registry:      m.reg, // counts its own scrape errors
		ErrorHandling: promhttp.HTTPErrorOnError,
	})
}

// maxLabelLen bounds free-form but gated-chosen values (version, revisions)
// so a malformed one cannot blow up a series' size.
const maxLabelLen = 128

func clamp(s string) string {
	if s == "" {
		return "unknown"
	}
	if len(s) > maxLabelLen {
		return s[:maxLabelLen]
	}
	return s
}

// bounded passes the identifiers gated puts in labels — snake_case blocker
// codes, sink names and catalog ids ("billing:refund", "devops.deploy",
// "@acme/tools/Refund"): 1 to 128 bytes, starting with [A-Za-z0-9@], then
// [A-Za-z0-9_.:/@+-]. It guards the shape (no spaces, no free text); the
// count stays bounded because callers pass only gated's own codes and
// catalog ids. Anything else is reported as Other. A byte loop rather than
// a regexp: it runs for every decision's tool and blockers.
func bounded(s string) string {
	if len(s) == 0 || len(s) > 128 || !(s[0] == '@' || alnum(s[0])) {
		return Other
	}
	for i := 1; i < len(s); i++ {
		if !codeByte(s[i]) {
			return Other
		}
	}
	return s
}

// codeByte is [A-Za-z0-9_.:/@+-].
func codeByte(c byte) bool { return alnum(c) || strings.IndexByte("_.:/@+-", c) >= 0 }

func alnum(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }

func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// decades returns 1-2.5-5 buckets from lo to hi (powers of ten). Written out
// rather than ExponentialBucketsRange so bucket bounds read exactly as
// "0.001" in PromQL, not "0.0010000000000000005".
func decades(lo, hi float64) []float64 {
	var b []float64
	for d := lo; d < hi; d *= 10 {
		b = append(b, round(d), round(2.5*d), round(5*d))
	}
	return append(b, hi)
}

// round trims the float noise of repeated multiplication to 3 significant digits.
func round(f float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 3, 64), 64)
	return v
}
