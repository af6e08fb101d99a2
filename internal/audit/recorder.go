package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit/spool"
	"github.com/gatedhq/gated/internal/route"
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
	// Stored reports a record another transaction wrote to PostgreSQL (an
	// approval's spending stores its decision's record with it) and
	// returns the result the decision carries.
	Stored(rec *Record) Result
}

// Config configures NewRecorder. Zero values take the documented defaults.
type Config struct {
	SpoolDir       string        // default "gated-spool"; each process spools in a subdirectory of its own
	SpoolOwner     string        // this process's subdirectory (a pod or host name); default "gated"
	Durability     Durability    // Async (default) or Sync
	Fail           FailMode      // FailClosed (default) or FailOpen
	BatchSize      int           // default 1000 records per write
	FlushInterval  time.Duration // async: longest a record waits for a batch; default 100ms
	QueueSize      int           // default 10000; when full, records go straight to the spool (file sink: to the writer's next batch)
	SpoolMaxBytes  int64         // default 1 GiB
	WriteTimeout   time.Duration // a sink write slower than this counts as an outage; default 5s
	ResolveTimeout time.Duration // longest wait to learn whether an unacknowledged commit happened; default WriteTimeout
	RetryInterval  time.Duration // how often spooled records are retried; default 1s
	Logger         *zap.Logger
	Metrics        Metrics
}

func (c Config) withDefaults() Config {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if c.SpoolDir == "" {
		c.SpoolDir = "gated-spool"
	}
	if c.SpoolOwner == "" {
		c.SpoolOwner = "gated"
	}
	def(&c.FlushInterval, 100*time.Millisecond)
	def(&c.WriteTimeout, 5*time.Second)
	def(&c.ResolveTimeout, c.WriteTimeout)
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
	return c
}

// NewRecorder starts a recorder writing to sink, which it owns from then
// on: it closes sink on Close, and when it fails itself.
//
// A RemoteSink gets a local spool. NewRecorder does not fail when the sink
// is away or its migrations cannot run yet: records then go to the spool,
// and the migrations and the connection are retried in the background
// until the spool can be replayed. It waits for the first attempt at most
// WriteTimeout, so a reachable database is used from the first record.
func NewRecorder(ctx context.Context, sink Sink, cfg Config) (Recorder, error) {
	cfg = cfg.withDefaults()
	remote, ok := sink.(RemoteSink)
	if !ok {
		r := newRecorder(cfg, sink, nil, nil)
		r.primaryOK.Store(true)
		r.start()
		r.wg.Add(1)
		go r.backgroundLoop()
		return r, nil
	}
	sp, err := spool.Claim(cfg.SpoolDir, cfg.SpoolOwner, cfg.SpoolMaxBytes)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("audit spool: %w", err), sink.Close())
	}
	if !sp.Healthy() {
		cfg.Logger.Error("audit spool cannot be written; records need the database until it can",
			zap.String("dir", sp.Dir()))
	}
	r := newRecorder(cfg, sink, remote, sp)
	sp.OnCommit(r.backpressure.SpoolBatch)
	r.lastFrame.Store(1 << 10) // until an append says otherwise
	if err := r.adopt(); err != nil {
		cfg.Logger.Warn("audit spool: looking for spools left by stopped processes", zap.Error(err))
	}
	r.connect(ctx)
	r.reportSpool()
	r.start()
	r.wg.Add(2)
	go r.backgroundLoop()
	go r.maintainLoop()
	return r, nil
}

type outcome struct {
	res Result
	err error
}

// Item states: a caller that stops waiting (fail=closed) is answered
// refuse, so what gets stored must not say otherwise.
const (
	itemPending          int32 = iota // queued
	itemClaimed                       // the writer is storing it
	itemAbandoned                     // the caller gave up before the writer took it: a refusal is stored instead
	itemAbandonedClaimed              // ... after: a correction follows if the record was stored
	itemFinished                      // the outcome is on its way to the caller
)

type item struct {
	rec      *Record
	reserved int64        // spool bytes kept for this record (async, answered before it is stored)
	done     chan outcome // nil: the caller has its answer already (async)
	state    atomic.Int32
}

