package audit

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit/chain"
)

// Durability is when a decision's answer may leave: before its record is
// durable (Async, the default) or after (Sync).
type Durability int

const (
	Async Durability = iota
	Sync
)

// FailMode is what happens to a call whose record can be neither stored
// nor spooled: refused (FailClosed, the default) or let stand (FailOpen).
type FailMode int

const (
	FailClosed FailMode = iota
	FailOpen
)

// ParseDurability reads async or sync.
func ParseDurability(s string) (Durability, error) {
	switch s {
	case "async", "":
		return Async, nil
	case "sync":
		return Sync, nil
	}
	return Async, fmt.Errorf("audit durability must be async or sync, not %q", s)
}

// ParseFailMode reads closed or open.
func ParseFailMode(s string) (FailMode, error) {
	switch s {
	case "closed", "":
		return FailClosed, nil
	case "open":
		return FailOpen, nil
	}
	return FailClosed, fmt.Errorf("audit fail mode must be closed or open, not %q", s)
}

func (d Durability) String() string {
	if d == Sync {
		return "sync"
	}
	return "async"
}

func (f FailMode) String() string {
	if f == FailOpen {
		return "open"
	}
	return "closed"
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
	// Signer signs the chain's checkpoints; nil leaves records chained but
	// unsigned. CheckpointInterval is how often a checkpoint is signed
	// while records arrive (default DefaultCheckpointInterval); Close
	// signs the last head.
	Signer             *chain.Signer
	CheckpointInterval time.Duration
	Logger             *zap.Logger
	Metrics            Metrics
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
	def(&c.CheckpointInterval, DefaultCheckpointInterval)
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
