package metrics

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Unmatched is the route label of requests no route pattern matched (404s,
// probes of random paths), so raw paths never become label values.
const Unmatched = "unmatched"

// HTTP returns middleware counting and timing requests by route pattern
// ("/v1/decisions/{id}", never the raw path), method and status code.
// routeOf reads the pattern after the handler ran (Unmatched when none
// matched); the router that knows it supplies it, so that metrics, which
// the stdio commands link too, do not depend on the HTTP router.
func (m *Metrics) HTTP(routeOf func(context.Context) string) func(http.Handler) http.Handler {
	opt := promhttp.WithLabelFromCtx("route", routeOf)
	return func(next http.Handler) http.Handler {
		return promhttp.InstrumentHandlerCounter(m.httpRequests,
			promhttp.InstrumentHandlerDuration(m.httpDuration, next, opt), opt)
	}
}
