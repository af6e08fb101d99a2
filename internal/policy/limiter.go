package policy

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter holds the rate-tool-calls state: one token bucket per (limit,
// principal, action), in this process only, so N replicas allow up to N
// times a limit. It lives outside Set so a policy reload keeps the counts of
// every limit it does not change.
type Limiter struct {
	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim      *rate.Limiter
	per      time.Duration
	lastUsed time.Time
}

// sweepEvery bounds how often idle buckets are dropped.
const sweepEvery = time.Minute

// NewLimiter returns an empty Limiter.
func NewLimiter() *Limiter { return &Limiter{buckets: map[string]*bucket{}} }

// allow spends one call of the bucket for key (value calls per `per`, burst
// value), at time now.
func (l *Limiter) allow(key string, value float64, per time.Duration, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{lim: rate.NewLimiter(rate.Limit(value/per.Seconds()), int(value)), per: per}
		l.buckets[key] = b
	}
	b.lastUsed = now
	return b.lim.AllowN(now, 1)
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
