package policy

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter holds the rate-tool-calls state: token buckets keyed by limit,
// caller or principal, and action (see Set.exceededLimit), in this process
// only, so N replicas allow up to N times a limit. It lives outside Set so
// a policy reload keeps the counts of every limit it does not change.
type Limiter struct {
	mu         sync.Mutex
	buckets    map[string]*bucket
	lastSweep  time.Time
	lastForced time.Time
	maxBuckets int
}

type bucket struct {
	lim      *rate.Limiter
	per      time.Duration
	lastUsed time.Time
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

// NewLimiter returns an empty Limiter.
func NewLimiter() *Limiter { return &Limiter{buckets: map[string]*bucket{}, maxBuckets: maxBuckets} }

// allow spends one call from every bucket of keys (value calls per `per`,
// burst value) at time now, or from none when one of them is empty. full
// reports a refusal because a new bucket was needed and the limiter holds
// maxBuckets already.
func (l *Limiter) allow(value float64, per time.Duration, now time.Time, keys ...string) (allowed, full bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	bs := make([]*bucket, len(keys))
	for i, key := range keys {
		b, ok := l.buckets[key]
		if !ok {
			if len(l.buckets) >= l.maxBuckets && now.Sub(l.lastForced) >= time.Second {
				l.lastForced = now // at most one full scan a second, however many calls find it full
				l.lastSweep = time.Time{}
				l.sweep(now)
			}
			if len(l.buckets) >= l.maxBuckets {
				return false, true
			}
			b = &bucket{lim: rate.NewLimiter(rate.Limit(value/per.Seconds()), int(value)), per: per}
			l.buckets[key] = b
		}
		b.lastUsed = now
		bs[i] = b
	}
	for _, b := range bs {
		if b.lim.TokensAt(now) < 1 {
			return false, false
		}
	}
	for _, b := range bs {
		b.lim.AllowN(now, 1)
	}
	return true, false
}

// sweep drops buckets idle for a whole period: they have refilled, so a
// fresh bucket behaves the same, and memory stays bounded by active callers.
func (l *Limiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < sweepEvery {
		return
	}
	l.lastSweep = now
	for k, b := range l.buckets {
		if now.Sub(b.lastUsed) >= b.per {
			delete(l.buckets, k)
		}
	}
}
