package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gatedhq/gated/internal/server"
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
		})
	}
}
