package tracing

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestOffUnlessConfigured(t *testing.T) {
	for name, getenv := range map[string]func(string) string{
		"no OTEL_* at all":   env(),
		"sdk disabled":       env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318", "OTEL_SDK_DISABLED", "true"),
		"exporter none":      env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318/v1/traces", "OTEL_TRACES_EXPORTER", "none"),
		"only a sampler set": env("OTEL_TRACES_SAMPLER", "always_on"),
	} {
		t.Run(name, func(t *testing.T) {
			tp, shutdown, err := Setup(context.Background(), getenv, "test")
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := tp.(noop.TracerProvider); !ok {
				t.Fatalf("provider = %T, want the no-op provider", tp)
			}
			if err := shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestUnsupportedExporterOrProtocolIsAnError(t *testing.T) {
	for name, getenv := range map[string]func(string) string{
		"traces json":  env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
		"zipkin":       env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER", "zipkin"),
		"bad endpoint": env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://%zz"),
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := Setup(context.Background(), getenv, "test"); err == nil {
				t.Fatal("Setup accepted a configuration gated cannot export with")
			}
		})
	}
}

// An OTLP endpoint turns traces on, and shutting down flushes what was
// recorded to it (a stand-in collector that takes OTLP/HTTP).
func TestConfiguredExportsAndShutdownFlushes(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	var body []byte
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths, body = append(paths, r.URL.Path), append(body, b...)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()

	tp, shutdown, err := Setup(context.Background(), env("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL+"/"), "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.(noop.TracerProvider); ok {
		t.Fatal("an OTLP endpoint was set, yet the provider is the no-op one")
	}
	_, span := tp.Tracer(Scope).Start(context.Background(), SpanDecision)
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) == 0 || paths[0] != "/v1/traces" {
		t.Fatalf("collector saw %v, want an export to /v1/traces", paths)
	}
	if !strings.Contains(string(body), SpanDecision) {
		t.Fatal("the exported spans do not include the one recorded before shutdown")
	}
}

// traceService is a stand-in collector over OTLP/gRPC.
type traceService struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (s *traceService) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				s.names = append(s.names, sp.GetName())
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports over gRPC, to the general
// endpoint as given (no signal path).
func TestConfiguredGRPCExports(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	svc := &traceService{}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, svc)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()

	tp, shutdown, err := Setup(context.Background(), env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String(),
		"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), "test")
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer(Scope).Start(context.Background(), SpanDecision)
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if len(svc.names) != 1 || svc.names[0] != SpanDecision {
		t.Fatalf("the gRPC collector received %v, want [%s]", svc.names, SpanDecision)
	}
}
