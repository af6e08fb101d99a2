package replay

import (
	"context"
	"time"

	"github.com/gatedhq/gated/internal/limit"
)

// Unlimited is the limit.Backend to load a replay's policy with: replay
// does not count calls (the counts at the time are not recorded, and a
// replay's own would follow its window, not the callers' pace), so every
// call is within its rate limits, and a record a limit decided is marked
// UnseenRateLimit.
func Unlimited(string, limit.Config) limit.Limiter { return unlimited{} }

type unlimited struct{}

func (unlimited) Allow(context.Context, time.Time, limit.Rate, ...string) (limit.Result, error) {
	return limit.Result{OK: true}, nil
}

func (unlimited) AllowN(context.Context, time.Time, limit.Rate, int, ...string) (limit.Result, error) {
	return limit.Result{OK: true}, nil
}

func (unlimited) Peek(context.Context, time.Time, limit.Rate, string) (limit.Result, error) {
	return limit.Result{OK: true}, nil
}
