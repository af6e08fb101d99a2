package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/server"
)

// GET /v1/catalog shows the coding-agent starter set's rules, @secrets and
// paths_from included, as the OpenAPI document describes them.
func TestCatalogShowsPathRulesAsDocumented(t *testing.T) {
	t.Parallel()
	cat, err := catalog.Load([]string{"../../examples/claude-code/catalog"})
	if err != nil {
		t.Fatal(err)
	}
	f := newServer(t, func(d *server.Deps) { d.Catalog = func() any { return cat.Document(nil, time.Time{}) } })
	res := f.do(request{method: http.MethodGet, target: "/v1/catalog", header: map[string]string{"Authorization": "Bearer " + readerSecret}})
	if res.status != http.StatusOK || !strings.Contains(string(res.raw), `"paths_from":"apply_patch"`) || !strings.Contains(string(res.raw), `"@secrets"`) {
		t.Fatalf("GET /v1/catalog: %d %.600s", res.status, res.raw)
	}
}
