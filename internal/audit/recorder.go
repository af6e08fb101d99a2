package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit/spool"
)

// Sinks and statuses reported in a decision's audit block.
const (
	SinkPostgres = "postgres"
	SinkFile     = "file"

	StatusQueued  = "queued"  // async: accepted into the in-memory queue
	StatusWritten = "written" // committed to PostgreSQL or written to the file
	StatusSpooled = "spooled" // fsynced to the local spool, replayed later
	StatusDropped = "dropped" // fail=open only: lost, counted and logged
)

// ErrUnavailable means a record could be neither queued nor spooled. With
// fail=closed the caller must refuse the decision (blocker audit_unavailable).
var ErrUnavailable = errors.New("audit unavailable")

// Result says where a decision's record went.
type Result struct {
	Sink   string `json:"sink"`
	Status string `json:"status"`
}

// Recorder stores records.
type Recorder interface {
	// Record hands over one record. Async: returns once queued. Sync: returns
	// once the record is durable (committed, or fsynced to the spool); many
	// concurrent calls share one commit.
	Record(ctx context.Context, rec *Record) (Result, error)
	// Close drains the queue into the sink or the spool. When ctx ends first,
	// in-flight database writes are cancelled so the rest goes to the spool.
	Close(ctx context.Context) error
	// Ready reports whether a record handed over now would be stored.
	Ready() bool
}

// Config configures Open. Zero values take the documented defaults.
type Config struct {
	DatabaseURL   string        // PostgreSQL sink; empty means the JSON-lines file sink
	SpoolDir      string        // default "gated-spool"
	File          string        // default "gated-audit.jsonl"
	Durability    string        // "async" (default) or "sync"
	Fail          string        // "closed" (default) or "open"
	Retention     time.Duration // default 90 days
	BatchSize     int           // default 1000 records per COPY
	FlushInterval time.Duration // async: longest a record waits for a batch; default 100ms
	QueueSize     int           // default 10000; when full, records go straight to the spool
	SpoolMaxBytes int64         // default 1 GiB
	WriteTimeout  time.Duration // a database write slower than this counts as an outage; default 5s
	RetryInterval time.Duration // how often spooled records are retried; default 1s
	Logger        *zap.Logger
	Metrics       Metrics
}

