package audit

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics receives the recorder's counters. Labels are fixed words (sink,
// outcome), never record content.
type Metrics interface {
	// QueueDepth is the number of records waiting in memory.
	QueueDepth(n int)
	// Recorded counts one record's outcome: written, spooled, queued,
	// replayed, dropped (lost: fail=open, or an async record neither sink
	// nor spool took) or unavailable (refused with fail=closed).
	Recorded(sink, outcome string)
	// SpoolBytes is the size of the local spool.
	SpoolBytes(n int64)
	// WriteError counts a failed write to a sink ("postgres", "file", "spool").
	WriteError(sink string)
}

type nopMetrics struct{}

func (nopMetrics) QueueDepth(int)          {}
func (nopMetrics) Recorded(string, string) {}
func (nopMetrics) SpoolBytes(int64)        {}
func (nopMetrics) WriteError(string)       {}

type promMetrics struct {
	queue   prometheus.Gauge
	records *prometheus.CounterVec
	spool   prometheus.Gauge
	errors  *prometheus.CounterVec
}

// NewPrometheusMetrics registers the audit metrics on reg:
// gated_audit_queue_depth, gated_audit_records_total{sink,outcome},
// gated_audit_spool_bytes and gated_audit_write_errors_total{sink}.
func NewPrometheusMetrics(reg prometheus.Registerer) (Metrics, error) {
	m := &promMetrics{
		queue: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gated_audit_queue_depth", Help: "Audit records waiting in memory for the writer.",
		}),
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_audit_records_total", Help: "Audit records by sink and outcome.",
		}, []string{"sink", "outcome"}),
		spool: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gated_audit_spool_bytes", Help: "Bytes of audit records in the local spool.",
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_audit_write_errors_total", Help: "Failed audit writes by sink.",
		}, []string{"sink"}),
	}
	for _, c := range []prometheus.Collector{m.queue, m.records, m.spool, m.errors} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register audit metrics: %w", err)
		}
	}
	return m, nil
}

func (m *promMetrics) QueueDepth(n int)              { m.queue.Set(float64(n)) }
func (m *promMetrics) Recorded(sink, outcome string) { m.records.WithLabelValues(sink, outcome).Inc() }
func (m *promMetrics) SpoolBytes(n int64)            { m.spool.Set(float64(n)) }
func (m *promMetrics) WriteError(sink string)        { m.errors.WithLabelValues(sink).Inc() }
