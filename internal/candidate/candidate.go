// Package candidate runs a candidate policy beside the live one (gated
// serve --candidate): every live decision, once answered, is decided again
// by the candidate's engine, off the answer's path, through a bounded
// queue that skips (and counts) what it cannot take. The candidate never
// changes a route; what it decided is compared with the live route,
// counted, and kept as a row of its own beside the decision's record.
package candidate

import (
	"context"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/redact"
)

// DefaultQueue is how many answered decisions wait for the candidate
// before it skips.
const DefaultQueue = 1024

// maxBatch bounds the rows one write carries; writeTimeout bounds it.
const (
	maxBatch     = 256
	writeTimeout = 5 * time.Second
)

// Config configures a Candidate. Writer, Metrics and Log may be nil.
type Config struct {
	// Engine decides with the candidate's sources. It must be built
	// without an audit recorder, approvals, metrics or the live limiter:
	// DecideFollowed records, counts and spends nothing, and the engine's
	// own limiter is the candidate's.
	Engine *gate.Engine
	// Revisions names the candidate's current catalog and policy
	// revisions (they change on reload).
	Revisions func() (catalog, policy string)
	Writer    audit.CandidateWriter // nil: rows are not kept
	// Redactor is the live recorder's: a row's text is screened as a
	// record's is, so its principals and tool name read as the record's
	// and the candidate policy's codes keep no argument value. nil masks
	// such text whole (audit.MaskedText).
	Redactor *audit.Redactor
	Queue    int // DefaultQueue when zero
	Metrics  *metrics.Metrics
	Log      *zap.Logger
}

// Candidate follows live decisions with a candidate engine.
type Candidate struct {
	cfg   Config
	queue chan *gate.Followed
	done  chan struct{}

	decided, skipped, writeErrors atomic.Int64
	wider, narrower               atomic.Int64
	failing                       atomic.Bool // the last write failed: logged once per streak
}

// New returns a candidate; Run starts it.
func New(cfg Config) *Candidate {
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultQueue
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.Metrics != nil {
		cfg.Metrics.CandidateOn()
	}
	return &Candidate{cfg: cfg, queue: make(chan *gate.Followed, cfg.Queue), done: make(chan struct{})}
}

// Follow queues a live decision for the candidate, or skips it when the
// queue is full. It never blocks: it is the live engine's follower
// (gate.WithFollower).
func (c *Candidate) Follow(f *gate.Followed) {
	select {
	case c.queue <- f:
	default:
		c.skipped.Add(1)
		if c.cfg.Metrics != nil {
			c.cfg.Metrics.CandidateSkipped()
		}
	}
}

// Run decides what is queued, one decision at a time (the candidate takes
// at most one core), writing rows in batches, until ctx ends; then it
// writes what it decided and returns. What is still queued is dropped.
func (c *Candidate) Run(ctx context.Context) {
	defer close(c.done)
	var batch []*audit.Candidate
	for {
		select {
		case <-ctx.Done():
			c.write(batch)
			return
		case f := <-c.queue:
			batch = c.add(ctx, batch, f)
		}
		// Take what else is queued without waiting, then write.
	more:
		for len(batch) < maxBatch {
			select {
			case f := <-c.queue:
				batch = c.add(ctx, batch, f)
			default:
				break more
			}
		}
		c.write(batch)
		batch = batch[:0]
	}
}

// Wait returns once Run has returned.
func (c *Candidate) Wait() { <-c.done }

// add decides f and appends its row to batch. The engine turns its own
// failures into the candidate's refusal; anything else that panics here
// is logged and the decision dropped, so that the candidate's worker, and
// gated with it, keeps running.
func (c *Candidate) add(ctx context.Context, batch []*audit.Candidate, f *gate.Followed) (out []*audit.Candidate) {
	out = batch // what a panic leaves: the batch without f
	defer func() {
		if r := recover(); r != nil {
			c.cfg.Log.Error("the candidate could not follow a decision", zap.String("decision_id", f.Live.DecisionID), zap.Any("panic", r))
		}
	}()
	return append(batch, c.decide(ctx, f))
}

// decide decides f with the candidate's engine, and counts and returns
// its row.
func (c *Candidate) decide(ctx context.Context, f *gate.Followed) *audit.Candidate {
	d := c.cfg.Engine.DecideFollowed(ctx, f)
	live := f.Live
	dir := audit.Direction(live.Route, d.Route)
	c.decided.Add(1)
	switch dir {
	case audit.DirectionWider:
		c.wider.Add(1)
	case audit.DirectionNarrower:
		c.narrower.Add(1)
	}
	if c.cfg.Metrics != nil {
		c.cfg.Metrics.CandidateDecided(live.Route, d.Route)
	}
	red := c.cfg.Redactor
	// Every text is the caller's or the candidate policy's (a custom module
	// may write an argument value into a code): screened as the live
	// record's fields are.
	return &audit.Candidate{
		DecisionID: live.DecisionID, DecidedAt: f.At.UTC(),
		ToolName: red.Screen(redact.Mask(live.ToolName)), TokenName: red.Screen(f.Request.TokenName),
		Principals: red.ScreenAll(f.Request.Principals),
		LiveRoute:  live.Route.String(), Route: d.Route.String(), HardBlockers: red.ScreenAll(d.HardBlockers),
		CatalogRevision: red.Screen(d.Revisions.Catalog), PolicyRevision: red.Screen(d.Revisions.Policy),
		Direction: dir, RecordedAt: time.Now().UTC(),
	}
}

// write keeps the rows, best effort: a failure is counted and logged (once
// until a write succeeds again), never retried, and never reaches the
// live path.
func (c *Candidate) write(batch []*audit.Candidate) {
	if c.cfg.Writer == nil || len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	if err := c.cfg.Writer.WriteCandidates(ctx, batch); err != nil {
		c.writeErrors.Add(int64(len(batch)))
		if c.cfg.Metrics != nil {
			c.cfg.Metrics.CandidateWriteErrors(len(batch))
		}
		if !c.failing.Swap(true) {
			c.cfg.Log.Warn("candidate rows could not be written; the candidate keeps deciding and counting", zap.Int("rows", len(batch)), zap.Error(err))
		}
		return
	}
	if c.failing.Swap(false) {
		c.cfg.Log.Info("candidate rows are written again")
	}
}

// Status is what this process's candidate did since it started, with the
// revisions it decides with now.
type Status struct {
	CatalogRevision string `json:"catalog_revision"`
	PolicyRevision  string `json:"policy_revision"`
	Decided         int64  `json:"decided"`
	Wider           int64  `json:"wider"`
	Narrower        int64  `json:"narrower"`
	Skipped         int64  `json:"skipped"`
	WriteErrors     int64  `json:"write_errors"`
	QueueDepth      int    `json:"queue_depth"`
	QueueCapacity   int    `json:"queue_capacity"`
}

// Status reports the candidate's counts in this process.
func (c *Candidate) Status() Status {
	s := Status{
		Decided: c.decided.Load(), Wider: c.wider.Load(), Narrower: c.narrower.Load(),
		Skipped: c.skipped.Load(), WriteErrors: c.writeErrors.Load(), QueueDepth: len(c.queue), QueueCapacity: cap(c.queue),
	}
	if c.cfg.Revisions != nil {
		s.CatalogRevision, s.PolicyRevision = c.cfg.Revisions()
	}
	return s
}
