// Package tracing sets up gated's OpenTelemetry traces: an OTLP/HTTP
// exporter when the standard OTEL_* variables ask for one, a no-op tracer
// provider otherwise, and the names of gated's spans and attributes.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope is the instrumentation scope of every span gated starts.
const Scope = "github.com/gatedhq/gated"

// Span names of the decision path, below the server span of the request.
const (
	SpanDecode           = "gated.decode"
	SpanDecision         = "gated.decision"
	SpanContractValidate = "gated.contract.validate"
	SpanCatalog          = "gated.catalog"
	SpanContractEvaluate = "gated.contract.evaluate"
	SpanPolicy           = "gated.policy"
	SpanApproval         = "gated.approval"
	SpanAudit            = "gated.audit"
)

// Attributes of the decision span: names, codes and revisions only, never
// arguments, evidence text or tokens (the same rule as logs and metrics).
const (
	DecisionID      = attribute.Key("gated.decision_id")
	ToolName        = attribute.Key("gated.tool_name")
	Route           = attribute.Key("gated.route")
	Blockers        = attribute.Key("gated.blockers")
	Execute         = attribute.Key("gated.execute")
	Shadow          = attribute.Key("gated.shadow")
	CatalogRevision = attribute.Key("gated.catalog_revision")
	PolicyRevision  = attribute.Key("gated.policy_revision")
)

// Enabled reports whether the environment asks for traces: an OTLP
// endpoint is named, and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER
// turns them off. It fails on an exporter or protocol gated does not ship.
func Enabled(getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false, nil
	case "", "otlp":
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%s is not supported: gated exports traces with otlp only (or none)", exp)
	}
	e := endpoint(getenv)
	if e == "" {
		return false, nil
	}
	// The exporter would only log a bad URL and send elsewhere.
	if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false, errors.New("the OTLP traces endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT) is not an http or https URL")
	}
	proto := firstSet(getenv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	if proto != "" && proto != "http/protobuf" {
		return false, fmt.Errorf("OTLP protocol %q is not supported: gated exports traces over http/protobuf only", proto)
	}
	return true, nil
}

// Setup returns the tracer provider the environment asks for and the
// function that flushes and stops it. Without an OTLP endpoint it is a
// no-op provider, so tracing costs the decision path next to nothing.
func Setup(ctx context.Context, getenv func(string) string, version string) (trace.TracerProvider, func(context.Context) error, error) {
	on, err := Enabled(getenv)
	if err != nil || !on {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, err
	}
	// The endpoint that turned traces on is the one they go to; headers,
	// timeout, TLS and compression the exporter reads from OTEL_* itself.
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint(getenv)))
	if err != nil {
		return nil, nil, fmt.Errorf("the OTLP trace exporter could not be set up: %w", err)
	}
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (read by the SDK)
	// override the defaults.
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("gated"), semconv.ServiceVersion(version)),
		resource.WithFromEnv())
	if err != nil {
		return nil, nil, fmt.Errorf("the trace resource could not be built from OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	// The sampler (OTEL_TRACES_SAMPLER) and batching (OTEL_BSP_*) come
	// from the environment too; the SDK reads them.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// endpoint is where traces go: the traces endpoint as given, or the
// general one with the signal's path, as the OTLP exporter spec has it.
func endpoint(getenv func(string) string) string {
	if e := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); e != "" {
		return e
	}
	if e := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); e != "" {
		return strings.TrimSuffix(e, "/") + "/v1/traces"
	}
	return ""
}

func firstSet(getenv func(string) string, keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
	}
	return ""
}
