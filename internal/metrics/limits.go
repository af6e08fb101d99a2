package metrics

import "github.com/prometheus/client_golang/prometheus"

// Outcomes of a limited call the limit backend could not answer, the closed
// set of gated_limit_backend_errors_total{outcome}.
const (
	LimitRefused = "refused" // --limits-fail closed
	LimitAllowed = "allowed" // --limits-fail open
)

func newLimitErrors(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gated_limit_backend_errors_total",
		Help: "Limited calls (requests, failed authentications, POLICY.md limits) the shared limit backend could not count, by backend and what was done with the call.",
	}, []string{"backend", "outcome"})
	reg.MustRegister(c)
	// Pre-created so that a rate reads 0 rather than absent; redis is the
	// one backend that can fail.
	for _, o := range []string{LimitRefused, LimitAllowed} {
		c.WithLabelValues("redis", o)
	}
	return c
}

// LimitBackendError counts one call the Redis limit backend could not
// answer, and whether it was let through; it has the shape of
// internal/limit/redis's Config.OnError.
func (m *Metrics) LimitBackendError(allowed bool) {
	outcome := LimitRefused
	if allowed {
		outcome = LimitAllowed
	}
	m.limitErrors.WithLabelValues("redis", outcome).Inc()
}
