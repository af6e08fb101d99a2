package audit

import (
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"
)

// writeLoop batches queued records. Async batches wait up to FlushInterval
// to fill; sync batches, and any batch with a caller waiting, take whatever
// is queued right now (group commit) so no caller waits on a timer.
func (r *recorder) writeLoop() {
	defer r.wg.Done()
	defer close(r.writerDone)
	defer r.seal()
	batch := make([]*item, 0, r.cfg.BatchSize)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		var it *item
		select {
		case it = <-r.overflow:
		case q, ok := <-r.queue:
			if !ok {
				return
			}
			it = q
		}
		batch = append(batch[:0], it)
		open := r.fill(&batch, timer)
		r.cfg.Metrics.QueueDepth(len(r.queue))
		r.flush(batch)
		if !open {
			// the queue is closed; drain what is left
			for it := range r.queue {
				batch = append(batch[:0], it)
				r.drainInto(&batch)
				r.flush(batch)
			}
			return
		}
	}
}

// fill tops the batch up; it reports false once the queue is closed.
func (r *recorder) fill(batch *[]*item, timer *time.Timer) bool {
	if !r.drainInto(batch) {
		return false
	}
	if r.cfg.Durability == Sync || len(*batch) >= r.cfg.BatchSize || waiting(*batch) {
		return true
	}
	timer.Reset(r.cfg.FlushInterval)
	defer timer.Stop()
	for len(*batch) < r.cfg.BatchSize {
		select {
		case it := <-r.overflow:
			*batch = append(*batch, it)
			return true // its caller waits
		case it, ok := <-r.queue:
			if !ok {
				return false
			}
			*batch = append(*batch, it)
			if it.done != nil {
				return true
			}
		case <-timer.C:
			return true
		}
	}
	return true
}

func waiting(batch []*item) bool {
	return slices.ContainsFunc(batch, func(it *item) bool { return it.done != nil })
}

// drainInto takes what is queued or handed over now without waiting; false
// once the queue is closed.
func (r *recorder) drainInto(batch *[]*item) bool {
	for len(*batch) < r.cfg.BatchSize {
		select {
		case it := <-r.overflow:
			*batch = append(*batch, it)
		case it, ok := <-r.queue:
			if !ok {
				return false
			}
			*batch = append(*batch, it)
		default:
			return true
		}
	}
	return true
}

// flush stores a batch and answers the callers waiting for it.
func (r *recorder) flush(batch []*item) {
	// Records answered "queued" have spool room kept for them; stored with
	// others that have none, a full spool would refuse them all together.
	if slices.ContainsFunc(batch, func(it *item) bool { return it.reserved == 0 }) &&
		slices.ContainsFunc(batch, func(it *item) bool { return it.reserved > 0 }) {
		kept, rest := make([]*item, 0, len(batch)), make([]*item, 0, len(batch))
		for _, it := range batch {
			if it.reserved > 0 {
				kept = append(kept, it)
			} else {
				rest = append(rest, it)
			}
		}
		r.flush(kept)
		r.flush(rest)
		return
	}
	recs := make([]*Record, 0, len(batch))
	var linked []*Record
	var reserved int64
	for _, it := range batch {
		if it.linked {
			linked = append(linked, it.rec)
			continue
		}
		if it.done != nil && !it.state.CompareAndSwap(itemPending, itemClaimed) {
			// The caller gave up before the write and was answered refuse:
			// store that, not the route it never got.
			it.rec = refusal(it.rec)
		}
		recs = append(recs, it.rec)
		reserved += it.reserved
	}
	m, cps := r.links.assign(slices.Concat(recs, linked), time.Now(), false)
	st := r.store(Batch{Records: recs, Linked: linked, Checkpoints: cps}, reserved)
	if st.status == "" && !st.maybe {
		r.links.undo(m)
	}
	if r.spool != nil && st.status != StatusSpooled {
		r.spool.Release(reserved)
	}
	if len(linked) > 0 && st.err != nil {
		for _, rec := range linked {
			r.cfg.Logger.Error("audit chain link lost: the record is stored, its link is not",
				zap.String("decision_id", rec.DecisionID), zap.Error(st.err))
		}
	}
	r.ack(slices.DeleteFunc(batch, func(it *item) bool { return it.linked }), st)
}

// seal stores a checkpoint of the chain's last head as the writer stops,
// so every record it stored is vouched for.
func (r *recorder) seal() {
	m, cps := r.links.assign(nil, time.Now(), true)
	if len(cps) == 0 {
		return
	}
	if st := r.store(Batch{Checkpoints: cps}, 0); st.err != nil {
		r.links.undo(m)
		r.cfg.Logger.Error("audit chain's last checkpoint not stored", zap.Error(st.err))
	}
}

// ack answers a batch's callers. A caller refused while its record may be
// stored as decided gets a correction, so the store ends up saying refuse.
func (r *recorder) ack(batch []*item, st stored) {
	var fixes []*Record
	for _, it := range batch {
		o := outcome{res: Result{Sink: r.name, Status: st.status}, err: st.err}
		if route, ok := st.mismatch[it.rec.DecisionID]; ok {
			o = outcome{err: fmt.Errorf("record %s is stored with route %q", it.rec.DecisionID, route)}
			r.cfg.Logger.Error("audit record stored with another route than decided",
				zap.String("decision_id", it.rec.DecisionID), zap.String("stored_route", route))
		}
		if o.err == nil {
			r.cfg.Metrics.Recorded(r.name, o.res.Status)
		}
		mayBeStored := o.err == nil || st.maybe
		if it.done == nil {
			if o.err != nil {
				// Async: the decision was already answered; count and log the loss.
				r.cfg.Metrics.Recorded(r.name, StatusDropped)
				r.cfg.Logger.Error("audit record lost: neither sink nor spool took it",
					zap.String("decision_id", it.rec.DecisionID), zap.Bool("maybe_committed", st.maybe), zap.Error(o.err))
			}
			continue
		}
		if it.state.CompareAndSwap(itemClaimed, itemFinished) {
			if o.err != nil && mayBeStored && r.cfg.Fail == FailClosed {
				fixes = append(fixes, it.rec)
			}
			it.done <- o // Record applies the fail mode to errors
			continue
		}
		// Abandoned: before the write it.rec is already the refusal; after
		// it, the caller was refused while the record may say otherwise.
		if it.state.Load() == itemAbandonedClaimed && mayBeStored {
			fixes = append(fixes, it.rec)
		}
	}
	if len(fixes) > 0 {
		r.correct(fixes)
	}
}
