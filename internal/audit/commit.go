package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit/spool"
)

func (r *recorder) writePrimary(parent context.Context, b Batch) error {
	if b.empty() {
		return nil
	}
	ctx, cancel := context.WithTimeout(parent, r.cfg.WriteTimeout)
	defer cancel()
	err := r.sink.Write(ctx, b)
	r.primaryOK.Store(err == nil)
	if err != nil {
		r.cfg.Metrics.WriteError(r.name)
		r.cfg.Logger.Warn("audit write failed", zap.String("sink", r.name), zap.Int("records", len(b.Records)+len(b.Fixes)+len(b.Linked)), zap.Error(err))
	}
	return err
}

// spoolAppend appends a batch as one fsynced write; res bytes reserved for
// it are used up.
func (r *recorder) spoolAppend(batch Batch, res int64) error {
	frames := batch.Frames()
	bufs := make([][]byte, 0, len(frames))
	var largest int
	for _, f := range frames {
		b, err := json.Marshal(f)
		if err != nil {
			return fmt.Errorf("encode record for spool: %w", err)
		}
		bufs = append(bufs, b)
		largest = max(largest, len(b))
	}
	r.lastFrame.Store(spool.FrameSize(largest))
	err := r.spool.AppendReserved(res, bufs...)
	r.reportSpool()
	if err != nil {
		r.cfg.Metrics.WriteError("spool")
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

func (r *recorder) reportSpool() {
	if r.spool != nil {
		r.cfg.Metrics.SpoolBytes(r.spool.Size() + r.orphanBytes.Load())
	}
}

// stored is what became of a batch.
type stored struct {
	status   string            // StatusWritten or StatusSpooled; "" when neither took it
	err      error             // why neither took it
	maybe    bool              // failed, but an unacknowledged commit may have stored it
	mismatch map[string]string // decision id -> a different route found stored
}

// store writes a batch to the primary sink or the spool: the database
// first while it is known to work, else the spool first.
//
// A commit whose acknowledgement was lost leaves the batch stored or not.
// If the spool takes the batch, that does not matter: it is answered as
// spooled, and the replay skips whatever the commit stored, so the store
// ends up holding the answered records exactly once. Only when the spool
// cannot take it does the caller wait for resolve to find out.
func (r *recorder) store(b Batch, reserved int64) stored {
	if r.spool == nil {
		if err := r.writePrimary(r.ctx, b); err != nil {
			return stored{err: err}
		}
		return stored{status: StatusWritten}
	}
	dbFirst := r.primaryOK.Load()
	var dbErr error
	if dbFirst {
		if dbErr = r.writePrimary(r.ctx, b); dbErr == nil {
			return stored{status: StatusWritten}
		}
	}
	spoolErr := r.spoolAppend(b, reserved)
	if spoolErr == nil {
		return stored{status: StatusSpooled}
	}
	if !dbFirst {
		if !r.schemaReady.Load() {
			return stored{err: spoolErr}
		}
		dbErr = r.writePrimary(r.ctx, b)
		if dbErr == nil {
			return stored{status: StatusWritten}
		}
	}
	st := r.resolve(b, dbErr)
	if st.err != nil {
		st.err = errors.Join(st.err, spoolErr)
	}
	return st
}

// resolve settles a failed database write. When the commit was sent but
// its answer never came, the batch may or may not be stored; resolve looks
// the records up (on a new connection, once the old session is gone, within
// ResolveTimeout) so the caller is answered what is stored. A batch found
// not stored is written once more, since the database has just answered.
func (r *recorder) resolve(b Batch, err error) stored {
	recs := b.Records
	for attempt := 0; ; attempt++ {
		var uncertain UncertainWrite
		if !errors.As(err, &uncertain) {
			return stored{err: err}
		}
		ctx, cancel := context.WithTimeout(r.ctx, r.cfg.ResolveTimeout)
		routes, rerr := uncertain.Stored(ctx, recs)
		cancel()
		if rerr != nil {
			r.cfg.Logger.Warn("audit batch's commit outcome unknown", zap.Int("records", len(recs)), zap.Error(rerr))
			return stored{err: fmt.Errorf("%w; whether it was stored is unknown: %w", err, rerr), maybe: true}
		}
		if len(routes) == len(recs) {
			r.primaryOK.Store(true)
			st := stored{status: StatusWritten}
			for _, rec := range recs {
				if route := routes[rec.DecisionID]; route != rec.FinalRoute {
					if st.mismatch == nil {
						st.mismatch = map[string]string{}
					}
					st.mismatch[rec.DecisionID] = route
				}
			}
			r.cfg.Logger.Info("audit batch's lost commit acknowledgement resolved: stored", zap.Int("records", len(recs)))
			return st
		}
		if attempt > 0 {
			return stored{err: err}
		}
		r.cfg.Logger.Info("audit batch's lost commit acknowledgement resolved: not stored, writing again", zap.Int("records", len(recs)))
		if err = r.writePrimary(r.ctx, b); err == nil {
			return stored{status: StatusWritten}
		}
	}
}
