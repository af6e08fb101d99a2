package policy

import (
	"context"
	"time"

	"golang.org/x/time/rate"

	keyed "github.com/gatedhq/gated/internal/limit"
)

// Limiter holds the rate-tool-calls state: token buckets keyed by limit,
// caller or principal, and action (see Set.exceededLimit). Counted in this
// process only, N replicas allow up to N times a limit; counted in a shared
// store (limit/redis), the fleet allows the limit. It lives outside Set so
// a policy reload keeps the counts of every limit it does not change.
type Limiter struct {
	keys keyed.Limiter
}

const (
	// sweepEvery bounds how often idle buckets are dropped.
	sweepEvery = time.Minute
	// maxBuckets bounds the limiter's memory whoever calls: past it a call
	// that needs a new bucket is deferred (fail closed) until idle ones
	// expire. Callers are tokens and client addresses (an IPv6 /64 counts
	// once), so reaching it takes that many distinct callers within a period.
	maxBuckets = 100_000
)

// NewLimiter returns an empty Limiter counting in this process.
func NewLimiter() *Limiter { return LimiterOn(keyed.Local) }

// LimiterOn returns a Limiter counting in backend.
func LimiterOn(backend keyed.Backend) *Limiter {
	return &Limiter{keys: backend("policy", keyed.Config{SweepEvery: sweepEvery, MaxKeys: maxBuckets})}
}

func newLimiterCap(n int) *Limiter {
	return &Limiter{keys: keyed.New(keyed.Config{SweepEvery: sweepEvery, MaxKeys: n})}
}

// allow spends one call from every bucket of keys (value calls per `per`,
// burst value) at time now, or from none when one of them is empty. full
// reports a refusal because a new bucket was needed and the limiter holds
// maxBuckets already. A bucket idle for a whole period has refilled and is
// dropped. An error means the count could not be reached.
func (l *Limiter) allow(ctx context.Context, value float64, per time.Duration, now time.Time, keys ...string) (allowed, full bool, err error) {
	r := keyed.Rate{Limit: rate.Limit(value / per.Seconds()), Burst: int(value), Idle: per}
	res, err := l.keys.Allow(ctx, now, r, keys...)
	return res.OK, res.Full, err
}