type recorder struct {
	cfg          Config
	backpressure Backpressure // cfg.Metrics's, or a no-op
	name         string       // the sink's, for results and metrics
	sink         Sink         // the primary sink
	remote       RemoteSink   // sink, when it can be away; nil otherwise
	spool        *spool.Spool // nil unless remote is set

	queue chan *item
	// overflow hands the writer records of a local sink that found the
	// queue full: they join its next batch (nil for a remote sink, whose
	// overflow goes to the spool).
	overflow   chan *item
	writerDone chan struct{} // closed when writeLoop returns
	// mu guards closed against sends on the closed queue. It is held for
	// the check and a send that does not wait, never across I/O.
	mu     sync.RWMutex
	closed bool

	primaryOK   atomic.Bool // the last write (or probe) of the primary sink succeeded
	schemaReady atomic.Bool // the remote sink's Migrate succeeded

	orphans     []*spool.Spool // spools of stopped processes; background loop only
	orphanBytes atomic.Int64
	lastFrame   atomic.Int64 // the largest frame of the latest spool append: what Ready needs room for

	fixMu sync.Mutex
	fixes []*Record // corrections neither the sink nor the spool has taken yet

	ctx    context.Context // writer's context: cancelled when Close runs out of time
	cancel context.CancelFunc
	bg     context.Context // background loops: cancelled as Close starts
	stopBg context.CancelFunc
	wg     sync.WaitGroup
}

