package audit

// Metrics receives the recorder's counters; internal/metrics implements it
// for Prometheus. Labels are fixed words (sink,
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
