package policy

import (
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/limit/redis"
	"github.com/gatedhq/gated/internal/redistest"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testgated"
)

func redisLimiter(t *testing.T, cfg redis.Config) *Limiter {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	s, err := redis.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return LimiterOn(s.Backend)
}

// Two replicas counting POLICY.md limits in one Redis share the budget: a
// limit of 2 a minute admits 2 calls across them, not 4, keyed as before
// (by caller and action).
func TestRateLimitSharedInRedis(t *testing.T) {
	t.Parallel()
	s, prefix := limitedSet(t), redistest.Prefix(t)
	a := redisLimiter(t, redis.Config{URL: redistest.URL(), Prefix: prefix})
	b := redisLimiter(t, redis.Config{URL: redistest.URL(), Prefix: prefix})
	assertOutcome(t, s, openCall(a, "agent-1", "192.0.2.7"), route.Accept)
	assertOutcome(t, s, openCall(b, "agent-2", "192.0.2.7"), route.Accept)
	assertOutcome(t, s, openCall(a, "agent-3", "192.0.2.7"), route.Defer, route.CodePolicyLimitExceeded)
	assertOutcome(t, s, openCall(b, "agent-4", "192.0.2.7"), route.Defer, route.CodePolicyLimitExceeded)
	assertOutcome(t, s, openCall(b, "agent-1", "192.0.2.8"), route.Accept)
}

// A limit that cannot be counted refuses the call, naming
// rate_limit_unavailable, unless limits fail open.
func TestRateLimitRedisUnavailable(t *testing.T) {
	t.Parallel()
	s, down := limitedSet(t), "redis://"+testgated.ClosedAddr(t)
	closed := redisLimiter(t, redis.Config{URL: down, Timeout: 200 * time.Millisecond})
	res := assertOutcome(t, s, openCall(closed, "a", "192.0.2.7"), route.Refuse, route.CodeRateLimitUnavailable)
	if res.Block == nil || res.Block.Decision != "deny" {
		t.Fatalf("block %+v; want deny", res.Block)
	}
	open := redisLimiter(t, redis.Config{URL: down, Timeout: 200 * time.Millisecond, FailOpen: true})
	assertOutcome(t, s, openCall(open, "a", "192.0.2.7"), route.Accept)
}
