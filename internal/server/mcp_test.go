package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/server"
)

// mcpServer is the real handler, its engine counting decisions, served
// over a real HTTP listener (the MCP SDK's client speaks HTTP).
func mcpServer(t *testing.T) (url string, m *metrics.Metrics) {
	t.Helper()
	m = metrics.New("test")
	f := newServer(t, func(d *server.Deps) {
		d.Engine = gate.New(gate.WithClock(func() time.Time { return fixedNow }), gate.WithMetrics(m))
		d.Metrics = m
	})
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", m
}

// decisionsCounted is how many decisions m counted.
func decisionsCounted(t *testing.T, m *metrics.Metrics) int {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range fams {
		if f.GetName() == "gated_decisions_total" {
			for _, s := range f.GetMetric() {
				n += int(s.GetCounter().GetValue())
			}
		}
	}
	return n
}

// runtimeToken adds the runtime token to every request the MCP client sends.
type runtimeToken struct{}

func (runtimeToken) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+runtimeSecret)
	return http.DefaultTransport.RoundTrip(r)
}

func acceptEvent(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("../../examples/events/search_docs_accept.json")
	if err != nil {
		t.Fatal(err)
	}
	var event map[string]any
	if err := json.Unmarshal(raw, &event); err != nil {
		t.Fatal(err)
	}
	return event
}

// TestMCPRevisions: the official Go SDK's client lists and calls the tool
// at /mcp on protocol 2026-07-28 (stateless, no handshake) and on the
// earlier revisions it still speaks.
func TestMCPRevisions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, m := mcpServer(t)
	for i, proto := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
		s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: runtimeToken{}}},
			&sdk.ClientSessionOptions{ProtocolVersion: proto})
		if err != nil {
			t.Fatalf("%s: %v", proto, err)
		}
		if got := s.InitializeResult().ProtocolVersion; got != proto {
			t.Fatalf("asked for %s, negotiated %s", proto, got)
		}
		tools, err := s.ListTools(ctx, nil)
		if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "aana_pre_tool_check" {
			t.Fatalf("%s: tools %+v, %v", proto, tools, err)
		}
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "aana_pre_tool_check", Arguments: acceptEvent(t)})
		if err != nil || res.IsError || res.NeedsInput() {
			t.Fatalf("%s: %+v, %v", proto, res, err)
		}
		if got := res.StructuredContent.(map[string]any)["route"]; got != "accept" {
			t.Fatalf("%s: route %v", proto, got)
		}
		if n := decisionsCounted(t, m); n != i+1 {
			t.Fatalf("%s: %d decisions counted", proto, n)
		}
		_ = s.Close()
	}
}

// mcpCall is a 2026-07-28 tools/call of the decision tool, as the body of
// a hand-written request.
func mcpCall(t *testing.T, version string) []byte {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{
		"name": "aana_pre_tool_check", "arguments": acceptEvent(t),
		"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": map[string]any{}},
	}})
	return body
}

