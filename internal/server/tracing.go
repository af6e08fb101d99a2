package server

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatedhq/gated/internal/tracing"
)

// traced starts the server span of every request, as a child of the
// caller's W3C traceparent so that an agent's trace shows the gate. Only
// the method, route pattern and status are recorded: never the URL's query,
// headers (Authorization) or body. Baggage is not read: a caller's
// baggage is not gated's to pass on.
func traced(tp trace.TracerProvider) func(http.Handler) http.Handler {
	tracer := tp.Tracer(tracing.Scope)
	prop := propagation.TraceContext{}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
			ctx, span := tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(semconv.HTTPRequestMethodKey.String(r.Method)))
			defer span.End()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r.WithContext(ctx))
			// chi knows the whole pattern only after routing.
			if p := chi.RouteContext(r.Context()).RoutePattern(); p != "" {
				span.SetName(r.Method + " " + p)
				span.SetAttributes(semconv.HTTPRoute(p))
			}
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			span.SetAttributes(semconv.HTTPResponseStatusCode(status))
			if status >= http.StatusInternalServerError {
				span.SetStatus(codes.Error, fmt.Sprintf("answered %d", status))
			}
		})
	}
}
