package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/gatedhq/gated/internal/metrics"
)

func TestHTTPLabelsUseRoutePattern(t *testing.T) {
	t.Parallel()
	m := metrics.New("x")
	r := chi.NewRouter()
	r.Use(m.HTTP(routePattern))
	r.Get("/v1/decisions/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	r.Post("/pre-tool-check", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "bad", http.StatusBadRequest) })
	srv := httptest.NewServer(r)
	defer srv.Close()

	for _, req := range []struct{ method, path string }{
		{http.MethodGet, "/v1/decisions/tok-secret-1"},
		{http.MethodGet, "/v1/decisions/tok-secret-2"},
		{http.MethodPost, "/pre-tool-check"},
		{http.MethodGet, "/no/such/path-secret"},
	} {
		hr, err := http.NewRequest(req.method, srv.URL+req.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	scraped := httptest.NewRecorder()
	m.Handler().ServeHTTP(scraped, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	out := scraped.Body.String()
	for _, want := range []string{
		`gated_http_requests_total{code="204",method="get",route="/v1/decisions/{id}"} 2`,
		`gated_http_requests_total{code="400",method="post",route="/pre-tool-check"} 1`,
		`gated_http_requests_total{code="404",method="get",route="unmatched"} 1`,
		`gated_http_request_duration_seconds_count{code="204",method="get",route="/v1/decisions/{id}"} 2`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if strings.Contains(out, "secret") {
		t.Error("a raw request path reached a label")
	}
}
