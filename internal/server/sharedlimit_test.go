package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/limit/redis"
	"github.com/gatedhq/gated/internal/redistest"
	"github.com/gatedhq/gated/internal/server"
	"github.com/gatedhq/gated/internal/testgated"
)

func redisBackend(t *testing.T, cfg redis.Config) *redis.Store {
	t.Helper()
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

// Two servers counting in one Redis share a token's request budget.
func TestRateLimitSharedInRedis(t *testing.T) {
	t.Parallel()
	prefix := redistest.Prefix(t)
	a := newServer(t, func(d *server.Deps) {
		d.RateLimit, d.Limits = 2, redisBackend(t, redis.Config{URL: redistest.URL(), Prefix: prefix}).Backend
	})
	b := newServer(t, func(d *server.Deps) {
		d.RateLimit, d.Limits = 2, redisBackend(t, redis.Config{URL: redistest.URL(), Prefix: prefix}).Backend
	})
	if res := a.post(validEvent); res.status != http.StatusOK {
		t.Fatalf("first request, replica a: %d", res.status)
	}
	if res := b.post(validEvent); res.status != http.StatusOK {
		t.Fatalf("second request, replica b: %d", res.status)
	}
	checkRateLimited(t, a.post(validEvent))
	checkRateLimited(t, b.post(validEvent))
}

// With Redis unreachable, limits failing closed refuse the limited request
// with a 429 naming rate_limit_unavailable; failing open let it through.
func TestRateLimitRedisUnavailable(t *testing.T) {
	t.Parallel()
	down := "redis://" + testgated.ClosedAddr(t)
	closed := newServer(t, func(d *server.Deps) {
		d.RateLimit, d.Limits = 5, redisBackend(t, redis.Config{URL: down, Timeout: 200 * time.Millisecond}).Backend
	})
	res := closed.post(validEvent)
	checkRateLimited(t, res)
	if !strings.Contains(res.str("error"), "rate_limit_unavailable") {
		t.Fatalf("fail closed: %s; want the error to name rate_limit_unavailable", res.raw)
	}
	// The failed-authentication limit counts there too, and fails closed
	// the same way, before the token is even judged.
	res = closed.do(request{method: http.MethodPost, target: "/pre-tool-check", body: strings.NewReader(validEvent),
		header: map[string]string{"Authorization": "Bearer nope"}})
	checkRateLimited(t, res)
	if !strings.Contains(res.str("error"), "rate_limit_unavailable") {
		t.Fatalf("fail closed, bad token: %s; want the error to name rate_limit_unavailable", res.raw)
	}
	open := newServer(t, func(d *server.Deps) {
		d.RateLimit, d.Limits = 5, redisBackend(t, redis.Config{URL: down, Timeout: 200 * time.Millisecond, FailOpen: true}).Backend
	})
	if res := open.post(validEvent); res.status != http.StatusOK {
		t.Fatalf("fail open: %d %s; want 200", res.status, res.raw)
	}
}
