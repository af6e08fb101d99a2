package server

import (
	"math"
	"time"

	"golang.org/x/time/rate"

	"github.com/gatedhq/gated/internal/limit"
)

// limiter keeps one token bucket per caller: N requests a minute with a
// burst of N. Idle buckets are forgotten so the map stays bounded by the
// callers active in the last few minutes.
type limiter struct {
	perMinute int
	rate      limit.Rate
	keys      *limit.Keyed
}

const bucketIdle = 5 * time.Minute

func newLimiter(perMinute int) *limiter {
	if perMinute <= 0 {
		return nil
	}
	return &limiter{
		perMinute: perMinute,
		rate:      limit.Rate{Limit: rate.Limit(float64(perMinute) / 60), Burst: perMinute, Idle: bucketIdle},
		keys:      limit.New(limit.Config{SweepEvery: bucketIdle}),
	}
}

// allow takes one request for key; when refused it says how long to wait.
func (l *limiter) allow(key string, now time.Time) (bool, time.Duration) {
	ok, wait, _ := l.keys.Allow(now, l.rate, key)
	return ok, wait
}

// blocked reports, without taking a request, whether key must wait before
// its next one, and how long. A key never seen has nothing to wait for and
// gets no bucket.
func (l *limiter) blocked(key string, now time.Time) (bool, time.Duration) {
	return l.keys.Blocked(now, key)
}

// retryAfterSeconds rounds a wait up to whole seconds, at least one.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
