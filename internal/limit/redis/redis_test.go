package redis_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/gatedhq/gated/internal/limit"
	"github.com/gatedhq/gated/internal/limit/redis"
	"github.com/gatedhq/gated/internal/redistest"
	"github.com/gatedhq/gated/internal/testgated"
)

// three a minute, a burst of three
var perMinute3 = limit.Rate{Limit: rate.Limit(3.0 / 60), Burst: 3, Idle: time.Minute}

func open(t *testing.T, cfg redis.Config) *redis.Store {
	t.Helper()
	if cfg.URL == "" {
		cfg.URL = redistest.URL()
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	s, err := redis.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func allow(t *testing.T, l limit.Limiter, keys ...string) limit.Result {
	t.Helper()
	res, err := l.Allow(context.Background(), time.Now(), perMinute3, keys...)
	if err != nil {
		t.Fatalf("allow %v: %v", keys, err)
	}
	return res
}

// Two stores on one Redis — two replicas — spend from the same bucket.
func TestSharedAcrossStores(t *testing.T) {
	t.Parallel()
	prefix := redistest.Prefix(t)
	a := open(t, redis.Config{Prefix: prefix}).Backend("requests", limit.Config{})
	b := open(t, redis.Config{Prefix: prefix}).Backend("requests", limit.Config{})
	admitted := 0
	for i := range 8 {
		l := a
		if i%2 == 1 {
			l = b
		}
		if allow(t, l, "token:ci").OK {
			admitted++
		}
	}
	if admitted != 3 {
		t.Fatalf("two replicas admitted %d calls, want the limit's 3 in total", admitted)
	}
	res := allow(t, a, "token:ci")
	if res.OK || res.Wait <= 0 || res.Wait > 20*time.Second {
		t.Fatalf("past the limit: ok %v, wait %v; want refused, waiting up to the 20 s one call takes", res.OK, res.Wait)
	}
	if !allow(t, a, "token:other").OK {
		t.Fatal("another key shares token:ci's bucket")
	}
}

// Equal keys in different namespaces, or under different prefixes, are
// counted apart.
func TestNamespacesAndPrefixes(t *testing.T) {
	t.Parallel()
	prefix := redistest.Prefix(t)
	s := open(t, redis.Config{Prefix: prefix})
	other := open(t, redis.Config{Prefix: redistest.Prefix(t)}).Backend("requests", limit.Config{})
	for range 3 {
		allow(t, s.Backend("requests", limit.Config{}), "ip:127.0.0.1")
	}
	if allow(t, s.Backend("requests", limit.Config{}), "ip:127.0.0.1").OK {
		t.Fatal("the fourth call in a namespace was admitted")
	}
	if !allow(t, s.Backend("auth-failures", limit.Config{}), "ip:127.0.0.1").OK {
		t.Fatal("another namespace shares the bucket")
	}
	if !allow(t, other, "ip:127.0.0.1").OK {
		t.Fatal("another prefix shares the bucket")
	}
}

// Allow with several keys spends from all of them or from none.
func TestAllOrNone(t *testing.T) {
	t.Parallel()
	l := open(t, redis.Config{Prefix: redistest.Prefix(t)}).Backend("policy", limit.Config{})
	for range 3 {
		allow(t, l, "x")
	}
	if res := allow(t, l, "y", "x"); res.OK || res.Wait <= 0 {
		t.Fatalf("y+x with x empty: ok %v, wait %v; want refused with a wait", res.OK, res.Wait)
	}
	for i := range 3 {
		if !allow(t, l, "y").OK {
			t.Fatalf("y call %d refused: the refused y+x call spent from y", i)
		}
	}
}

// Peek looks without spending; an unknown key holds a token.
func TestPeek(t *testing.T) {
	t.Parallel()
	l := open(t, redis.Config{Prefix: redistest.Prefix(t)}).Backend("auth-failures", limit.Config{})
	peek := func() limit.Result {
		t.Helper()
		res, err := l.Peek(context.Background(), time.Now(), perMinute3, "k")
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for range 5 {
		if !peek().OK {
			t.Fatal("an unknown key is blocked, or Peek spent")
		}
	}
	for range 3 {
		allow(t, l, "k")
	}
	if res := peek(); res.OK || res.Wait <= 0 || res.Wait > 20*time.Second {
		t.Fatalf("empty: ok %v, wait %v; want blocked, waiting up to 20 s", res.OK, res.Wait)
	}
}

// A Redis that goes away refuses limited calls (fail closed) or lets them
// through (fail open), counting each; once it is back, counting resumes.
func TestRedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	for _, failOpen := range []bool{false, true} {
		var errs, allowedErrs atomic.Int32
		s := open(t, redis.Config{URL: srv.URL, Prefix: redistest.Prefix(t), Timeout: 500 * time.Millisecond, FailOpen: failOpen, OnError: func(allowed bool) {
			errs.Add(1)
			if allowed {
				allowedErrs.Add(1)
			}
		}})
		l := s.Backend("requests", limit.Config{})
		if !allow(t, l, "k").OK {
			t.Fatal("the first call was refused")
		}
		srv.Kill()
		res, err := l.Allow(context.Background(), time.Now(), perMinute3, "k")
		switch {
		case failOpen && (err != nil || !res.OK):
			t.Fatalf("fail open, Redis down: ok %v, err %v; want let through", res.OK, err)
		case !failOpen && !errors.Is(err, redis.ErrUnavailable):
			t.Fatalf("fail closed, Redis down: ok %v, err %v; want ErrUnavailable", res.OK, err)
		}
		if _, err := l.Peek(context.Background(), time.Now(), perMinute3, "k"); failOpen != (err == nil) {
			t.Fatalf("fail open %v, Redis down, Peek: err %v", failOpen, err)
		}
		if errs.Load() != 2 || (allowedErrs.Load() == 2) != failOpen {
			t.Fatalf("fail open %v: %d errors counted, %d let through; want 2, each let through only when failing open", failOpen, errs.Load(), allowedErrs.Load())
		}
		srv.Restart(t)
		// The restarted Redis is empty: the bucket starts full again.
		for i := range 3 {
			if !allow(t, l, "k").OK {
				t.Fatalf("after the restart, call %d was refused", i)
			}
		}
		if allow(t, l, "k").OK {
			t.Fatal("after the restart the limit no longer holds")
		}
	}
}

// A Redis that accepts connections and never answers costs a call the
// timeout, not a hang.
func TestSilentRedis(t *testing.T) {
	t.Parallel()
	s := open(t, redis.Config{URL: "redis://" + testgated.SilentAddr(t), Timeout: 100 * time.Millisecond})
	_, err := s.Backend("requests", limit.Config{}).Allow(context.Background(), time.Now(), perMinute3, "k")
	if !errors.Is(err, redis.ErrUnavailable) {
		t.Fatalf("silent Redis: err %v, want ErrUnavailable", err)
	}
}

// A URL that cannot be parsed is refused without repeating it: it may hold
// a password.
func TestBadURL(t *testing.T) {
	t.Parallel()
	_, err := redis.Open(redis.Config{URL: "htp://user:hunter2@redis:6379", Timeout: time.Second})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("bad URL: err %v; want an error that does not repeat the URL", err)
	}
	if _, err := redis.Open(redis.Config{URL: redistest.URL()}); err == nil {
		t.Fatal("a zero timeout was accepted")
	}
}

// A bucket of none refuses every call, as in process; a rate Redis cannot
// count is an error, never a pass, even failing open.
func TestDegenerateRates(t *testing.T) {
	t.Parallel()
	l := open(t, redis.Config{Prefix: redistest.Prefix(t), FailOpen: true}).Backend("policy", limit.Config{})
	none := limit.Rate{Limit: 0, Burst: 0}
	if res, err := l.Allow(context.Background(), time.Now(), none, "k"); err != nil || res.OK {
		t.Fatalf("a bucket of none: ok %v, err %v; want refused", res.OK, err)
	}
	if res, err := l.Peek(context.Background(), time.Now(), none, "k"); err != nil || res.OK {
		t.Fatalf("a bucket of none, Peek: ok %v, err %v; want no token", res.OK, err)
	}
	if _, err := l.Allow(context.Background(), time.Now(), limit.Rate{Limit: 0, Burst: 1}, "k"); err == nil {
		t.Fatal("a burst that never refills was counted")
	}
}

// AllowN spends n tokens or none, and never more than a full bucket holds,
// as the in-process limiter does.
func TestAllowN(t *testing.T) {
	t.Parallel()
	l := open(t, redis.Config{Prefix: redistest.Prefix(t)}).Backend("requests", limit.Config{})
	ctx := context.Background()
	allowN := func(n int, keys ...string) limit.Result {
		t.Helper()
		res, err := l.AllowN(ctx, time.Now(), perMinute3, n, keys...)
		if err != nil {
			t.Fatalf("allow %d %v: %v", n, keys, err)
		}
		return res
	}
	if !allowN(2, "a").OK {
		t.Fatal("2 of 3 refused")
	}
	if res := allowN(2, "a"); res.OK || res.Wait <= 0 || res.Wait > 20*time.Second {
		t.Fatalf("2 more of the 1 left: %+v; want refused, waiting up to the 20 s one token takes", res)
	}
	// With several keys, one short of n refuses all.
	if res := allowN(2, "b", "a"); res.OK {
		t.Fatal("b+a took 2 where a holds 1")
	}
	if !allowN(1, "a").OK || !allowN(3, "b").OK {
		t.Fatal("a refused call spent tokens")
	}
	if !allowN(0, "a").OK {
		t.Fatal("spending nothing was refused")
	}
	if res := allowN(4, "c"); res.OK {
		t.Fatal("4 from a bucket of 3 were allowed")
	}
}
