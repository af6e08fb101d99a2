package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/file"
	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/redact/redacttest"
	"github.com/gatedhq/gated/internal/server"
	"github.com/gatedhq/gated/internal/tracing"
)

// The caller's trace, as an agent runtime sends it in traceparent.
const (
	callerTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpanID  = "00f067aa0ba902b7"
	traceparent   = "00-" + callerTraceID + "-" + callerSpanID + "-01"
)

// tracedServer is the example catalog, policy and tokens with a file audit
// sink, traced into a span recorder.
func tracedServer(t *testing.T) (*fixture, *tracetest.SpanRecorder, *catalog.Catalog, *policy.Set) {
	t.Helper()
	cat, err := catalog.Load([]string{"../../examples/catalog"})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load([]string{"../../examples/policy"}, cat)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := auth.Parse([]byte(readFile(t, "../../examples/tokens.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	sink, err := file.Open(filepath.Join(t.TempDir(), "audit.jsonl"), true)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := audit.NewRecorder(context.Background(), sink, audit.Config{Durability: audit.Sync, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	f := newServer(t, func(d *server.Deps) {
		d.Engine = gate.New(gate.WithClock(func() time.Time { return fixedNow }),
			gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce),
			gate.WithPolicy(func() *policy.Set { return pol }, policy.NewLimiter()),
			gate.WithAudit(rec, audit.NewRedactor([]byte("0123456789abcdef0123456789abcdef")), "test"),
			gate.WithTracing(tp))
		d.Tokens, d.Tracing = tokens, tp
	})
	return f, sr, cat, pol
}

func spanNamed(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range spans {
		if s.Name() == name {
			return s
		}
	}
	t.Fatalf("no span %q among %v", name, spanNames(spans))
	return nil
}

func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	var names []string
	for _, s := range spans {
		names = append(names, s.Name())
	}
	return names
}

func attr(s sdktrace.ReadOnlySpan, key string) any {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.AsInterface()
		}
	}
	return nil
}

// A decision is one server span in the caller's trace, with the decode
// and decision spans below it and a span per stage below the decision.
func TestTraceOfADecision(t *testing.T) {
	f, sr, cat, pol := tracedServer(t)
	res := f.do(request{method: http.MethodPost, target: "/v1/pre-tool-check",
		body:   strings.NewReader(readFile(t, "../../examples/events/tour/send_email_ask.json")),
		header: map[string]string{"Authorization": "Bearer demo-support-agent", "traceparent": traceparent}})
	if res.status != http.StatusOK || res.str("route") != "ask" {
		t.Fatalf("answer %d %s", res.status, res.raw)
	}
	spans := sr.Ended()

	srv := spanNamed(t, spans, "POST /v1/pre-tool-check")
	if srv.SpanKind() != trace.SpanKindServer {
		t.Errorf("server span kind %v", srv.SpanKind())
	}
	if got := srv.SpanContext().TraceID().String(); got != callerTraceID {
		t.Errorf("trace id %s, want the caller's %s", got, callerTraceID)
	}
	if p := srv.Parent(); p.SpanID().String() != callerSpanID || !p.IsRemote() {
		t.Errorf("server span parent %v, want the caller's span %s", p.SpanID(), callerSpanID)
	}
	if attr(srv, "http.route") != "/v1/pre-tool-check" || attr(srv, "http.response.status_code") != int64(200) {
		t.Errorf("server span attributes %v", srv.Attributes())
	}

	decision := spanNamed(t, spans, tracing.SpanDecision)
	for _, name := range []string{tracing.SpanDecode, tracing.SpanDecision} {
		if s := spanNamed(t, spans, name); s.Parent().SpanID() != srv.SpanContext().SpanID() {
			t.Errorf("%s is not a child of the server span", name)
		}
	}
	for _, name := range []string{tracing.SpanContractValidate, tracing.SpanCatalog, tracing.SpanContractEvaluate, tracing.SpanPolicy, tracing.SpanAudit} {
		s := spanNamed(t, spans, name)
		if s.Parent().SpanID() != decision.SpanContext().SpanID() {
			t.Errorf("%s is not a child of the decision span", name)
		}
		if s.SpanContext().TraceID().String() != callerTraceID {
			t.Errorf("%s is outside the caller's trace", name)
		}
	}

	want := map[string]any{
		"gated.decision_id": res.str("decision_id"), "gated.tool_name": "send_email", "gated.route": "ask",
		"gated.execute": false, "gated.shadow": false,
		"gated.catalog_revision": cat.Revision(), "gated.policy_revision": pol.Revision(),
	}
	for k, v := range want {
		if got := attr(decision, k); got != v {
			t.Errorf("decision span %s = %v, want %v", k, got, v)
		}
	}
	blockers, _ := attr(decision, "gated.blockers").([]string)
	var answered []string
	for _, b := range res.body["hard_blockers"].([]any) {
		answered = append(answered, b.(string))
	}
	if !slices.Equal(blockers, answered) {
		t.Errorf("decision span blockers %v, the answer's %v", blockers, answered)
	}
}