// TestMCPRoutingHeaders: on 2026-07-28 the Mcp-Method and Mcp-Name
// headers (which gateways route on) and Mcp-Protocol-Version must be
// given, once, and say what the body says; otherwise the call is refused
// with -32020 before anything is decided. The requests are written by
// hand on purpose: a client would not send them.
func TestMCPRoutingHeaders(t *testing.T) {
	t.Parallel()
	url, m := mcpServer(t)
	good := http.Header{"Authorization": {"Bearer " + runtimeSecret}, "Content-Type": {"application/json"},
		"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2026-07-28"},
		"Mcp-Method": {"tools/call"}, "Mcp-Name": {"aana_pre_tool_check"}}
	post := func(hdr http.Header, body []byte) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header = hdr
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var msg map[string]any
		if err := json.Unmarshal(raw, &msg); err != nil {
			t.Fatalf("%d, not JSON: %q", res.StatusCode, raw)
		}
		return res.StatusCode, msg
	}
	with := func(edit func(h http.Header)) http.Header {
		h := good.Clone()
		edit(h)
		return h
	}
	decided := 0
	for _, tc := range []struct {
		name    string
		hdr     http.Header
		version string // of the body's _meta
		decides bool
	}{
		{"headers as the body", good, "2026-07-28", true},
		{"header names in lower case", with(func(h http.Header) {
			h.Del("Mcp-Name")
			h["mcp-name"] = []string{"aana_pre_tool_check"}
		}), "2026-07-28", true},
		// Optional whitespace around a value is not part of it (RFC 9110).
		{"whitespace around the name", with(func(h http.Header) { h.Set("Mcp-Name", " aana_pre_tool_check\t") }), "2026-07-28", true},
		{"another tool's name", with(func(h http.Header) { h.Set("Mcp-Name", "send_email") }), "2026-07-28", false},
		{"another method", with(func(h http.Header) { h.Set("Mcp-Method", "tools/list") }), "2026-07-28", false},
		{"no Mcp-Name", with(func(h http.Header) { h.Del("Mcp-Name") }), "2026-07-28", false},
		{"no Mcp-Method", with(func(h http.Header) { h.Del("Mcp-Method") }), "2026-07-28", false},
		{"the name in another case", with(func(h http.Header) { h.Set("Mcp-Name", "AANA_PRE_TOOL_CHECK") }), "2026-07-28", false},
		{"whitespace inside the name", with(func(h http.Header) { h.Set("Mcp-Name", "aana_pre_tool _check") }), "2026-07-28", false},
		{"the name twice, the body's first", with(func(h http.Header) { h.Add("Mcp-Name", "send_email") }), "2026-07-28", false},
		{"the name twice, the body's last", with(func(h http.Header) { h["Mcp-Name"] = []string{"send_email", "aana_pre_tool_check"} }), "2026-07-28", false},
		{"another method the second time", with(func(h http.Header) { h.Add("Mcp-Method", "tools/list") }), "2026-07-28", false},
		{"the method as a list", with(func(h http.Header) { h.Set("Mcp-Method", "tools/call, tools/list") }), "2026-07-28", false},
		{"another version the second time", with(func(h http.Header) { h.Add("Mcp-Protocol-Version", "2025-11-25") }), "2026-07-28", false},
		// Copies that agree say one thing, whichever a gateway reads.
		{"the method twice", with(func(h http.Header) { h.Add("Mcp-Method", "tools/call") }), "2026-07-28", true},
		{"the version as a list of one", with(func(h http.Header) { h.Set("Mcp-Protocol-Version", "2026-07-28, 2026-07-28") }), "2026-07-28", true},
		{"the name twice alike", with(func(h http.Header) { h.Add("Mcp-Name", "aana_pre_tool_check") }), "2026-07-28", true},
		// An encoded name is compared decoded, as the revision says.
		{"the name Base64-encoded", with(func(h http.Header) { h.Set("Mcp-Name", "=?base64?YWFuYV9wcmVfdG9vbF9jaGVjaw==?=") }), "2026-07-28", true},
		{"another name Base64-encoded", with(func(h http.Header) { h.Set("Mcp-Name", "=?base64?c2VuZF9lbWFpbA==?=") }), "2026-07-28", false},
		{"not Base64 in the marks", with(func(h http.Header) { h.Set("Mcp-Name", "=?base64?aana_pre_tool_check?=") }), "2026-07-28", false},
		{"an older version header", with(func(h http.Header) { h.Set("Mcp-Protocol-Version", "2025-11-25") }), "2026-07-28", false},
		{"no version header", with(func(h http.Header) { h.Del("Mcp-Protocol-Version") }), "2026-07-28", false},
		{"the body on an older version", good, "2025-11-25", false},
	} {
		before := decisionsCounted(t, m)
		status, msg := post(tc.hdr, mcpCall(t, tc.version))
		if tc.decides {
			decided++
			res, _ := msg["result"].(map[string]any)
			if status != http.StatusOK || res == nil || decisionsCounted(t, m) != before+1 {
				t.Fatalf("%s: %d %v", tc.name, status, msg)
			}
			continue
		}
		e, _ := msg["error"].(map[string]any)
		// Every refusal answers the request by its id, gated's own for
		// repeated or undecodable headers as the go-sdk's.
		if status != http.StatusBadRequest || e == nil || e["code"] != float64(-32020) || msg["result"] != nil || msg["id"] != float64(7) {
			t.Fatalf("%s: %d %v", tc.name, status, msg)
		}
		if n := decisionsCounted(t, m); n != before {
			t.Fatalf("%s: refused, yet %d decisions made", tc.name, n-before)
		}
	}
	if n := decisionsCounted(t, m); n != decided {
		t.Fatalf("%d decisions for %d accepted requests", n, decided)
	}
}

// A JSON-RPC batch on /mcp (the SDK takes one from a client on 2025-03-26)
// counts as its number of messages against the caller's rate limit, as an
// AuthZEN batch does: a batch of fifty tools/call under a limit of three a
// minute decided fifty calls. A batch over the whole limit is a 413 and
// decides nothing; one within it is answered whole.
func TestMCPBatchCountsAgainstTheRateLimit(t *testing.T) {
	t.Parallel()
	m := metrics.New("test")
	f := authzenServer(t, []gate.Option{gate.WithMetrics(m)}, func(d *server.Deps) { d.RateLimit = 3 })
	batch := func(n int) string {
		msgs := []any{map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
			"protocolVersion": "2025-03-26", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}}}
		for i := 1; i < n; i++ {
			msgs = append(msgs, map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call",
				"params": map[string]any{"name": "aana_pre_tool_check", "arguments": acceptEvent(t)}})
		}
		b, _ := json.Marshal(msgs)
		return string(b)
	}
	post := func(body string) *response {
		hdr := bearer(pepSecret)
		hdr["Content-Type"], hdr["Accept"], hdr["Mcp-Protocol-Version"] = "application/json", "application/json, text/event-stream", "2025-03-26"
		return f.do(request{method: http.MethodPost, target: "/mcp", body: strings.NewReader(body), header: hdr})
	}
	if r := post(batch(50)); r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.str("error"), "a batch may hold at most 3 messages") || decisionsCounted(t, m) != 0 {
		t.Fatalf("a batch of 50: %d %s, %d decisions", r.status, r.raw, decisionsCounted(t, m))
	}
	if r := post(batch(3)); r.status != http.StatusTooManyRequests || decisionsCounted(t, m) != 0 {
		t.Fatalf("a full batch after the refused one: %d %s, %d decisions", r.status, r.raw, decisionsCounted(t, m))
	}
	fresh := authzenServer(t, nil, func(d *server.Deps) { d.RateLimit = 3 })
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(batch(3)))
	req.Header = http.Header{"Authorization": {"Bearer " + pepSecret}, "Content-Type": {"application/json"},
		"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2025-03-26"}}
	rec := httptest.NewRecorder()
	fresh.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || bytes.Count(rec.Body.Bytes(), []byte(`"structuredContent"`)) != 2 {
		t.Fatalf("a batch of the whole limit: %d %s", rec.Code, rec.Body.Bytes())
	}
}