func (c Config) withDefaults() (Config, error) {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if err := oneOf("durability", &c.Durability, "async", "sync"); err != nil {
		return c, err
	}
	if err := oneOf("fail mode", &c.Fail, "closed", "open"); err != nil {
		return c, err
	}
	if c.SpoolDir == "" {
		c.SpoolDir = "gated-spool"
	}
	if c.File == "" {
		c.File = "gated-audit.jsonl"
	}
	def(&c.Retention, 90*24*time.Hour)
	def(&c.FlushInterval, 100*time.Millisecond)
	def(&c.WriteTimeout, 5*time.Second)
	def(&c.RetryInterval, time.Second)
	if c.BatchSize <= 0 {
		c.BatchSize = 1000
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 10000
	}
	if c.SpoolMaxBytes <= 0 {
		c.SpoolMaxBytes = 1 << 30
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Metrics == nil {
		c.Metrics = nopMetrics{}
	}
	return c, nil
}

// oneOf defaults an empty *v to the first allowed value and rejects the
// rest of the unknown ones.
func oneOf(what string, v *string, allowed ...string) error {
	if *v == "" {
		*v = allowed[0]
	}
	if !slices.Contains(allowed, *v) {
		return fmt.Errorf("audit %s %q: want %s", what, *v, strings.Join(allowed, " or "))
	}
	return nil
}

// Open starts a recorder: PostgreSQL with a local spool when DatabaseURL is
// set, else the JSON-lines file. It does not apply migrations (see Migrate)
// and does not fail when the database is down: records then go to the spool.
func Open(ctx context.Context, cfg Config) (Recorder, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.DatabaseURL == "" {
		f, err := openFileSink(cfg.File, cfg.Durability == "sync")
		if err != nil {
			return nil, err
		}
		r := newRecorder(cfg, SinkFile, f.write, nil)
		r.closers = append(r.closers, f.close)
		r.start()
		return r, nil
	}
	pg, err := openPGSink(ctx, cfg)
	if err != nil {
		return nil, err
	}
	sp, err := spool.Open(cfg.SpoolDir, cfg.SpoolMaxBytes)
	if err != nil {
		pg.close()
		return nil, fmt.Errorf("audit spool: %w", err)
	}
	r := newRecorder(cfg, SinkPostgres, pg.insert, sp)
	r.closers = append(r.closers, sp.Close, pg.close)
	r.cfg.Metrics.SpoolBytes(sp.Size())
	r.start()
	r.wg.Add(2)
	go r.replayLoop()
	go r.maintainLoop(pg)
	return r, nil
}

// writeFunc stores a batch durably or fails as a whole.
type writeFunc func(ctx context.Context, recs []*Record) error

type outcome struct {
	res Result
	err error
}

type item struct {
	rec  *Record
	done chan outcome // sync mode only
}

type recorder struct {
	cfg     Config
	sink    string
	primary writeFunc
	spool   *spool.Spool // nil for the file sink
	closers []func() error

	queue  chan *item
	mu     sync.RWMutex // guards closed against sends on the closed queue
	closed bool

	primaryOK atomic.Bool // last primary write succeeded; false routes batches to the spool

	ctx    context.Context // writer's context: cancelled when Close runs out of time
	cancel context.CancelFunc
	bg     context.Context // replay and maintenance: cancelled as Close starts
	stopBg context.CancelFunc
	wg     sync.WaitGroup
}

func newRecorder(cfg Config, sink string, primary writeFunc, sp *spool.Spool) *recorder {
	ctx, cancel := context.WithCancel(context.Background())
	bg, stopBg := context.WithCancel(ctx)
	r := &recorder{
		cfg: cfg, sink: sink, primary: primary, spool: sp,
		queue: make(chan *item, cfg.QueueSize),
		ctx:   ctx, cancel: cancel, bg: bg, stopBg: stopBg,
	}
	r.primaryOK.Store(true)
	return r
}

func (r *recorder) start() {
	r.wg.Add(1)
	go r.writeLoop()
}

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
func (r *recorder) Record(ctx context.Context, rec *Record) (Result, error) {
	if err := validate(rec); err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	it := &item{rec: rec}
	if r.cfg.Durability == "sync" {
		it.done = make(chan outcome, 1)
	}
	r.mu.RLock()
	if r.closed {
		r.mu.RUnlock()
		return r.unavailable(rec, errors.New("recorder closed"))
	}
	queued := false
	// While the database is down and the spool refuses appends, a queued
	// record would only be lost later: try the spool now and answer honestly.
	if r.primaryOK.Load() || r.spool == nil || r.spool.Healthy() {
		select {
		case r.queue <- it:
			queued = true
		default:
		}
	}
	r.mu.RUnlock()
	if !queued {
		return r.direct(rec)
	}
	if it.done == nil {
		return Result{Sink: r.sink, Status: StatusQueued}, nil
	}
	select {
	case o := <-it.done:
		if o.err != nil {
			return r.unavailable(rec, o.err)
		}
		return o.res, nil
	case <-ctx.Done():
		// Still queued and will be stored, but not known durable.
		if r.cfg.Fail == "open" {
			return Result{Sink: r.sink, Status: StatusQueued}, nil
		}
		return Result{}, fmt.Errorf("%w: waiting for a durable write: %w", ErrUnavailable, ctx.Err())
	}
}

// direct stores one record without the queue (queue full, or the writer is
// failing): into the spool for PostgreSQL, straight into the file otherwise.
func (r *recorder) direct(rec *Record) (Result, error) {
	recs := []*Record{rec}
	if r.spool != nil {
		if err := r.spoolAppend(recs); err != nil {
			return r.unavailable(rec, err)
		}
		r.cfg.Metrics.Recorded(r.sink, StatusSpooled)
		return Result{Sink: r.sink, Status: StatusSpooled}, nil
	}
	if err := r.writePrimary(r.ctx, recs); err != nil {
		return r.unavailable(rec, err)
	}
	r.cfg.Metrics.Recorded(r.sink, StatusWritten)
	return Result{Sink: r.sink, Status: StatusWritten}, nil
}

// unavailable applies the fail mode to a record that cannot be stored.
func (r *recorder) unavailable(rec *Record, cause error) (Result, error) {
	if r.cfg.Fail == "open" {
		r.cfg.Metrics.Recorded(r.sink, StatusDropped)
		r.cfg.Logger.Error("audit record dropped (fail=open)",
			zap.String("decision_id", rec.DecisionID), zap.Error(cause))
		return Result{Sink: r.sink, Status: StatusDropped}, nil
	}
	r.cfg.Metrics.Recorded(r.sink, "unavailable")
	return Result{}, fmt.Errorf("%w: %w", ErrUnavailable, cause)
}

func (r *recorder) writePrimary(parent context.Context, recs []*Record) error {
	ctx, cancel := context.WithTimeout(parent, r.cfg.WriteTimeout)
	defer cancel()
	err := r.primary(ctx, recs)
	r.primaryOK.Store(err == nil)
	if err != nil {
		r.cfg.Metrics.WriteError(r.sink)
		r.cfg.Logger.Warn("audit write failed", zap.String("sink", r.sink), zap.Int("records", len(recs)), zap.Error(err))
	}
	return err
}

func (r *recorder) spoolAppend(recs []*Record) error {
	bufs := make([][]byte, len(recs))
	for i, rec := range recs {
		b, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("encode record for spool: %w", err)
		}
		bufs[i] = b
	}
	err := r.spool.Append(bufs...)
	r.cfg.Metrics.SpoolBytes(r.spool.Size())
	if err != nil {
		r.cfg.Metrics.WriteError("spool")
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// writeLoop batches queued records. Async batches wait up to FlushInterval
// to fill; sync batches take whatever is queued right now (group commit)
// so no caller waits on a timer.
func (r *recorder) writeLoop() {
	defer r.wg.Done()
	batch := make([]*item, 0, r.cfg.BatchSize)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		it, ok := <-r.queue
		if !ok {
			return
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
	if r.cfg.Durability == "sync" || len(*batch) >= r.cfg.BatchSize {
		return true
	}
	timer.Reset(r.cfg.FlushInterval)
	defer timer.Stop()
	for len(*batch) < r.cfg.BatchSize {
		select {
		case it, ok := <-r.queue:
			if !ok {
				return false
			}
			*batch = append(*batch, it)
		case <-timer.C:
			return true
		}
	}
	return true
}

// drainInto takes what is queued now without waiting; false once closed.
func (r *recorder) drainInto(batch *[]*item) bool {
	for len(*batch) < r.cfg.BatchSize {
		select {
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

// flush stores a batch: the primary sink first unless it is known to be
// failing and the spool can take the batch, then the spool.
func (r *recorder) flush(batch []*item) {
	recs := make([]*Record, len(batch))
	for i, it := range batch {
		recs[i] = it.rec
	}
	var err error
	if r.spool == nil || r.primaryOK.Load() || !r.spool.Healthy() {
		if err = r.writePrimary(r.ctx, recs); err == nil {
			r.ack(batch, outcome{res: Result{Sink: r.sink, Status: StatusWritten}})
			return
		}
	}
	if r.spool != nil {
		if err = r.spoolAppend(recs); err == nil {
			r.ack(batch, outcome{res: Result{Sink: r.sink, Status: StatusSpooled}})
			return
		}
	}
	r.ack(batch, outcome{err: err})
}

func (r *recorder) ack(batch []*item, o outcome) {
	for _, it := range batch {
		if o.err == nil {
			r.cfg.Metrics.Recorded(r.sink, o.res.Status)
		}
		if it.done != nil {
			it.done <- o // Record applies the fail mode to errors
			continue
		}
		if o.err != nil {
			// Async: the decision was already answered; count and log the loss.
			r.cfg.Metrics.Recorded(r.sink, StatusDropped)
			r.cfg.Logger.Error("audit record lost: neither sink nor spool took it",
				zap.String("decision_id", it.rec.DecisionID), zap.Error(o.err))
		}
	}
}

// replayLoop moves spooled records into PostgreSQL, oldest segment first,
// and deletes a segment only after all its records are committed. Inserts
// are idempotent, so a segment replayed twice (crash between commit and
// delete) stores nothing twice.
func (r *recorder) replayLoop() {
	r.every(r.cfg.RetryInterval, func() {
		if r.spool.Size() > 0 {
			r.replay()
		}
	})
}

// every runs fn each interval until Close starts; it is a background loop
// of the wait group.
func (r *recorder) every(interval time.Duration, fn func()) {
	defer r.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-r.bg.Done():
			return
		case <-t.C:
			fn()
		}
	}
}

func (r *recorder) replay() {
	segs, err := r.spool.Sealed()
	if err != nil {
		r.cfg.Logger.Error("audit spool: listing segments", zap.Error(err))
		return
	}
	for _, seg := range segs {
		bufs, skipped, err := spool.ReadSegment(seg)
		if err != nil {
			r.cfg.Logger.Error("audit spool: reading segment", zap.String("segment", seg), zap.Error(err))
			return
		}
		if skipped > 0 {
			r.cfg.Logger.Warn("audit spool: torn tail skipped", zap.String("segment", seg), zap.Int64("bytes", skipped))
		}
		recs := make([]*Record, 0, len(bufs))
		for _, b := range bufs {
			rec := new(Record)
			if err := json.Unmarshal(b, rec); err != nil {
				// The checksum passed, so this is not a torn write; keep the
				// rest of the segment moving rather than block it forever.
				r.cfg.Logger.Error("audit spool: undecodable record skipped", zap.String("segment", seg), zap.Error(err))
				continue
			}
			recs = append(recs, rec)
		}
		for chunk := range chunks(recs, r.cfg.BatchSize) {
			if err := r.writePrimary(r.bg, chunk); err != nil {
				return // still down; retry on the next tick
			}
		}
		if err := r.spool.Remove(seg); err != nil {
			r.cfg.Logger.Error("audit spool: removing replayed segment", zap.String("segment", seg), zap.Error(err))
			return
		}
		r.cfg.Metrics.SpoolBytes(r.spool.Size())
		for range recs {
			r.cfg.Metrics.Recorded(r.sink, "replayed")
		}
	}
}

func chunks(recs []*Record, n int) func(func([]*Record) bool) {
	return func(yield func([]*Record) bool) {
		for len(recs) > 0 {
			k := min(n, len(recs))
			if !yield(recs[:k]) {
				return
			}
			recs = recs[k:]
		}
	}
}

func (r *recorder) Ready() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return false
	}
	return r.primaryOK.Load() || (r.spool != nil && r.spool.Healthy())
}

func (r *recorder) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	close(r.queue)
	r.stopBg()
	r.mu.Unlock()

	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		r.cancel() // abort database writes; the writer then spools what is left
		<-done
	}
	r.cancel()
	var errs []error
	for _, c := range r.closers {
		errs = append(errs, c())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close audit recorder: %w", err)
	}
	return nil
}
