package audit

import (
	"context"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit/spool"
	"github.com/gatedhq/gated/internal/strictjson"
)

// migrateTimeout bounds one migration attempt: the PostgreSQL sink's
// Migrate waits up to five minutes for another replica's advisory lock.
const migrateTimeout = 6 * time.Minute

// maintainInterval is how often the sink's Maintain runs while it succeeds
// (the PostgreSQL sink creates partitions ahead and expires old ones).
const maintainInterval = time.Hour

// Longest pauses between two attempts at migrations, and at partition
// maintenance, that keep failing: migrations stand between a database that
// is back and the replay of the spool, maintenance does not.
const (
	migrateCeiling = 10 * time.Second
	retryCeiling   = 30 * time.Second
)

// connect makes the first attempt at the remote sink — its Migrate, then a
// Ping — bounded by WriteTimeout so NewRecorder never hangs on a database
// that does not answer. What fails is retried in the background;
// meanwhile records go to the spool.
func (r *recorder) connect(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.WriteTimeout)
	defer cancel()
	if !r.schemaReady.Load() {
		if err := r.migrate(ctx); err != nil {
			r.cfg.Logger.Warn("audit migrations cannot run yet: records go to the spool, migrations are retried in the background", zap.Error(err))
			r.wg.Add(1)
			go r.migrateLoop()
			return
		}
	}
	if err := r.remote.Ping(ctx); err != nil {
		r.cfg.Logger.Warn("audit database unavailable: records go to the spool until it is back", zap.Error(err))
		return
	}
	r.primaryOK.Store(true)
}

func (r *recorder) migrate(ctx context.Context) error {
	if err := r.remote.Migrate(ctx); err != nil {
		return err
	}
	r.schemaReady.Store(true)
	return nil
}

// migrateLoop retries the migrations, backing off, until they are applied.
func (r *recorder) migrateLoop() {
	defer r.wg.Done()
	wait := r.cfg.RetryInterval
	for !r.schemaReady.Load() {
		if !r.sleep(wait) {
			return
		}
		ctx, cancel := context.WithTimeout(r.bg, migrateTimeout)
		err := r.migrate(ctx)
		cancel()
		if err != nil {
			if r.bg.Err() == nil {
				r.cfg.Logger.Warn("audit migrations failed; retrying", zap.Duration("in", wait), zap.Error(err))
			}
			wait = min(2*wait, migrateCeiling)
			continue
		}
		r.cfg.Logger.Info("audit migrations applied: records go to the database again once it answers")
	}
}

// sleep waits d; false when Close has started.
func (r *recorder) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.bg.Done():
		return false
	case <-t.C:
		return true
	}
}

// maintainLoop keeps partitions ahead and expires old ones: hourly, and
// sooner while it fails or the schema is not there yet.
func (r *recorder) maintainLoop() {
	defer r.wg.Done()
	for {
		next := maintainInterval
		if !r.schemaReady.Load() {
			next = r.cfg.RetryInterval
		} else {
			ctx, cancel := context.WithTimeout(r.bg, time.Minute)
			err := r.remote.Maintain(ctx, time.Now())
			cancel()
			if err != nil {
				if r.bg.Err() == nil {
					r.cfg.Logger.Warn("audit partition maintenance failed", zap.Error(err))
				}
				next = retryCeiling
			}
		}
		if !r.sleep(next) {
			return
		}
	}
}

// backgroundLoop runs every RetryInterval until Close starts: it probes a
// failing spool and database, adopts the spools of stopped processes,
// replays spooled records and hands held corrections over again.
func (r *recorder) backgroundLoop() {
	defer r.wg.Done()
	t := time.NewTicker(r.cfg.RetryInterval)
	defer t.Stop()
	var lastAdoptErr string
	for {
		select {
		case <-r.bg.Done():
			return
		case <-t.C:
		}
		if r.spool != nil {
			r.tickRemote(&lastAdoptErr)
		}
		r.retryFixes()
		r.reportSpool()
	}
}

