package audit

import (
	"context"
	"time"
)

// Sink stores batches of records for a Recorder. internal/audit/postgres
// and internal/audit/file implement it; this package imports neither, so
// the wiring picks one and hands it to NewRecorder.
type Sink interface {
	// Name labels the sink in results and metrics: SinkPostgres, SinkFile.
	Name() string
	// Write stores recs, then fixes, in one write: all of them or none.
	// A fix is a correction: it replaces the stored record of its key, or
	// is stored when there is none, where a record of recs never
	// overwrites one (a replay stores nothing twice).
	Write(ctx context.Context, recs, fixes []*Record) error
	// Close releases the sink; the Recorder calls it last.
	Close() error
}

// RemoteSink is a Sink that can be away, as a database can: the Recorder
// keeps a local spool for it, spools while it is away, probes it, and
// replays the spool into it once it answers again.
type RemoteSink interface {
	Sink
	// Ping reports whether a write now would reach the sink.
	Ping(ctx context.Context) error
	// Migrate readies the sink's schema, or does nothing when that is not
	// the sink's to do. Until it succeeds the sink is neither pinged nor
	// maintained, and the Recorder retries it in the background.
	Migrate(ctx context.Context) error
	// Maintain is the sink's housekeeping (partitions ahead, retention),
	// run hourly, and sooner while it fails.
	Maintain(ctx context.Context, now time.Time) error
}

// UncertainWrite is implemented by a Write error when the write failed but
// may have been stored all the same: a COMMIT that was sent and whose
// answer never came. The Recorder then asks, so that a caller is answered
// what is stored.
type UncertainWrite interface {
	error
	// Stored returns the stored final route of each of recs found stored,
	// by decision id. Once it returns, a record it did not find can no
	// longer appear.
	Stored(ctx context.Context, recs []*Record) (map[string]string, error)
}

// Frame is a record as the spool and the file sink hold it, one JSON
// object each. A correction replaces the stored record of its key when it
// is replayed (in the file: supersedes the earlier line of its
// decision_id), where a plain record never overwrites one.
type Frame struct {
	*Record
	Correction bool `json:"correction,omitempty"`
}