func newRecorder(cfg Config, sink Sink, remote RemoteSink, sp *spool.Spool) *recorder {
	ctx, cancel := context.WithCancel(context.Background())
	bg, stopBg := context.WithCancel(ctx)
	bp, ok := cfg.Metrics.(Backpressure)
	if !ok {
		bp = nopMetrics{}
	}
	bp.QueueCapacity(cfg.QueueSize)
	r := &recorder{
		cfg: cfg, backpressure: bp, name: sink.Name(), sink: sink, remote: remote, spool: sp,
		queue:      make(chan *item, cfg.QueueSize),
		writerDone: make(chan struct{}),
		ctx:        ctx, cancel: cancel, bg: bg, stopBg: stopBg,
	}
	if sp == nil {
		r.overflow = make(chan *item)
	}
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
		if n := spool.FrameSize(encodedSizeBound(rec)); r.spool.Reserve(n) {
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
	if err := r.spoolAppend([]*Record{it.rec}, nil, it.reserved); err != nil {
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

func (r *recorder) writePrimary(parent context.Context, recs, fixes []*Record) error {
	if len(recs)+len(fixes) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(parent, r.cfg.WriteTimeout)
	defer cancel()
	err := r.sink.Write(ctx, recs, fixes)
	r.primaryOK.Store(err == nil)
	if err != nil {
		r.cfg.Metrics.WriteError(r.name)
		r.cfg.Logger.Warn("audit write failed", zap.String("sink", r.name), zap.Int("records", len(recs)+len(fixes)), zap.Error(err))
	}
	return err
}

// spoolAppend appends records and corrections as one fsynced write; res
// bytes reserved for them are used up.
func (r *recorder) spoolAppend(recs, fixes []*Record, res int64) error {
	bufs := make([][]byte, 0, len(recs)+len(fixes))
	var largest int
	for i, rec := range slices.Concat(recs, fixes) {
		b, err := json.Marshal(Frame{Record: rec, Correction: i >= len(recs)})
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

// writeLoop batches queued records. Async batches wait up to FlushInterval
// to fill; sync batches, and any batch with a caller waiting, take whatever
// is queued right now (group commit) so no caller waits on a timer.
func (r *recorder) writeLoop() {
	defer r.wg.Done()
	defer close(r.writerDone)
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
	recs := make([]*Record, len(batch))
	var reserved int64
	for i, it := range batch {
		if it.done != nil && !it.state.CompareAndSwap(itemPending, itemClaimed) {
			// The caller gave up before the write and was answered refuse:
			// store that, not the route it never got.
			it.rec = refusal(it.rec)
		}
		recs[i] = it.rec
		reserved += it.reserved
	}
	st := r.store(recs, reserved)
	if r.spool != nil && st.status != StatusSpooled {
		r.spool.Release(reserved)
	}
	r.ack(batch, st)
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
func (r *recorder) store(recs []*Record, reserved int64) stored {
	if r.spool == nil {
		if err := r.writePrimary(r.ctx, recs, nil); err != nil {
			return stored{err: err}
		}
		return stored{status: StatusWritten}
	}
	dbFirst := r.primaryOK.Load()
	var dbErr error
	if dbFirst {
		if dbErr = r.writePrimary(r.ctx, recs, nil); dbErr == nil {
			return stored{status: StatusWritten}
		}
	}
	spoolErr := r.spoolAppend(recs, nil, reserved)
	if spoolErr == nil {
		return stored{status: StatusSpooled}
	}
	if !dbFirst {
		if !r.schemaReady.Load() {
			return stored{err: spoolErr}
		}
		dbErr = r.writePrimary(r.ctx, recs, nil)
		if dbErr == nil {
			return stored{status: StatusWritten}
		}
	}
	st := r.resolve(recs, dbErr)
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
func (r *recorder) resolve(recs []*Record, err error) stored {
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
		if err = r.writePrimary(r.ctx, recs, nil); err == nil {
			return stored{status: StatusWritten}
		}
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

// refusal is rec as a refused caller saw it: route refuse, no execution,
// blocker audit_unavailable.
func refusal(rec *Record) *Record {
	c := *rec
	c.FinalRoute, c.GateDecision, c.Execute = route.Refuse.String(), "fail", false
	add := func(list []string, s string) []string {
		if slices.Contains(list, s) {
			return list
		}
		return append(slices.Clip(list), s)
	}
	c.HardBlockers = add(rec.HardBlockers, route.CodeAuditUnavailable)
	c.FindingCodes = add(rec.FindingCodes, route.CodeAuditUnavailable)
	c.Reasons = add(rec.Reasons, "the record could not be confirmed stored, so the call was refused")
	return &c
}

// correct makes the store say refuse for records whose callers were
// refused: through the spool (durable at once) or the sink, else held in
// memory and retried until one takes them.
func (r *recorder) correct(recs []*Record) {
	fixes := make([]*Record, len(recs))
	for i, rec := range recs {
		fixes[i] = refusal(rec)
		r.cfg.Logger.Warn("audit record corrected to the refusal its caller got",
			zap.String("decision_id", rec.DecisionID))
	}
	r.storeFixes(fixes)
}

func (r *recorder) storeFixes(fixes []*Record) {
	if r.spool != nil {
		if err := r.spoolAppend(nil, fixes, 0); err == nil {
			return
		}
	}
	if r.spool == nil || r.primaryOK.Load() {
		if err := r.writePrimary(r.ctx, nil, fixes); err == nil {
			return
		}
	}
	r.fixMu.Lock()
	r.fixes = append(r.fixes, fixes...)
	r.fixMu.Unlock()
	for _, f := range fixes {
		r.cfg.Logger.Error("audit correction pending: the stored record may say the call was allowed although its caller was refused",
			zap.String("decision_id", f.DecisionID))
	}
}

// retryFixes hands held corrections over again.
func (r *recorder) retryFixes() {
	r.fixMu.Lock()
	fixes := r.fixes
	r.fixes = nil
	r.fixMu.Unlock()
	if len(fixes) == 0 {
		return
	}
	if r.spool != nil && r.spool.Healthy() && r.spoolAppend(nil, fixes, 0) == nil {
		return
	}
	if r.spool == nil || r.primaryOK.Load() {
		ctx := r.bg
		if ctx.Err() != nil {
			ctx = r.ctx // Close retries once more after the background loops stopped
		}
		if r.writePrimary(ctx, nil, fixes) == nil {
			return
		}
	}
	r.fixMu.Lock()
	r.fixes = append(fixes, r.fixes...)
	r.fixMu.Unlock()
}

func (r *recorder) Stored(*Record) Result {
	r.cfg.Metrics.Recorded(SinkPostgres, StatusWritten)
	return Result{Sink: SinkPostgres, Status: StatusWritten}
}

func (r *recorder) Ready() bool {
	r.mu.RLock()
	closed := r.closed
	r.mu.RUnlock() // spoolCanTake asks the file system: not under mu
	return !closed && (r.primaryOK.Load() || (r.spool != nil && r.spoolCanTake()))
}

// spoolCanTake reports whether the spool's disk works and it has room for
// a record like the last ones.
func (r *recorder) spoolCanTake() bool {
	return r.spool.Healthy() && r.spool.Room(r.lastFrame.Load())
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
	r.retryFixes()
	r.cancel()
	var errs []error
	r.fixMu.Lock()
	for _, f := range r.fixes {
		errs = append(errs, fmt.Errorf("correction of decision %s not stored", f.DecisionID))
	}
	r.fixMu.Unlock()
	for _, o := range r.orphans {
		errs = append(errs, o.Close())
	}
	if r.spool != nil {
		errs = append(errs, r.spool.Close())
	}
	errs = append(errs, r.sink.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close audit recorder: %w", err)
	}
	return nil
}
