package metrics

// Audit outcomes, the closed set of gated_audit_records_total{outcome}. They
// match what internal/audit's recorder reports.
const (
	AuditWritten     = "written"     // committed to a sink
	AuditSpooled     = "spooled"     // store unavailable, kept on local disk
	AuditReplayed    = "replayed"    // moved from the spool into the store
	AuditDropped     = "dropped"     // lost: fail-open, or neither sink nor spool took it
	AuditUnavailable = "unavailable" // refused because audit could not be guaranteed (fail-closed)
)

var auditOutcomes = map[string]bool{
	AuditWritten: true, AuditSpooled: true,
	AuditReplayed: true, AuditDropped: true, AuditUnavailable: true,
}

// The methods below have the shape of internal/audit's Metrics and
// Backpressure interfaces, so *Metrics can be handed to the audit recorder
// as is.

// QueueDepth reports how many audit records wait in memory.
func (m *Metrics) QueueDepth(n int) { m.auditQueueDepth.Set(float64(n)) }

// QueueCapacity reports how many audit records the queue holds.
func (m *Metrics) QueueCapacity(n int) { m.auditQueueCapacity.Set(float64(n)) }

// QueueFull counts one audit record for sink that found the queue full.
func (m *Metrics) QueueFull(sink string) { m.auditQueueFull.WithLabelValues(bounded(sink)).Inc() }

// SpoolBatch observes how many records one spool write (one fsync) stored.
func (m *Metrics) SpoolBatch(records int) { m.auditSpoolBatch.Observe(float64(records)) }

// Recorded counts one audit record reaching outcome at sink ("postgres",
// "file", "spool"). Unknown outcomes and malformed sinks count as other.
func (m *Metrics) Recorded(sink, outcome string) {
	if !auditOutcomes[outcome] {
		outcome = Other
	}
	m.auditRecords.WithLabelValues(bounded(sink), outcome).Inc()
}

// SpoolBytes reports the size of the on-disk spool.
func (m *Metrics) SpoolBytes(n int64) { m.auditSpoolBytes.Set(float64(n)) }

// WriteError counts one failed write to sink.
func (m *Metrics) WriteError(sink string) { m.auditWriteErrors.WithLabelValues(bounded(sink)).Inc() }
