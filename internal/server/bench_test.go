package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/gate"
)

// BenchmarkPreToolCheck measures one request through the whole handler:
// routing, body limits, decoding, the decision and encoding the envelope.
func BenchmarkPreToolCheck(b *testing.B) {
	raw, err := os.ReadFile("../../examples/events/send_refund_accept.json")
	if err != nil {
		b.Fatal(err)
	}
	h := New(Deps{Engine: gate.New()})
	body := string(raw)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/pre-tool-check", strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}
