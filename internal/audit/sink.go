package audit

import (
	"context"
	"time"

	"github.com/gatedhq/gated/internal/audit/chain"
)

// Sink stores batches of records for a Recorder. internal/audit/postgres
// and internal/audit/file implement it; this package imports neither, so
// the wiring picks one and hands it to NewRecorder.
type Sink interface {
	// Name labels the sink in results and metrics: SinkPostgres, SinkFile.
	Name() string
	// Write stores a batch in one write: all of it or none.
	Write(ctx context.Context, b Batch) error
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

// Batch is what one Sink.Write stores: new records, then corrections,
// then the links of records stored by another writer, then checkpoints.
type Batch struct {
	// Records are new: a record already stored is skipped, never
	// overwritten (a replay stores nothing twice).
	Records []*Record
	// Fixes are corrections: each replaces the stored record of its key,
	// or is stored when there is none.
	Fixes []Fix
	// Linked are records another transaction stored (an approval's
	// spending): only their chain links are stored, onto the stored rows.
	Linked []*Record
	// Checkpoints vouch for the chain up to the records before them.
	Checkpoints []chain.Checkpoint
}

// Fix is a correction and the record it supersedes: the superseded
// record's link stays checkable after the store shows the correction.
type Fix struct {
	Record     *Record
	Superseded *Record
}

func (b Batch) empty() bool {
	return len(b.Records)+len(b.Fixes)+len(b.Linked)+len(b.Checkpoints) == 0
}

// Frame is one line of the spool and the file sink, one JSON object each:
// a record, a correction, a link of a record stored elsewhere, or a
// checkpoint. A correction replaces the stored record of its key when it
// is replayed (in the file: supersedes the earlier line of its
// decision_id), where a plain record never overwrites one.
type Frame struct {
	*Record
	Correction bool `json:"correction,omitempty"`
	// Superseded is a spooled correction's original, for the store whose
	// row the correction replaces.
	Superseded *Record `json:"superseded,omitempty"`
	// Linked marks a record another transaction stored: only its link is
	// to be stored.
	Linked     bool              `json:"linked,omitempty"`
	Checkpoint *chain.Checkpoint `json:"checkpoint,omitempty"`
}

// Frames lays a batch out as the spool and the file hold it, in the
// order Write stores it.
func (b Batch) Frames() []Frame {
	fs := make([]Frame, 0, len(b.Records)+len(b.Fixes)+len(b.Linked)+len(b.Checkpoints))
	for _, r := range b.Records {
		fs = append(fs, Frame{Record: r})
	}
	for _, f := range b.Fixes {
		fs = append(fs, Frame{Record: f.Record, Correction: true, Superseded: f.Superseded})
	}
	for _, r := range b.Linked {
		fs = append(fs, Frame{Record: r, Linked: true})
	}
	for i := range b.Checkpoints {
		fs = append(fs, Frame{Checkpoint: &b.Checkpoints[i]})
	}
	return fs
}

// Add puts a frame read back from the spool into the batch.
func (b *Batch) Add(f Frame) {
	switch {
	case f.Checkpoint != nil:
		b.Checkpoints = append(b.Checkpoints, *f.Checkpoint)
	case f.Correction:
		b.Fixes = append(b.Fixes, Fix{Record: f.Record, Superseded: f.Superseded})
	case f.Linked:
		b.Linked = append(b.Linked, f.Record)
	default:
		b.Records = append(b.Records, f.Record)
	}
}
