// Package limit is gated's one token-bucket limiter. Limiter is what callers
// use; Keyed counts in this process (a golang.org/x/time/rate Limiter per
// key, with idle buckets forgotten and, optionally, a cap on how many keys
// it tracks), and internal/limit/redis counts in a Redis every replica
// shares. Every method takes the time explicitly, so callers and tests
// drive Keyed on their own clock.
package limit

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rate is the shape of a new bucket: Limit tokens a second up to Burst,
// forgotten once unused for Idle. Idle must be at least the time a bucket
// takes to refill from empty (Burst/Limit), so a forgotten bucket comes back
// as it would have been: full.
type Rate struct {
	Limit rate.Limit
	Burst int
	Idle  time.Duration
}

// Limiter counts token buckets by key.
type Limiter interface {
	// Allow spends one token from the bucket of every key (created with r
	// when new), or from none when one of them is empty.
	Allow(ctx context.Context, now time.Time, r Rate, keys ...string) (Result, error)
	// AllowN is Allow spending n tokens from each bucket: a request that
	// stands for n (a batch of n decisions). n beyond r.Burst is never
	// allowed; n below one spends nothing and is allowed.
	AllowN(ctx context.Context, now time.Time, r Rate, n int, keys ...string) (Result, error)
	// Peek reports, without spending, whether key holds a token. A key
	// never seen holds one.
	Peek(ctx context.Context, now time.Time, r Rate, key string) (Result, error)
}

// Result is a Limiter's answer. An error instead means the count could not
// be reached at all; what to do then is the caller's (fail closed).
type Result struct {
	// OK: the token was spent (Allow) or is there (Peek).
	OK bool
	// Wait, when not OK, is how long until every key holds the tokens
	// asked for again.
	Wait time.Duration
	// Full, when not OK, says the refusal came from the key cap: a new
	// bucket was needed and MaxKeys are held already (Wait is then zero).
	Full bool
}

// Backend makes the Limiter of one namespace. Each use of limits (request
// rates, failed authentications, POLICY.md limits) takes its own namespace,
// so equal keys of different uses never share a bucket.
type Backend func(namespace string, cfg Config) Limiter

// Local is the Backend counting in this process only: a Keyed per
// namespace, so N replicas allow up to N times a limit.
func Local(_ string, cfg Config) Limiter { return New(cfg) }

// Config sets a Keyed limiter's housekeeping.
type Config struct {
	// SweepEvery bounds how often idle buckets are looked for.
	SweepEvery time.Duration
	// MaxKeys caps the buckets held; zero means no cap. Past it, a call
	// that needs a new bucket is refused (fail closed) until idle ones
	// expire.
	MaxKeys int
}

// Keyed holds one token bucket per key. It is safe for concurrent use.
type Keyed struct {
	cfg        Config
	mu         sync.Mutex
	buckets    map[string]*bucket
	lastSweep  time.Time
	lastForced time.Time
}

type bucket struct {
	lim  *rate.Limiter
	idle time.Duration
	seen time.Time
}

// New returns an empty Keyed limiter.
func New(cfg Config) *Keyed {
	return &Keyed{cfg: cfg, buckets: map[string]*bucket{}}
}

// Allow spends one token at now from the bucket of every key (created with
// r when new), or from none when one of them is empty. It never fails.
func (k *Keyed) Allow(ctx context.Context, now time.Time, r Rate, keys ...string) (Result, error) {
	return k.AllowN(ctx, now, r, 1, keys...)
}

// AllowN spends n tokens at now from the bucket of every key, or none when
// one of them holds fewer. It never fails.
func (k *Keyed) AllowN(_ context.Context, now time.Time, r Rate, n int, keys ...string) (Result, error) {
	if n < 1 {
		return Result{OK: true}, nil
	}
	ok, wait, full := k.allow(now, r, n, keys...)
	return Result{OK: ok, Wait: wait, Full: full}, nil
}

func (k *Keyed) allow(now time.Time, r Rate, n int, keys ...string) (ok bool, wait time.Duration, full bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sweep(now)
	bs := make([]*bucket, len(keys))
	for i, key := range keys {
		b, found := k.buckets[key]
		if !found {
			if k.cfg.MaxKeys > 0 && len(k.buckets) >= k.cfg.MaxKeys && now.Sub(k.lastForced) >= time.Second {
				k.lastForced = now // at most one full scan a second, however many calls find it full
				k.lastSweep = time.Time{}
				k.sweep(now)
			}
			if k.cfg.MaxKeys > 0 && len(k.buckets) >= k.cfg.MaxKeys {
				return false, 0, true
			}
			b = &bucket{lim: rate.NewLimiter(r.Limit, r.Burst), idle: r.Idle}
			k.buckets[key] = b
		}
		b.seen = now
		bs[i] = b
	}
	refused := false
	for _, b := range bs {
		if b.lim.TokensAt(now) < float64(n) {
			refused, wait = true, max(wait, b.wait(now, n))
		}
	}
	if refused {
		return false, wait, false
	}
	for _, b := range bs {
		b.lim.AllowN(now, n)
	}
	return true, 0, false
}

// Peek reports, without spending, whether key holds a token, and if not how
// long until it does. A key never seen gets no bucket; looking does not
// count as use for idle expiry. It never fails.
func (k *Keyed) Peek(_ context.Context, now time.Time, _ Rate, key string) (Result, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	b, ok := k.buckets[key]
	if !ok || b.lim.TokensAt(now) >= 1 {
		return Result{OK: true}, nil
	}
	return Result{Wait: b.wait(now, 1)}, nil
}

// wait is how long until b, short of n tokens, holds them; zero when it
// never will (no refill, or n beyond its burst), a refusal without a
// meaningful wait.
func (b *bucket) wait(now time.Time, n int) time.Duration {
	tokens := b.lim.TokensAt(now)
	lim := float64(b.lim.Limit())
	if lim <= 0 || n > b.lim.Burst() {
		return 0
	}
	return time.Duration((float64(n) - tokens) / lim * float64(time.Second))
}

// Len is how many buckets are held.
func (k *Keyed) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.buckets)
}

// Has reports whether key has a bucket.
func (k *Keyed) Has(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.buckets[key]
	return ok
}

// sweep drops buckets idle for their whole idle period, at most once per
// SweepEvery, so memory stays bounded by active callers.
func (k *Keyed) sweep(now time.Time) {
	if now.Sub(k.lastSweep) < k.cfg.SweepEvery {
		return
	}
	k.lastSweep = now
	for key, b := range k.buckets {
		if now.Sub(b.seen) >= b.idle {
			delete(k.buckets, key)
		}
	}
}
