package metrics

// AuditOutcome is what happened to audit records; the set is closed.
type AuditOutcome string

const (
	AuditWritten  AuditOutcome = "written"  // committed to the store
	AuditSpooled  AuditOutcome = "spooled"  // store unavailable, kept on local disk
	AuditReplayed AuditOutcome = "replayed" // moved from the spool into the store
	AuditDropped  AuditOutcome = "dropped"  // lost: queue and spool both full or unusable
)

// Audit is what the audit package needs from metrics; it can take this
// interface so it does not depend on Prometheus, and tests can pass *Metrics.
type Audit interface {
	SetAuditQueueDepth(n int)
	AuditRecords(sink string, outcome AuditOutcome, n int)
	SetAuditSpoolBytes(n int64)
	AuditWriteError()
}

var _ Audit = (*Metrics)(nil)

// SetAuditQueueDepth reports how many records wait in memory.
func (m *Metrics) SetAuditQueueDepth(n int) { m.auditQueueDepth.Set(float64(n)) }

// AuditRecords counts n records that reached outcome at sink (e.g.
// "postgres", "spool"). Unknown outcomes and malformed sinks count as other.
func (m *Metrics) AuditRecords(sink string, outcome AuditOutcome, n int) {
	if n <= 0 {
		return
	}
	o := string(outcome)
	switch outcome {
	case AuditWritten, AuditSpooled, AuditReplayed, AuditDropped:
	default:
		o = Other
	}
	m.auditRecords.WithLabelValues(bounded(sink), o).Add(float64(n))
}

// SetAuditSpoolBytes reports the size of the on-disk spool.
func (m *Metrics) SetAuditSpoolBytes(n int64) { m.auditSpoolBytes.Set(float64(n)) }

// AuditWriteError counts one failed batch write to the store.
func (m *Metrics) AuditWriteError() { m.auditWriteErrors.Inc() }
