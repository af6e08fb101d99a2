// Package redis counts gated's token buckets in Redis, so every replica
// pointed at one Redis shares them: a limit of N a minute admits N across
// the fleet, not N per replica. The buckets are redis_rate's generic cell
// rate algorithm (GCRA), which keeps one timestamp per key, expiring once
// the bucket is full again, and reads the time from Redis, so the replicas'
// clocks do not matter.
package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"

	"github.com/gatedhq/gated/internal/limit"
)

// Config says which Redis to count in and what to do when it cannot be
// reached.
type Config struct {
	// URL is a redis:// or rediss:// URL; it may hold a password, so it is
	// never logged or put in an error.
	URL string
	// Prefix goes before every key, so deployments (and tests) sharing one
	// Redis keep apart.
	Prefix string
	// Timeout bounds every call to Redis, retries included, so a limited
	// call never hangs on it.
	Timeout time.Duration
	// FailOpen lets a call through when Redis cannot be reached; without
	// it the call is refused.
	FailOpen bool
	// OnError, when set, is told of every call Redis could not answer, and
	// whether it was let through.
	OnError func(allowed bool)
}

// Store is one Redis connection pool counting every namespace's buckets.
type Store struct {
	cfg    Config
	client *goredis.Client
	rate   *redis_rate.Limiter
}

// ErrUnavailable is what a limiter of a failing-closed Store returns when
// Redis cannot answer.
var ErrUnavailable = errors.New("the shared limit store (Redis) cannot be reached")

// Open parses cfg.URL and returns a Store. It does not connect: a Redis
// that is down now is handled per call like one that goes down later.
func Open(cfg Config) (*Store, error) {
	if cfg.Timeout <= 0 {
		return nil, errors.New("the Redis timeout must be positive")
	}
	opt, err := goredis.ParseURL(cfg.URL)
	if err != nil {
		// The URL may hold a password: name the problem, not the URL.
		return nil, errors.New("the Redis URL cannot be parsed; it must look like redis://[user:password@]host:port[/db]")
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = cfg.Timeout, cfg.Timeout, cfg.Timeout, cfg.Timeout
	opt.ContextTimeoutEnabled = true // the per-call deadline bounds the socket waits too
	client := goredis.NewClient(opt)
	return &Store{cfg: cfg, client: client, rate: redis_rate.NewLimiter(client)}, nil
}

// go-redis would print its connection failures to stderr, outside gated's
// structured log; each one already reaches the caller as an error and is
// counted there (OnError). Set once, before any client exists, since the
// logger is go-redis's global.
func init() { goredis.SetLogger(quiet{}) }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// Ping reports whether Redis answers now, within the timeout.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	if err := s.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// Close closes the connection pool.
func (s *Store) Close() error { return s.client.Close() }

// Backend is the limit.Backend counting in this Store. Redis expires idle
// buckets itself, so cfg's housekeeping does not apply.
func (s *Store) Backend(namespace string, _ limit.Config) limit.Limiter {
	return &limiter{store: s, prefix: s.cfg.Prefix + namespace + ":"}
}

type limiter struct {
	store  *Store
	prefix string
}

// key is the one place a Redis key is made: the Store's prefix, the
// namespace, and the key the caller counts by (redis_rate adds "rate:").
func (l *limiter) key(k string) string { return l.prefix + k }

// Allow spends one token from every key's bucket, or none when one of
// them is empty. With several keys it looks at all of them first and then
// spends from each; a replica racing between the two can make a call
// spend from some buckets and still be refused, which over-counts, never
// admits past a limit. now is unused: Redis keeps the time.
func (l *limiter) Allow(ctx context.Context, now time.Time, r limit.Rate, keys ...string) (limit.Result, error) {
	return l.AllowN(ctx, now, r, 1, keys...)
}

// AllowN is Allow spending n tokens from every key's bucket.
func (l *limiter) AllowN(ctx context.Context, _ time.Time, r limit.Rate, n int, keys ...string) (limit.Result, error) {
	if n < 1 {
		return limit.Result{OK: true}, nil
	}
	if r.Burst < n {
		return limit.Result{}, nil // more than a full bucket holds (or a bucket of none), as in process
	}
	g, err := gcra(r)
	if err != nil {
		return limit.Result{}, err // a bad rate is refused whether Redis is up or not
	}
	ctx, cancel := context.WithTimeout(ctx, l.store.cfg.Timeout)
	defer cancel()
	res, err := l.allow(ctx, g, n, keys)
	return l.store.outcome(res, err)
}

func (l *limiter) allow(ctx context.Context, g redis_rate.Limit, n int, keys []string) (limit.Result, error) {
	if len(keys) > 1 {
		for _, k := range keys {
			res, err := l.peek(ctx, g, k, n)
			if err != nil || !res.OK {
				return res, err
			}
		}
	}
	for _, k := range keys {
		res, err := l.store.rate.AllowN(ctx, l.key(k), g, n)
		if err != nil {
			return limit.Result{}, err
		}
		if res.Allowed == 0 {
			return limit.Result{Wait: max(0, res.RetryAfter)}, nil
		}
	}
	return limit.Result{OK: true}, nil
}

// Peek reports, without spending, whether key holds a token.
func (l *limiter) Peek(ctx context.Context, _ time.Time, r limit.Rate, key string) (limit.Result, error) {
	if r.Burst < 1 {
		return limit.Result{}, nil
	}
	g, err := gcra(r)
	if err != nil {
		return limit.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, l.store.cfg.Timeout)
	defer cancel()
	res, err := l.peek(ctx, g, key, 1)
	return l.store.outcome(res, err)
}

// peek reports whether key holds n tokens. It asks for zero, which
// redis_rate answers with what is left and spends nothing (nor creates a
// key).
func (l *limiter) peek(ctx context.Context, g redis_rate.Limit, key string, n int) (limit.Result, error) {
	res, err := l.store.rate.AllowN(ctx, l.key(key), g, 0)
	if err != nil {
		return limit.Result{}, err
	}
	if res.Remaining >= n {
		return limit.Result{OK: true}, nil
	}
	// ResetAfter is until the bucket is full; n tokens come Burst-n
	// emission intervals sooner.
	interval := g.Period / time.Duration(g.Rate)
	return limit.Result{Wait: max(0, res.ResetAfter-time.Duration(g.Burst-n)*interval)}, nil
}

// outcome applies the fail-open or fail-closed rule to a call Redis could
// not answer.
func (s *Store) outcome(res limit.Result, err error) (limit.Result, error) {
	if err == nil {
		return res, nil
	}
	if s.cfg.OnError != nil {
		s.cfg.OnError(s.cfg.FailOpen)
	}
	if s.cfg.FailOpen {
		return limit.Result{OK: true}, nil
	}
	return limit.Result{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// gcra states r the way redis_rate takes it: Burst tokens per the time
// Burst takes to refill, which keeps r's rate and burst exactly.
func gcra(r limit.Rate) (redis_rate.Limit, error) {
	if r.Limit <= 0 || r.Burst < 1 {
		return redis_rate.Limit{}, fmt.Errorf("a rate of %v a second with a burst of %d cannot be counted in Redis", float64(r.Limit), r.Burst)
	}
	period := time.Duration(float64(r.Burst) / float64(r.Limit) * float64(time.Second))
	return redis_rate.Limit{Rate: r.Burst, Burst: r.Burst, Period: period}, nil
}
