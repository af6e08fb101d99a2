package audit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit/chain"
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
	// Stored reports a record another transaction wrote to PostgreSQL (an
	// approval's spending stores its decision's record with it) and
	// returns the result the decision carries.
	Stored(rec *Record) Result
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
	id, err := chain.NewID(cfg.SpoolOwner)
	if err != nil {
		return nil, errors.Join(err, sink.Close())
	}
	lk := &links{id: id, signer: cfg.Signer, every: cfg.CheckpointInterval, at: time.Now()}
	cfg.Logger.Info("audit chain started", zap.String("chain_id", id), zap.Bool("signed", cfg.Signer != nil))
	remote, ok := sink.(RemoteSink)
	if !ok {
		r := newRecorder(cfg, sink, nil, nil, lk)
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
	r := newRecorder(cfg, sink, remote, sp, lk)
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
	linked   bool         // stored already by another transaction (Stored): only its link is to be stored
	reserved int64        // spool bytes kept for this record (async, answered before it is stored)
	done     chan outcome // nil: the caller has its answer already (async)
	state    atomic.Int32
}

// recorder is the Recorder. Its work is spread by stage: intake.go takes a
// record in, batch.go batches the queue for the writer, commit.go stores a
// batch and settles a commit whose acknowledgement was lost, corrections.go
// makes the store say refuse where the caller was refused, and
// background.go connects, migrates, maintains and replays the spool.
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

	links *links // the writer's chain

	fixMu       sync.Mutex
	fixes       []Fix              // corrections neither the sink nor the spool has taken yet
	checkpoints []chain.Checkpoint // and the checkpoints stored with them

	ctx    context.Context // writer's context: cancelled when Close runs out of time
	cancel context.CancelFunc
	bg     context.Context // background loops: cancelled as Close starts
	stopBg context.CancelFunc
	wg     sync.WaitGroup
}

func newRecorder(cfg Config, sink Sink, remote RemoteSink, sp *spool.Spool, lk *links) *recorder {
	ctx, cancel := context.WithCancel(context.Background())
	bg, stopBg := context.WithCancel(ctx)
	bp, ok := cfg.Metrics.(Backpressure)
	if !ok {
		bp = nopMetrics{}
	}
	bp.QueueCapacity(cfg.QueueSize)
	r := &recorder{
		cfg: cfg, backpressure: bp, name: sink.Name(), sink: sink, remote: remote, spool: sp, links: lk,
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

// Stored queues rec's link: the writer links it in its chain and stores
// the link onto the row the other transaction wrote. Should the queue be
// full or closed, the row stays unlinked and verify lists it.
func (r *recorder) Stored(rec *Record) Result {
	r.cfg.Metrics.Recorded(SinkPostgres, StatusWritten)
	queued := false
	r.mu.RLock()
	if !r.closed {
		select {
		case r.queue <- &item{rec: rec, linked: true}:
			queued = true
		default:
		}
	}
	r.mu.RUnlock()
	if !queued {
		r.cfg.Logger.Error("audit record stored without its chain link: the queue is full or closed",
			zap.String("decision_id", rec.DecisionID))
	}
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
		errs = append(errs, fmt.Errorf("correction of decision %s not stored", f.Record.DecisionID))
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
