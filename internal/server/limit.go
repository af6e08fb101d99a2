package server

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiter keeps one token bucket per caller: N requests a minute with a
// burst of N. Idle buckets are forgotten so the map stays bounded by the
// callers active in the last few minutes.
type limiter struct {
	perMinute int
	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

const bucketIdle = 5 * time.Minute

func newLimiter(perMinute int) *limiter {
	if perMinute <= 0 {
		return nil
	}
	return &limiter{perMinute: perMinute, buckets: map[string]*bucket{}}
}

// allow takes one request for key; when refused it says how long to wait.
func (l *limiter) allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > bucketIdle {
		for k, b := range l.buckets {
			if now.Sub(b.seen) > bucketIdle {
				delete(l.buckets, k)
			}
		}
		l.lastSweep = now
	}
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{lim: rate.NewLimiter(rate.Limit(float64(l.perMinute)/60), l.perMinute)}
		l.buckets[key] = b
	}
	b.seen = now
	res := b.lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return false, d
	}
	return true, 0
}

// blocked reports, without taking a request, whether key must wait before
// its next one, and how long. A key never seen has nothing to wait for and
// gets no bucket.
func (l *limiter) blocked(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		return false, 0
	}
	tokens := b.lim.TokensAt(now)
	if tokens >= 1 {
		return false, 0
	}
	return true, time.Duration((1 - tokens) / float64(b.lim.Limit()) * float64(time.Second))
}

// retryAfterSeconds rounds a wait up to whole seconds, at least one.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
