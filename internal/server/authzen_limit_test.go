package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/limit/redis"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/redistest"
	"github.com/gatedhq/gated/internal/server"
)

// A batch counts as its number of evaluations against the token's HTTP
// rate limit, in process and in Redis: a batch the limit has no room for
// is refused whole with 429 and Retry-After, before anything is decided.
func TestAuthZENBatchCountsItsEvaluations(t *testing.T) {
	t.Parallel()
	batch := func(n int) string {
		return `{"subject":{"type":"user","id":"alice"},"action":{"name":"read"},"evaluations":[` +
			strings.TrimSuffix(strings.Repeat(`{"resource":{"type":"record","id":"record-1"}},`, n), ",") + `]}`
	}
	one := `{"subject":{"type":"user","id":"alice"},"action":{"name":"read"},"resource":{"type":"record","id":"record-1"}}`
	for name, backend := range limitBackends(5) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := metrics.New("test")
			f := authzenServer(t, []gate.Option{gate.WithMetrics(m)}, backend(t))
			if res := f.authzen(authzenEvaluations, batch(3), nil); res.status != http.StatusOK || len(decisions(t, res)) != 3 {
				t.Fatalf("a batch of 3 within 5: %d %s", res.status, res.raw)
			}
			// 2 left: the request takes one, the batch needs two more.
			checkRateLimited(t, f.authzen(authzenEvaluations, batch(3), nil))
			if n := decisionsCounted(t, m); n != 3 {
				t.Errorf("%d decisions; the refused batch decided some", n)
			}
			// The refused batch spent its request only: one is left.
			if res := f.authzen(authzenEvaluation, one, nil); res.status != http.StatusOK {
				t.Fatalf("the last request of the limit: %d %s", res.status, res.raw)
			}
			checkRateLimited(t, f.authzen(authzenEvaluation, one, nil))
		})
	}
}

// A batch larger than the whole limit can never be admitted, in process or
// in Redis: it is refused with 413, not 429 (a PEP honouring Retry-After
// would send it forever), saying the most a batch may hold, nothing
// decided. A batch of exactly the limit is admitted.
func TestAuthZENBatchOverTheWholeLimit(t *testing.T) {
	t.Parallel()
	batch := func(n int) string {
		return `{"subject":{"type":"user","id":"alice"},"action":{"name":"read"},"resource":{"type":"record","id":"record-1"},
			"evaluations":[` + strings.TrimSuffix(strings.Repeat(`{},`, n), ",") + `]}`
	}
	for name, backend := range limitBackends(3) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := metrics.New("test")
			f := authzenServer(t, []gate.Option{gate.WithMetrics(m)}, backend(t))
			res := f.authzen(authzenEvaluations, batch(4), nil)
			if res.status != http.StatusRequestEntityTooLarge || res.header.Get("Retry-After") != "" ||
				!strings.Contains(res.str("error"), "a batch of 4 evaluations can never be admitted under the rate limit of 3 requests per minute: a batch may hold at most 3 evaluations") ||
				decisionsCounted(t, m) != 0 {
				t.Errorf("%d Retry-After %q %s, %d decisions", res.status, res.header.Get("Retry-After"), res.raw, decisionsCounted(t, m))
			}
			// The refused batch spent its request: a full one must wait now,
			// and says so with 429.
			checkRateLimited(t, f.authzen(authzenEvaluations, batch(3), nil))
		})
	}
	fresh := authzenServer(t, nil, func(d *server.Deps) { d.RateLimit = 3 })
	if res := fresh.authzen(authzenEvaluations, batch(3), nil); res.status != http.StatusOK || len(decisions(t, res)) != 3 {
		t.Errorf("a batch of the whole limit: %d %s", res.status, res.raw)
	}
}

// limitBackends are the two places a rate limit of n per minute is counted,
// in process and in Redis, each as the Deps a test server takes.
func limitBackends(n int) map[string]func(*testing.T) func(*server.Deps) {
	return map[string]func(*testing.T) func(*server.Deps){
		"local": func(*testing.T) func(*server.Deps) { return func(d *server.Deps) { d.RateLimit = n } },
		"redis": func(t *testing.T) func(*server.Deps) {
			store := redisBackend(t, redis.Config{URL: redistest.URL(), Prefix: redistest.Prefix(t)})
			return func(d *server.Deps) { d.RateLimit, d.Limits = n, store.Backend }
		},
	}
}
