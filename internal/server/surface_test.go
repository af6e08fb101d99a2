package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/api"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/postgres"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/policy"
	pgdb "github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/server"
)

// TestWholeSurfaceConforms builds the handler with every part real — the
// example catalog and policy, a PostgreSQL audit store, metrics — and
// validates every endpoint's answers against the OpenAPI document.
func TestWholeSurfaceConforms(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, dbURL := pgtest.Fresh(t)
	if err := pgdb.Migrate(ctx, dbURL, "up", io.Discard); err != nil {
		t.Fatal(err)
	}
	db := pgtest.DB(t, dbURL)
	rec, err := audit.NewRecorder(ctx, postgres.New(db, postgres.Config{}), audit.Config{Durability: audit.Sync, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(ctx) })
	store := postgres.NewStore(db)
	cat, err := catalog.Load([]string{"../../examples/catalog"})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load([]string{"../../examples/policy"}, cat)
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New("test")
	f := newServer(t, func(d *server.Deps) {
		d.Engine = gate.New(gate.WithClock(func() time.Time { return fixedNow }),
			gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce),
			gate.WithPolicy(func() *policy.Set { return pol }, policy.NewLimiter()),
			gate.WithAudit(rec, audit.NewRedactor([]byte("0123456789abcdef0123456789abcdef")), "test"),
			gate.WithMetrics(m))
		d.Catalog = func() any { return cat.Document(nil, time.Time{}) }
		d.Policy = func() any { return pol.Summary(nil, time.Time{}) }
		d.Decisions, d.Redactor = store, audit.NewRedactor([]byte("0123456789abcdef0123456789abcdef"))
		d.Metrics = m
		d.OpenAPI = api.OpenAPI
	})
	reader := map[string]string{"Authorization": "Bearer " + readerSecret}
	decisionsReader := map[string]string{"Authorization": "Bearer " + otherSecret}

	// A catalogued tool: the answer carries action, policy and audit blocks.
	res := f.post(`{"tool_name":"send_email","tool_category":"write","authorization_state":"validated",
		"evidence_refs":[{"source_id":"auth.1","kind":"auth_event","trust_tier":"verified","redaction_status":"redacted","freshness":{"status":"fresh"},"provenance":"connector"}],
		"risk_domain":"customer_support","proposed_arguments":{"to":"c@example.com","subject":"s","body":"b","ticket_id":"T-1"},"recommended_route":"accept"}`)
	for _, k := range []string{"action", "policy", "audit"} {
		if res.body[k] == nil {
			t.Errorf("decision lacks %s: %.400s", k, res.raw)
		}
	}
	id := res.str("decision_id")

	f.do(request{method: http.MethodGet, target: "/v1/catalog", header: reader})
	f.do(request{method: http.MethodGet, target: "/v1/catalog"}) // 401
	if p := f.do(request{method: http.MethodGet, target: "/v1/policy", header: reader}); p.status != http.StatusOK || p.str("revision") != pol.Revision() {
		t.Fatalf("GET policy: %d %.300s", p.status, p.raw)
	}
	got := f.do(request{method: http.MethodGet, target: "/v1/decisions/" + id, header: decisionsReader})
	if got.status != http.StatusOK || got.str("decision_id") != id {
		t.Fatalf("GET decision: %d %.300s", got.status, got.raw)
	}
	f.do(request{method: http.MethodGet, target: "/v1/decisions/no-such-id", header: decisionsReader})
	list := f.do(request{method: http.MethodGet, target: "/v1/decisions?route=" + res.str("route") + "&limit=5", header: decisionsReader})
	if recs, _ := list.body["records"].([]any); list.status != http.StatusOK || len(recs) != 1 {
		t.Fatalf("list: %d %.300s", list.status, list.raw)
	}
	for _, q := range []string{"limit=0", "since=yesterday", "route=maybe", "cursor=garbage"} {
		if r := f.do(request{method: http.MethodGet, target: "/v1/decisions?" + q, header: decisionsReader}); r.status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", q, r.status)
		}
	}
	f.do(request{method: http.MethodGet, target: "/v1/decisions", header: reader}) // 403
	f.do(request{method: http.MethodGet, target: "/metrics"})                      // 401
	f.do(request{method: http.MethodGet, target: "/metrics", header: reader})      // 403
	metricsRes := f.do(request{method: http.MethodGet, target: "/metrics", header: map[string]string{"Authorization": "Bearer " + scraperSecret}})
	if !strings.Contains(string(metricsRes.raw), "gated_decisions_total") {
		t.Errorf("metrics lack gated_decisions_total")
	}

	// The AANA reference clients' routes.
	runtime := map[string]string{"Authorization": "Bearer " + runtimeSecret}
	event := `{"tool_name":"search_docs","tool_category":"public_read","authorization_state":"none","evidence_refs":[],"risk_domain":"research","proposed_arguments":{},"recommended_route":"accept"}`
	if r := f.do(request{method: http.MethodPost, target: "/tool-precheck?shadow_mode=true", body: strings.NewReader(event), header: runtime}); r.str("route") == "" {
		t.Fatalf("tool-precheck: %d %.300s", r.status, r.raw)
	}
	for body, valid := range map[string]bool{event: true, `{"tool_name":1}`: false} {
		if r := f.do(request{method: http.MethodPost, target: "/validate-tool-precheck", body: strings.NewReader(body), header: runtime}); r.status != http.StatusOK || r.body["valid"] != valid {
			t.Fatalf("validate %s: %d %.300s", body, r.status, r.raw)
		}
	}
	f.do(request{method: http.MethodPost, target: "/validate-tool-precheck", body: strings.NewReader("[]"), header: runtime}) // 400
	f.do(request{method: http.MethodPost, target: "/validate-tool-precheck", body: strings.NewReader(event)})                 // 401
	hookCall := `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"send_email","tool_input":{"to":"c@example.com"},"tool_use_id":"toolu_1"}`
	for _, path := range []string{"/v1/hooks/claude-code", "/v1/hooks/codex", "/v1/hooks/copilot"} {
		for _, body := range []string{hookCall, "{", "[]", `{"tool_name":""}`} {
			if r := f.do(request{method: http.MethodPost, target: path, body: strings.NewReader(body), header: runtime}); r.status != http.StatusOK {
				t.Fatalf("%s with %s: %d %.300s", path, body, r.status, r.raw)
			}
		}
		f.do(request{method: http.MethodPost, target: path, body: strings.NewReader(hookCall)}) // unauthenticated: 200 deny
	}
	mcpHdr := map[string]string{"Authorization": "Bearer " + runtimeSecret, "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-06-18"}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"aana_pre_tool_check","arguments":` + event + `}}`
	if r := f.do(request{method: http.MethodPost, target: "/mcp", body: strings.NewReader(call), header: mcpHdr}); !strings.Contains(string(r.raw), `"structuredContent"`) {
		t.Fatalf("mcp tools/call: %d %.300s", r.status, r.raw)
	}
	f.do(request{method: http.MethodPost, target: "/mcp", body: strings.NewReader(call)}) // 401
	for _, probe := range []string{"/health", "/ready"} {
		if r := f.do(request{method: http.MethodGet, target: probe}); r.status != http.StatusOK {
			t.Fatalf("%s: %d", probe, r.status)
		}
	}

	// The outcome of a decision that did not let the tool run is refused.
	if r := f.do(request{method: http.MethodPost, target: "/v1/decisions/" + id + "/outcome", body: strings.NewReader(`{"status":"succeeded"}`),
		header: map[string]string{"Authorization": "Bearer " + runtimeSecret}}); r.status != http.StatusConflict || r.str("code") != "decision_not_executed" {
		t.Errorf("outcome of a %s: %d %.200s, want 409", res.str("route"), r.status, r.raw)
	}

	// Without a catalog or a database those endpoints say so, with a route.
	bare := newServer(t, nil)
	for _, target := range []string{"/v1/catalog", "/v1/policy", "/v1/decisions", "/v1/decisions/x"} {
		hdr := reader
		if strings.HasPrefix(target, "/v1/decisions") {
			hdr = decisionsReader
		}
		if r := bare.do(request{method: http.MethodGet, target: target, header: hdr}); r.status != http.StatusNotFound || r.str("route") != "refuse" {
			t.Errorf("%s without its part: %d %.200s", target, r.status, r.raw)
		}
	}
}
