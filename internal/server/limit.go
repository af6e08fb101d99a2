package server

import (
	"context"
	"math"
	"time"

	"golang.org/x/time/rate"

	"github.com/gatedhq/gated/internal/limit"
)

// limiter keeps one token bucket per caller: N requests a minute with a
// burst of N. Idle buckets are forgotten so the count stays bounded by the
// callers active in the last few minutes.
type limiter struct {
	perMinute int
	rate      limit.Rate
	keys      limit.Limiter
}

const bucketIdle = 5 * time.Minute

// newLimiter counts in backend's namespace; nil when perMinute is off.
func newLimiter(perMinute int, backend limit.Backend, namespace string) *limiter {
	if perMinute <= 0 {
		return nil
	}
	return &limiter{
		perMinute: perMinute,
		rate:      limit.Rate{Limit: rate.Limit(float64(perMinute) / 60), Burst: perMinute, Idle: bucketIdle},
		keys:      backend(namespace, limit.Config{SweepEvery: bucketIdle}),
	}
}

// allow takes n requests for key (a request that stands for n, as a batch
// of decisions does); when refused it says how long to wait. An error means
// the count could not be reached (shared limits only).
func (l *limiter) allow(ctx context.Context, key string, n int, now time.Time) (bool, time.Duration, error) {
	res, err := l.keys.AllowN(ctx, now, l.rate, n, key)
	return res.OK, res.Wait, err
}

// capacity is the most requests one request may stand for: a full bucket.
// AllowN never allows more, in process or in Redis, however long one waits.
func (l *limiter) capacity() int { return l.rate.Burst }

// blocked reports, without taking a request, whether key must wait before
// its next one, and how long. A key never seen has nothing to wait for and
// gets no bucket.
func (l *limiter) blocked(ctx context.Context, key string, now time.Time) (bool, time.Duration, error) {
	res, err := l.keys.Peek(ctx, now, l.rate, key)
	return !res.OK, res.Wait, err
}

// retryAfterSeconds rounds a wait up to whole seconds, at least one.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
