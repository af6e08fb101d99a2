package audit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit/spool"
)

// validate rejects records that cannot be stored as a distinct decision:
// an empty id or time would make different decisions collide on the
// primary key, and the insert would silently skip all but the first.
func validate(rec *Record) error {
	switch {
	case rec == nil:
		return errors.New("nil record")
	case rec.DecisionID == "":
		return errors.New("record has no decision_id")
	case rec.DecidedAt.IsZero():
		return fmt.Errorf("record %s has no decided_at", rec.DecisionID)
	case rec.FinalRoute == "":
		return fmt.Errorf("record %s has no final_route", rec.DecisionID)
	}
	return nil
}

// Record hands over one record. An invalid record is a caller bug: it is
// refused with ErrUnavailable whatever the fail mode.
//
// An async record is answered before it is stored, so with fail=closed it
// is queued only while the database is known to take writes and the spool
// has room kept for it should the database fail before the batch is
// written. Otherwise the caller waits for the record to be durable, as in
// sync mode, and is refused if it cannot be.
//
// No lock Record takes is held across I/O: a caller that must wait for a
// write waits for its own result on a channel, while the writer or the
// spool's appender stores it with the others waiting then.
func (r *recorder) Record(ctx context.Context, rec *Record) (Result, error) {
	if err := validate(rec); err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	it := &item{rec: rec}
	wait, direct := r.cfg.Durability == Sync, false
	primaryOK := r.primaryOK.Load()
	switch {
	case r.spool != nil && !primaryOK && !r.spoolCanTake():
		// Both known failing: try the spool now (the append doubles as a
		// probe) rather than queue a record that would only be lost.
		direct = true
	case wait, r.cfg.Fail == FailOpen:
	case r.spool == nil:
		wait = !primaryOK // the sink failed last time: answer from a write, not a hope
	case primaryOK && r.spool.Healthy():
		if n := spool.FrameSize(encodedSizeBound(rec, r.links.id)); r.spool.Reserve(n) {
			it.reserved = n
		} else {
			wait = true
		}
	default:
		wait = true
	}
	if wait {
		it.done = make(chan outcome, 1)
	}
	queued := false
	r.mu.RLock()
	closed := r.closed
	if !closed && !direct {
		select {
		case r.queue <- it:
			queued = true
		default:
		}
	}
	r.mu.RUnlock()
	if closed {
		if it.reserved > 0 {
			r.spool.Release(it.reserved)
		}
		return r.unavailable(rec, errors.New("recorder closed"))
	}
	if !queued {
		if !direct {
			r.backpressure.QueueFull(r.name)
		}
		return r.direct(it)
	}
	if it.done == nil {
		return Result{Sink: r.name, Status: StatusQueued}, nil
	}
	return r.await(ctx, it)
}

// await waits for a queued record to be stored. With fail=closed a caller
// whose context ends is refused, and the item is marked so the writer
// stores the refusal the caller saw, or corrects the record it stored.
func (r *recorder) await(ctx context.Context, it *item) (Result, error) {
	select {
	case o := <-it.done:
		return r.answer(it.rec, o)
	case <-ctx.Done():
	}
	if r.cfg.Fail == FailOpen {
		// The decision stands, and the record on its way says the same.
		return Result{Sink: r.name, Status: StatusQueued}, nil
	}
	if !it.state.CompareAndSwap(itemPending, itemAbandoned) &&
		!it.state.CompareAndSwap(itemClaimed, itemAbandonedClaimed) {
		return r.answer(it.rec, <-it.done) // finished meanwhile
	}
	r.cfg.Metrics.Recorded(r.name, "unavailable")
	return Result{}, fmt.Errorf("%w: waiting for a durable write: %w", ErrUnavailable, ctx.Err())
}

func (r *recorder) answer(rec *Record, o outcome) (Result, error) {
	if o.err != nil {
		return r.unavailable(rec, o.err)
	}
	return o.res, nil
}

// direct stores one record without the queue (queue full, or nothing is
// known to work): into the spool for a remote sink, with the appends of
// other callers waiting then; for a local sink, in the writer's next batch.
// Either way the caller waits for its own result, not for a lock.
func (r *recorder) direct(it *item) (Result, error) {
	if r.spool == nil {
		return r.handOver(it)
	}
	m, cps := r.links.assign([]*Record{it.rec}, time.Now(), false)
	if err := r.spoolAppend(Batch{Records: []*Record{it.rec}, Checkpoints: cps}, it.reserved); err != nil {
		r.links.undo(m)
		r.spool.Release(it.reserved)
		return r.unavailable(it.rec, err)
	}
	r.cfg.Metrics.Recorded(r.name, StatusSpooled)
	return Result{Sink: r.name, Status: StatusSpooled}, nil
}

// handOver has the writer store a local sink's record that found the queue
// full, and waits until it is written: writing it here would wait for the
// sink's lock, held across the writer's write.
func (r *recorder) handOver(it *item) (Result, error) {
	if it.done == nil {
		it.done = make(chan outcome, 1)
	}
	select {
	case r.overflow <- it:
	case <-r.writerDone:
		return r.unavailable(it.rec, errors.New("recorder closed"))
	}
	return r.answer(it.rec, <-it.done)
}

// unavailable applies the fail mode to a record that cannot be stored.
func (r *recorder) unavailable(rec *Record, cause error) (Result, error) {
	if r.cfg.Fail == FailOpen {
		r.cfg.Metrics.Recorded(r.name, StatusDropped)
		r.cfg.Logger.Error("audit record dropped (fail=open)",
			zap.String("decision_id", rec.DecisionID), zap.Error(cause))
		return Result{Sink: r.name, Status: StatusDropped}, nil
	}
	r.cfg.Metrics.Recorded(r.name, "unavailable")
	return Result{}, fmt.Errorf("%w: %w", ErrUnavailable, cause)
}
