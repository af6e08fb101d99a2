package gate

import (
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/tracing"
)

// Option configures an Engine.
type Option func(*Engine)

// WithClock sets the clock used for evidence freshness and time conditions.
func WithClock(now func() time.Time) Option { return func(e *Engine) { e.now = now } }

// WithShadow puts every decision in shadow mode.
func WithShadow(on bool) Option { return func(e *Engine) { e.shadow = on } }

// WithCatalog joins events to the catalog current() returns (read once per
// decision, so a reload never splits one), with the given handling of
// uncatalogued tools and of argument validation.
func WithCatalog(current func() *catalog.Catalog, unknown UnknownTools, args catalog.ArgumentMode) Option {
	return func(e *Engine) { e.catalog, e.unknownTools, e.argMode = current, unknown, args }
}

// WithPolicy evaluates the policy current() returns (read once per
// decision). lim keeps rate-limit counts across policy reloads.
func WithPolicy(current func() *policy.Set, lim *policy.Limiter) Option {
	return func(e *Engine) { e.policy, e.limiter = current, lim }
}

// WithAudit records every decision, redacted, with rec. A record that can
// be neither stored nor spooled refuses the call (unless the recorder runs
// fail-open, when it reports the record dropped).
func WithAudit(rec audit.Recorder, red *audit.Redactor, version string) Option {
	return func(e *Engine) { e.recorder, e.redactor, e.version = rec, red, version }
}

// WithMetrics counts every decision.
func WithMetrics(m *metrics.Metrics) Option { return func(e *Engine) { e.metrics = m } }

// WithTracing traces every decision, and each of its stages, with tp. The
// no-op provider leaves the engine untraced.
func WithTracing(tp trace.TracerProvider) Option {
	return func(e *Engine) {
		if _, off := tp.(noop.TracerProvider); !off {
			e.tracer = tp.Tracer(tracing.Scope)
		}
	}
}
