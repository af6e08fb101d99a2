// Package tracing sets up gated's OpenTelemetry traces: an OTLP exporter
// (HTTP or gRPC) when the standard OTEL_* variables ask for one, a no-op tracer
// provider otherwise, and the names of gated's spans and attributes.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
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
// turns them off. It fails on an exporter, protocol or endpoint gated
// cannot export with.
func Enabled(getenv func(string) string) (bool, error) {
	c, err := configure(getenv)
	return c != nil, err
}

// exporterConfig is where and how spans are exported.
type exporterConfig struct {
	endpoint string
	grpc     bool
}

// configure reads the exporter's configuration; nil when traces are off.
func configure(getenv func(string) string) (*exporterConfig, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return nil, nil
	case "", "otlp":
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s is not supported: gated exports traces with otlp only (or none)", exp)
	}
	c := &exporterConfig{}
	switch proto := firstSet(getenv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"); proto {
	case "", "http/protobuf":
	case "grpc":
		c.grpc = true
	default:
		return nil, fmt.Errorf("OTLP protocol %q is not supported: gated exports traces over http/protobuf or grpc", proto)
	}
	// The traces endpoint as given, or the general one: over HTTP with the
	// signal's path appended, as the OTLP exporter spec has it.
	c.endpoint = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	if c.endpoint == "" {
		c.endpoint = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
		if c.endpoint != "" && !c.grpc {
			c.endpoint = strings.TrimSuffix(c.endpoint, "/") + "/v1/traces"
		}
	}
	if c.endpoint == "" {
		return nil, nil
	}
	// The exporters would only log a bad URL and send elsewhere.
	if u, err := url.Parse(c.endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("the OTLP traces endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT) is not an http or https URL")
	}
	return c, nil
}

// Setup returns the tracer provider the environment asks for and the
// function that flushes and stops it. Without an OTLP endpoint it is a
// no-op provider, so tracing costs the decision path next to nothing.
func Setup(ctx context.Context, getenv func(string) string, version string) (trace.TracerProvider, func(context.Context) error, error) {
	c, err := configure(getenv)
	if err != nil || c == nil {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, err
	}
	// The endpoint that turned traces on is the one they go to; headers,
	// timeout, TLS and compression the exporter reads from OTEL_* itself.
	var exp sdktrace.SpanExporter
	if c.grpc {
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(c.endpoint))
	} else {
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(c.endpoint))
	}
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

func firstSet(getenv func(string) string, keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
	}
	return ""
}
