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

// Backpressure is what a Metrics may also implement to show overload: how
// full the queue is allowed to get, how often it is full, and how many
// records share a spool fsync. It is separate so that a Metrics without it
// still works; the recorder reports these only to one that has it.
type Backpressure interface {
	// QueueCapacity is the number of records the in-memory queue holds.
	QueueCapacity(n int)
	// QueueFull counts a record that found the queue full and was stored
	// without it: spooled for a database sink, written with the writer's
	// next batch for the file sink.
	QueueFull(sink string)
	// SpoolBatch is the number of records one spool write stored with one
	// fsync: above one when concurrent appends shared it.
	SpoolBatch(records int)
}

type nopMetrics struct{}

func (nopMetrics) QueueDepth(int)          {}
func (nopMetrics) Recorded(string, string) {}
func (nopMetrics) SpoolBytes(int64)        {}
func (nopMetrics) WriteError(string)       {}
func (nopMetrics) QueueCapacity(int)       {}
func (nopMetrics) QueueFull(string)        {}
func (nopMetrics) SpoolBatch(int)          {}
