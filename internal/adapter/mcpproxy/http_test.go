package mcpproxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatedhq/gated/internal/adapter/mcpproxy"
)

// TestProxyHTTPRevisions: over the proxy's HTTP handler, a go-sdk client
// on 2026-07-28 (stateless) and one on 2025-11-25 (a stateful session)
// both list and call; an ask reaches the person both ways.
func TestProxyHTTPRevisions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var asked []string
	f := newFixture(t, setup{trust: true})
	srv := httptest.NewServer(mcpproxy.Handler(f.server, f.upstream, 1<<20))
	t.Cleanup(srv.Close)
	for _, proto := range []string{"2026-07-28", "2025-11-25"} {
		c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
			ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				asked = append(asked, proto)
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
			},
		})
		s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL}, &sdk.ClientSessionOptions{ProtocolVersion: proto})
		if err != nil {
			t.Fatalf("%s: %v", proto, err)
		}
		if got := s.InitializeResult().ProtocolVersion; got != proto {
			t.Fatalf("asked for %s, negotiated %s", proto, got)
		}
		if names := toolNames(t, s); !strings.Contains(strings.Join(names, ","), "echo") {
			t.Fatalf("%s: tools %v", proto, names)
		}
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
		if err != nil || res.IsError || text(t, res) != "echo: hi" {
			t.Fatalf("%s: %+v, %v", proto, res, err)
		}
		res, err = s.CallTool(ctx, &sdk.CallToolParams{Name: "other", Arguments: map[string]any{}})
		if err != nil || res.IsError || len(asked) == 0 || asked[len(asked)-1] != proto {
			t.Fatalf("%s: an approved ask: %+v, %v, asked %v", proto, res, err, asked)
		}
		_ = s.Close()
	}
	if got := strings.Join(f.calls, ","); got != "echo,other,echo,other" || len(asked) != 2 {
		t.Fatalf("upstream calls %q, asked %v", got, asked)
	}
}

// TestProxyRoutingHeaders: a hand-written 2026-07-28 tools/call whose
// Mcp-Method or Mcp-Name is not the body's, or is given twice, is refused
// with -32020: nothing is decided, and the upstream is not called.
func TestProxyRoutingHeaders(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{})
	srv := httptest.NewServer(mcpproxy.Handler(f.server, f.upstream, 1<<20))
	t.Cleanup(srv.Close)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": "echo", "arguments": map[string]any{"message": "hi"},
		"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}},
	}})
	post := func(edit func(h http.Header)) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
			"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}}
		edit(req.Header)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(raw)
	}
	for _, tc := range []struct {
		name string
		edit func(h http.Header)
	}{
		{"another tool's name", func(h http.Header) { h.Set("Mcp-Name", "purge") }},
		{"another method", func(h http.Header) { h.Set("Mcp-Method", "tools/list") }},
		{"no Mcp-Name", func(h http.Header) { h.Del("Mcp-Name") }},
		{"the name twice", func(h http.Header) { h["Mcp-Name"] = []string{"echo", "purge"} }},
		{"the name twice, the body's last", func(h http.Header) { h["Mcp-Name"] = []string{"purge", "echo"} }},
		{"another name Base64-encoded", func(h http.Header) { h.Set("Mcp-Name", "=?base64?cHVyZ2U=?=") }},
		{"not Base64 in the marks", func(h http.Header) { h.Set("Mcp-Name", "=?base64?echo?=") }},
	} {
		status, raw := post(tc.edit)
		if status != http.StatusBadRequest || !strings.Contains(raw, "-32020") {
			t.Fatalf("%s: %d %s", tc.name, status, raw)
		}
		if n := f.decided.Load(); n != 0 || len(f.calls) != 0 {
			t.Fatalf("%s: refused, yet %d decisions and upstream calls %v", tc.name, n, f.calls)
		}
	}
	// A body that claims 2026-07-28 without the header: the header is
	// missing, said so for this request, not that some other version is
	// unsupported.
	status, raw := post(func(h http.Header) { h.Del("Mcp-Protocol-Version") })
	var refusal struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int            `json:"code"`
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &refusal); err != nil || status != http.StatusBadRequest || refusal.Error.Code != -32020 ||
		string(refusal.ID) != "1" || !strings.Contains(refusal.Error.Message, "must carry the Mcp-Protocol-Version header") || refusal.Error.Data != nil {
		t.Fatalf("no Mcp-Protocol-Version: %d %s", status, raw)
	}
	if n := f.decided.Load(); n != 0 || len(f.calls) != 0 {
		t.Fatalf("no Mcp-Protocol-Version: refused, yet %d decisions and upstream calls %v", n, f.calls)
	}
	if status, raw := post(func(http.Header) {}); status != http.StatusOK || !strings.Contains(raw, "echo: hi") || f.decided.Load() != 1 {
		t.Fatalf("headers as the body: %d %s", status, raw)
	}
	if status, raw := post(func(h http.Header) { h.Set("Mcp-Name", "=?base64?ZWNobw==?=") }); status != http.StatusOK || f.decided.Load() != 2 {
		t.Fatalf("the name Base64-encoded: %d %s", status, raw)
	}
}

