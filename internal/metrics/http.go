package metrics

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Unmatched is the route label of requests no route pattern matched (404s,
// probes of random paths), so raw paths never become label values.
const Unmatched = "unmatched"

// HTTP is chi middleware counting and timing requests by route pattern
// ("/v1/decisions/{id}", never the raw path), method and status code.
//
// Install it with chi's Use on the router, not around it: the route pattern
// lives in chi's routing context, which only exists inside the router.
func (m *Metrics) HTTP(next http.Handler) http.Handler {
	opt := promhttp.WithLabelFromCtx("route", routePattern)
	return promhttp.InstrumentHandlerCounter(m.httpRequests,
		promhttp.InstrumentHandlerDuration(m.httpDuration, next, opt), opt)
}

// routePattern is read after the handler ran, when chi has matched the
// whole pattern (sub-routers included).
func routePattern(ctx context.Context) string {
	rc := chi.RouteContext(ctx)
	if rc == nil {
		return Unmatched
	}
	if p := rc.RoutePattern(); p != "" {
		return p
	}
	return Unmatched
}
