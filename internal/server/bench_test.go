package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/server"
	"github.com/gatedhq/gated/internal/testcpu"
)

// Concurrent callers share the limiter and the engine; run with -race.
func TestConcurrentRequests(t *testing.T) {
	t.Parallel()
	f := newServer(t, func(d *server.Deps) { d.RateLimit = 100000; d.Tokens = nil })
	var wg sync.WaitGroup
	errs := make(chan string, 400)
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				req := httptest.NewRequest(http.MethodPost, "/pre-tool-check", strings.NewReader(validEvent))
				req.Header.Set("Content-Type", "application/json")
				req.RemoteAddr = fmt.Sprintf("192.0.2.%d:%d", g+1, i+1)
				rec := httptest.NewRecorder()
				f.h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"route":"accept"`) {
					errs <- rec.Body.String()
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent request: %.200s", e)
	}
}

// BenchmarkPreToolCheck measures one authenticated decision through the
// whole HTTP handler (decode, auth, limits, contract rules, encode).
func BenchmarkPreToolCheck(b *testing.B) {
	h := newServer(b, nil).h
	for _, bc := range []struct{ name, body string }{
		{"public_read_accept", validEvent},
		{"write_string_ref_ask", `{"tool_name":"send_email","tool_category":"write","authorization_state":"user_claimed",` +
			`"evidence_refs":["draft_id:123"],"risk_domain":"customer_support","proposed_arguments":{"to":"customer@example.com"},"recommended_route":"accept"}`},
		{"invalid_refuse", `{"tool_name":"x","tool_category":"bogus"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := testcpu.Time(b)
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/pre-tool-check", strings.NewReader(bc.body))
				req.Header.Set("Authorization", "Bearer "+runtimeSecret)
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
			}
			reportCPU(b, cpu0)
		})
	}
}

// BenchmarkPreToolCheckFull is BenchmarkPreToolCheck on the full path of
// the HTTP harness (bench/cmd/benchhttp): its event, examples/catalog, a
// policy of 1,000 grants of which one matches, open mode, and the audit
// record built and screened (the recorder keeps nothing: the sink's cost is
// measured by the audit benchmarks).
func BenchmarkPreToolCheckFull(b *testing.B) {
	cat, err := catalog.Load([]string{"../../examples/catalog"})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	var p strings.Builder
	p.WriteString("---\nschema: policy/v1\nid: \"@bench/grants\"\nversion: 1.0.0\n\ndefault: deny\n\ngrants:\n")
	p.WriteString("  - {principal: \"bot://support-agent\", actions: [{action: \"tickets:update\"}]}\n")
	for i := 1; i < 1000; i++ {
		fmt.Fprintf(&p, "  - {principal: \"operator://u%d\", actions: [{action: \"kind%d:verb%d\"}]}\n", i, i%50, i)
	}
	p.WriteString("---\n\n## Description\n\nThe HTTP harness's generated policy.\n")
	if err := os.WriteFile(filepath.Join(dir, "POLICY.md"), []byte(p.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	pol, err := policy.Load([]string{dir}, cat)
	if err != nil {
		b.Fatal(err)
	}
	event, err := os.ReadFile("../../bench/cmd/benchhttp/event.json")
	if err != nil {
		b.Fatal(err)
	}
	h := newServer(b, func(d *server.Deps) {
		d.Engine = gate.New(gate.WithClock(func() time.Time { return fixedNow }),
			gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce),
			gate.WithPolicy(func() *policy.Set { return pol }, policy.NewLimiter()),
			gate.WithAudit(fixedRecorder{res: audit.Result{Sink: audit.SinkPostgres, Status: audit.StatusQueued}},
				audit.NewRedactor([]byte("0123456789abcdef0123456789abcdef")), "bench"))
		d.Tokens = nil
	}).h
	b.ReportAllocs()
	cpu0 := testcpu.Time(b)
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/pre-tool-check", strings.NewReader(string(event)))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"route":"accept"`) {
			b.Fatalf("%d %.300s", rec.Code, rec.Body.String())
		}
	}
	reportCPU(b, cpu0)
}

// reportCPU reports the process's CPU time per operation since cpu0, the
// garbage collector's included: on a shared machine it moves far less than
// the time per operation, which counts waiting for a core.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((testcpu.Time(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
