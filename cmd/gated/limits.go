package main

import (
	"context"
	"flag"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/limit"
	"github.com/gatedhq/gated/internal/limit/redis"
	"github.com/gatedhq/gated/internal/metrics"
)

// limitFlags say where request rate limits, failed-authentication limits
// and POLICY.md limits are counted.
type limitFlags struct {
	redisURL string
	prefix   string
	timeout  time.Duration
	fail     string
}

const (
	limitsFailClosed = "closed"
	limitsFailOpen   = "open"
)

func (l *limitFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.redisURL, "redis-url", "", "count request rate limits, failed authentications and POLICY.md limits in this Redis (redis:// or rediss://), shared by every replica pointed at it; prefer GATED_REDIS_URL, it may hold a password; without it each replica counts alone")
	fs.StringVar(&l.prefix, "redis-key-prefix", "gated:", "put before every limit key in Redis, so deployments sharing one Redis keep apart")
	fs.DurationVar(&l.timeout, "redis-timeout", 250*time.Millisecond, "longest a limited call waits on Redis before --limits-fail applies")
	fs.StringVar(&l.fail, "limits-fail", limitsFailClosed, "when Redis cannot be reached: closed refuses the limited call (blocker rate_limit_unavailable), open lets it through uncounted")
}

func (l *limitFlags) check() error {
	if l.fail != limitsFailClosed && l.fail != limitsFailOpen {
		return usageError("--limits-fail must be closed or open, got %q", l.fail)
	}
	if l.timeout <= 0 {
		return usageError("--redis-timeout must be positive, got %v", l.timeout)
	}
	return nil
}

// open returns where limits are counted and how to let go of it: in this
// process without --redis-url, else in Redis, whose failures are counted
// in m. A Redis that is down now is no reason not to start: limited calls
// follow --limits-fail until it answers.
func (l *limitFlags) open(ctx context.Context, m *metrics.Metrics, log *zap.Logger) (limit.Backend, func(), error) {
	if l.redisURL == "" {
		return limit.Local, func() {}, nil
	}
	store, err := redis.Open(redis.Config{
		URL: l.redisURL, Prefix: l.prefix, Timeout: l.timeout,
		FailOpen: l.fail == limitsFailOpen, OnError: m.LimitBackendError,
	})
	if err != nil {
		return nil, nil, usageError("--redis-url: %v", err)
	}
	if err := store.Ping(ctx); err != nil {
		log.Warn("Redis does not answer yet; limited calls follow --limits-fail until it does", zap.Error(err), zap.String("limits_fail", l.fail))
	}
	log.Info("limits are counted in Redis, shared by every replica using it", zap.String("key_prefix", l.prefix), zap.String("limits_fail", l.fail))
	return store.Backend, func() { _ = store.Close() }, nil
}