// No span carries arguments, evidence text, the query string or the
// token: every name, attribute, event and status is searched for them.
func TestTraceCarriesNoSecrets(t *testing.T) {
	f, sr, _, _ := tracedServer(t)
	const canary = "CANARY-7f3a9c"
	const token = "demo-support-agent"
	event := strings.NewReplacer(
		"customer@example.com", canary+"@example.com",
		"Your replacement has shipped.", canary+" body",
		"Ticket T-1001 is open", canary+" evidence",
	).Replace(readFile(t, "../../examples/events/tour/send_email_ask.json"))
	if strings.Count(event, canary) != 3 {
		t.Fatal("the canary did not reach the event")
	}
	for _, c := range [][2]string{
		{"/v1/pre-tool-check", event}, {"/v1/pre-tool-check", `{"tool_name":"` + canary + `",`},
		{"/v1/pre-tool-check", `{"proposed_arguments":{"x":"` + canary + `"}}`},
		{"/v1/action-check", `{"plan":{"command":"` + canary + `"}}`},
		{"/access/v1/evaluation", `{"subject":{"type":"user","id":"` + canary + `"},"action":{"name":"read"},` +
			`"resource":{"type":"record","id":"` + canary + `","properties":{"s":"` + canary + `"}},"context":{"ip":"` + canary + `"}}`},
	} {
		req := httptest.NewRequest(http.MethodPost, c[0]+"?shadow_mode=true&note="+canary, strings.NewReader(c[1]))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("traceparent", traceparent)
		req.Header.Set("X-Note", canary)
		f.h.ServeHTTP(httptest.NewRecorder(), req)
	}

	spans := sr.Ended()
	var refused int
	for _, s := range spans {
		if s.Name() == tracing.SpanDecode && s.Status().Code == codes.Error {
			refused++
		}
	}
	if refused != 2 {
		t.Fatalf("%d decode spans failed, want the broken event's and the plan's", refused)
	}
	for _, s := range spans {
		texts := []string{s.Name(), s.Status().Description}
		for _, kv := range s.Attributes() {
			texts = append(texts, string(kv.Key), kv.Value.String())
		}
		for _, ev := range s.Events() {
			texts = append(texts, ev.Name)
			for _, kv := range ev.Attributes {
				texts = append(texts, string(kv.Key), kv.Value.String())
			}
		}
		for _, text := range texts {
			if strings.Contains(text, canary) || strings.Contains(text, token) {
				t.Errorf("span %s carries a secret: %q", s.Name(), text)
			}
		}
	}
}

// A tool name is the caller's: one that carries a secret is decided, and
// its span names the tool with the secret masked (issue 25 §3).
func TestTraceMasksASecretInTheToolName(t *testing.T) {
	f, sr, _, _ := tracedServer(t)
	base := readFile(t, "../../examples/events/tour/send_email_ask.json")
	for _, c := range redacttest.Canaries {
		name, _ := json.Marshal(c.Text)
		event := strings.Replace(base, `"send_email"`, string(name), 1)
		req := httptest.NewRequest(http.MethodPost, "/v1/pre-tool-check?shadow_mode=true", strings.NewReader(event))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer demo-support-agent")
		f.h.ServeHTTP(httptest.NewRecorder(), req)
	}
	decisions := 0
	for _, s := range sr.Ended() {
		if s.Name() != tracing.SpanDecision {
			continue
		}
		decisions++
		name, _ := attr(s, string(tracing.ToolName)).(string)
		if !strings.Contains(name, "[secret:") {
			t.Errorf("decision span names the tool %q, want a mask in it", name)
		}
		for _, c := range redacttest.Canaries {
			if strings.Contains(name, c.Secret) {
				t.Errorf("decision span names the tool %q, which shows the %s canary", name, c.Kind)
			}
		}
	}
	if decisions != len(redacttest.Canaries) {
		t.Fatalf("%d decision spans, want %d", decisions, len(redacttest.Canaries))
	}
}