// tickRemote is the background work of a remote sink.
func (r *recorder) tickRemote(lastAdoptErr *string) {
	// Probed even while healthy: async records are answered on the
	// promise that the spool takes them should the database fail, and a
	// disk that filled up or went read-only unused would otherwise go
	// unnoticed until that moment.
	was := r.spool.Healthy()
	switch err := r.spool.Probe(); {
	case err == nil && !was:
		r.cfg.Logger.Info("audit spool writable again", zap.String("dir", r.spool.Dir()))
	case err != nil && was:
		r.cfg.Logger.Error("audit spool cannot be written", zap.String("dir", r.spool.Dir()), zap.Error(err))
	}
	if err := r.adopt(); err != nil && err.Error() != *lastAdoptErr {
		*lastAdoptErr = err.Error()
		r.cfg.Logger.Warn("audit spool: looking for spools left by stopped processes", zap.Error(err))
	}
	if r.schemaReady.Load() && !r.primaryOK.Load() {
		ctx, cancel := context.WithTimeout(r.bg, r.cfg.WriteTimeout)
		if r.remote.Ping(ctx) == nil {
			r.primaryOK.Store(true)
			r.cfg.Logger.Info("audit database reachable again")
		}
		cancel()
	}
	if r.primaryOK.Load() {
		r.replayAll()
	}
}

// adopt takes over the spool directories of processes that are gone.
func (r *recorder) adopt() error {
	held := func(dir string) bool {
		if dir == r.spool.Dir() {
			return true
		}
		for _, o := range r.orphans {
			if o.Dir() == dir {
				return true
			}
		}
		return false
	}
	found, err := spool.Adopt(r.cfg.SpoolDir, held)
	for _, o := range found {
		r.cfg.Logger.Info("audit spool of a stopped process adopted for replay",
			zap.String("dir", o.Dir()), zap.Int64("bytes", o.Size()))
		r.orphans = append(r.orphans, o)
	}
	r.sumOrphans()
	return err
}

func (r *recorder) sumOrphans() {
	var n int64
	for _, o := range r.orphans {
		n += o.Size()
	}
	r.orphanBytes.Store(n)
}

// replayAll replays this process's spool, then the adopted ones, and lets
// go of each adopted spool once it is empty (its directory is removed).
func (r *recorder) replayAll() {
	ok := r.spool.Size() == 0 || r.replay(r.spool)
	kept := r.orphans[:0]
	for _, o := range r.orphans {
		if ok {
			ok = r.replay(o)
		}
		if ok && o.Size() == 0 {
			if err := o.Close(); err != nil {
				r.cfg.Logger.Warn("audit spool: releasing an adopted spool", zap.String("dir", o.Dir()), zap.Error(err))
			}
			continue
		}
		kept = append(kept, o)
	}
	clear(r.orphans[len(kept):])
	r.orphans = kept
	r.sumOrphans()
}

// replay moves a spool's records into the sink, oldest segment first,
// and deletes a segment only after all its records are committed. Inserts
// are idempotent and corrections overwrite, so a segment replayed twice
// (crash between commit and delete) stores nothing twice. It reports
// false when the database failed.
func (r *recorder) replay(sp *spool.Spool) bool {
	segs, err := sp.Sealed()
	if err != nil {
		r.cfg.Logger.Error("audit spool: listing segments", zap.Error(err))
		return false
	}
	for _, seg := range segs {
		bufs, skipped, size, err := spool.ReadSegmentSize(seg)
		if err != nil {
			r.cfg.Logger.Error("audit spool: reading segment", zap.String("segment", seg), zap.Error(err))
			return false
		}
		if skipped > 0 {
			r.cfg.Logger.Warn("audit spool: torn tail skipped", zap.String("segment", seg), zap.Int64("bytes", skipped))
		}
		frames := make([]Frame, 0, len(bufs))
		for _, b := range bufs {
			f := Frame{Record: new(Record)}
			if err := strictjson.Unmarshal(b, &f); err != nil {
				// The checksum passed, so this is not a torn write; keep the
				// rest of the segment moving rather than block it forever.
				r.cfg.Logger.Error("audit spool: undecodable record skipped", zap.String("segment", seg), zap.Error(err))
				continue
			}
			frames = append(frames, f)
		}
		for chunk := range slices.Chunk(frames, r.cfg.BatchSize) {
			var b Batch
			for _, f := range chunk {
				b.Add(f)
			}
			if err := r.writePrimary(r.bg, b); err != nil {
				return false // still down; retry on the next tick
			}
		}
		removed, err := sp.RemoveReplayed(seg, size)
		if err != nil {
			r.cfg.Logger.Error("audit spool: removing replayed segment", zap.String("segment", seg), zap.Error(err))
			return false
		}
		if !removed {
			r.cfg.Logger.Warn("audit spool: segment grew while it was replayed; replaying it again", zap.String("segment", seg))
			return true
		}
		r.reportSpool()
		for range frames {
			r.cfg.Metrics.Recorded(r.name, "replayed")
		}
	}
	return true
}