// TestProxyParamHeaders: on 2026-07-28 the Mcp-Param-* headers of an
// upstream tool's x-mcp-header arguments must be its arguments: a call
// whose headers say otherwise is refused with -32020, nothing decided and
// the upstream not called; the go-sdk client, which sends them itself,
// calls through.
func TestProxyParamHeaders(t *testing.T) {
	t.Parallel()
	var calls []string
	up := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	up.AddTool(&sdk.Tool{Name: "echo", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"message": map[string]any{"type": "string"},
		"region":  map[string]any{"type": "string", "x-mcp-header": "Region"},
		"opts":    map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "x-mcp-header": "N"}}},
	}}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		calls = append(calls, "echo")
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echoed"}}}, nil
	})
	f := newFixture(t, setup{upstream: up})
	srv := httptest.NewServer(mcpproxy.Handler(f.server, f.upstream, 1<<20))
	t.Cleanup(srv.Close)

	s, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: srv.URL}, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	toolNames(t, s) // the client sends Mcp-Param headers for the tools it has listed
	args := map[string]any{"message": "hi", "region": "eu-west", "opts": map[string]any{"n": 3}}
	if res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: args}); err != nil || res.IsError {
		t.Fatalf("the go-sdk client: %+v, %v", res, err)
	}

	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": "echo", "arguments": args,
		"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}},
	}})
	post := func(edit func(h http.Header)) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
			"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"},
			"Mcp-Param-Region": {"eu-west"}, "Mcp-Param-N": {"3"}}
		edit(req.Header)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(raw)
	}
	decided, called := f.decided.Load(), len(calls)
	for _, tc := range []struct {
		name string
		edit func(h http.Header)
	}{
		{"another region", func(h http.Header) { h.Set("Mcp-Param-Region", "us-east") }},
		{"no region", func(h http.Header) { h.Del("Mcp-Param-Region") }},
		{"the region twice", func(h http.Header) { h.Add("Mcp-Param-Region", "us-east") }},
		{"another number", func(h http.Header) { h.Set("Mcp-Param-N", "4") }},
		{"not Base64 in the marks", func(h http.Header) { h.Set("Mcp-Param-Region", "=?base64?eu-west?=") }},
	} {
		status, raw := post(tc.edit)
		if status != http.StatusBadRequest || !strings.Contains(raw, "-32020") {
			t.Fatalf("%s: %d %s", tc.name, status, raw)
		}
		if f.decided.Load() != decided || len(calls) != called {
			t.Fatalf("%s: refused, yet decided or called", tc.name)
		}
	}
	for _, tc := range []struct {
		name string
		edit func(h http.Header)
	}{
		{"headers as the arguments", func(http.Header) {}},
		{"the number written otherwise", func(h http.Header) { h.Set("Mcp-Param-N", "3.0") }},
		{"the region Base64-encoded", func(h http.Header) { h.Set("Mcp-Param-Region", "=?base64?ZXUtd2VzdA==?=") }},
	} {
		// The answer names the proxy, not the upstream, as the server.
		if status, raw := post(tc.edit); status != http.StatusOK || !strings.Contains(raw, "echoed") || !strings.Contains(raw, `serverInfo":{"name":"gated-mcp-proxy"`) {
			t.Fatalf("%s: %d %s", tc.name, status, raw)
		}
	}
}
