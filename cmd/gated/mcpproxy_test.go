package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatedhq/gated/internal/adapter/mcpproxy"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/testgated"
)

// TestMCPProxyStdio starts `gated mcp-proxy` as an MCP client would, with
// `gated mcp` as the real upstream over stdio: the catalog lets its one
// tool read, so a call reaches it, and a call of a tool the upstream does
// not have but the catalog refuses never does.
func TestMCPProxyStdio(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog")
	if err := os.MkdirAll(filepath.Join(cat, "plugins", "drop"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(cat, "ACTIONS.yaml"), `actions:
  - name: mcp__gated__aana_pre_tool_check
    description: Ask gated whether a call may run.
    command: ["check"]
    inputSchema: { type: object }
    annotations: { readOnlyHint: true }
`)
	writeFile(t, filepath.Join(cat, "plugins", "drop", "action.json"), `{"name": "mcp__gated__drop_database", "riskTier": "R4"}`)
	bin := testgated.Binary(t)
	cmd := exec.Command(bin, "mcp-proxy", "--upstream-cmd", bin, "--catalog", cat,
		"--audit-file", filepath.Join(dir, "audit.jsonl"), "--spool-dir", filepath.Join(dir, "spool"),
		"--", "mcp", "--audit-file", filepath.Join(dir, "up-audit.jsonl"), "--spool-dir", filepath.Join(dir, "up-spool"))
	s, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	tools, err := s.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "aana_pre_tool_check" {
		t.Fatalf("the upstream's tools are not forwarded: %+v, %v", tools, err)
	}
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "aana_pre_tool_check", Arguments: map[string]any{"tool_name": "x"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "gated route: refuse") {
		t.Fatalf("an allowed call does not reach the upstream: %+v, %v", res, err)
	}
	res, err = s.CallTool(ctx, &sdk.CallToolParams{Name: "drop_database", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "gated refuses this call") {
		t.Fatalf("a refused call is not a tool error: %+v, %v", res, err)
	}
	// Records are written after the answer: closing waits for the proxy
	// to exit, which drains them.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	audit, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil || strings.Count(string(audit), "\n") != 2 || !strings.Contains(string(audit), "mcp__gated__drop_database") {
		t.Fatalf("the proxy's decisions are not recorded: %s, %v", audit, err)
	}
}

// TestMCPProxyHTTP runs the proxy with a streamable HTTP upstream (a go-sdk
// server) and serves the client over streamable HTTP too. Once the
// upstream's URL refuses connections, an allowed call fails closed with a
// tool error, at once.
func TestMCPProxyHTTP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, upstream := echoUpstream(t)
	proxy := testgated.StartCommand(t, "mcp-proxy", "--upstream-url", upstream.URL, "--http-addr", "127.0.0.1:0", "--log-level", "info",
		"--catalog", dir, "--audit-file", filepath.Join(dir, "audit.jsonl"), "--spool-dir", filepath.Join(dir, "spool"))
	s, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: proxy.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "echoed" {
		t.Fatalf("an allowed call does not reach the upstream: %+v, %v", res, err)
	}
	upstream.CloseClientConnections()
	upstream.Close()
	res, err = s.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "the upstream MCP server failed it") {
		t.Fatalf("a call to an upstream that refuses connections: %+v, %v\n%s", res, err, proxy.Logs())
	}
}

// TestMCPProxyApprovals runs the proxy with a database and gated serve on
// the same one: a client without elicitation gets an ask as a tool error
// naming the approval the proxy opened as its --requester; a person
// approves it through gated serve's API, and the same call made again
// reaches the upstream once.
func TestMCPProxyApprovals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, dbURL := pgtest.Fresh(t)
	serve := startReplica(t, dbURL, approvalTokensFile(t))
	dir := t.TempDir()
	// The catalog does not describe send: trusted, its lack of annotations
	// makes it a write, which asks.
	writeFile(t, filepath.Join(dir, "ACTIONS.yaml"), echoCatalog)
	var sent atomic.Int32
	up := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	up.AddTool(&sdk.Tool{Name: "send", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		sent.Add(1)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "sent"}}}, nil
	})
	upstream := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return up }, nil))
	// Closed after the proxy stops (cleanups run last first): a live proxy
	// holds a stream open to it.
	t.Cleanup(upstream.Close)
	proxy := testgated.StartCommand(t, "mcp-proxy", "--upstream-url", upstream.URL, "--http-addr", "127.0.0.1:0", "--log-level", "info",
		"--catalog", dir, "--trust-annotations", "up", "--database-url", dbURL, "--audit-hmac-key", testHMACKey,
		"--public-url", "https://gated.example.com", "--spool-dir", filepath.Join(dir, "spool"))
	s, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: proxy.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	send := func() (*sdk.CallToolResult, string) {
		t.Helper()
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "send", Arguments: map[string]any{"to": "ops@example.com"}})
		if err != nil {
			t.Fatal(err)
		}
		return res, res.Content[0].(*sdk.TextContent).Text
	}
	res, got := send()
	d, _ := res.Meta[mcpproxy.DecisionMetaKey].(map[string]any)
	ap, _ := d["approval"].(map[string]any)
	if !res.IsError || ap == nil {
		t.Fatalf("the ask names no approval: %q\n%s", got, proxy.Logs())
	}
	id := ap["id"].(string)
	if ap["url"] != "https://gated.example.com/ui/approvals/"+id || !strings.Contains(got, "Approval "+id) {
		t.Fatalf("approval %v, text %q", ap, got)
	}
	code, stored := get(t, serve.base+"/v1/approvals/"+id, tok(apAlice))
	if code != http.StatusOK || stored["status"] != "pending" || stored["tool_name"] != "mcp__up__send" {
		t.Fatalf("the approval in gated serve: %d %v", code, stored)
	}
	if requester, _ := stored["requester"].(map[string]any); requester["token_name"] != "mcp-proxy:up" {
		t.Fatalf("requester %v", stored["requester"])
	}
	if code, d := serve.decide(t, id, "approve", apAlice); code != http.StatusOK || d["status"] != apApproved {
		t.Fatalf("approve: %d %v", code, d)
	}
	if res, got := send(); res.IsError || got != "sent" {
		t.Fatalf("the approved retry: %q\n%s", got, proxy.Logs())
	}
	if res, got := send(); !res.IsError || !strings.Contains(got, "approval_used") || sent.Load() != 1 {
		t.Fatalf("a second retry: %q, upstream calls %d", got, sent.Load())
	}
}

// TestMCPProxyRefusals: flags that cannot work, and an upstream that is no
// MCP server, stop the proxy before it serves anything.
func TestMCPProxyRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	audit := []string{"--audit-file", filepath.Join(dir, "audit.jsonl"), "--spool-dir", filepath.Join(dir, "spool")}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--upstream-url", "http://" + testgated.ClosedAddr(t) + "/mcp"}, "did not answer as an MCP server"},
		{[]string{"--upstream-cmd", "true"}, "did not start as an MCP server"},
		{nil, "needs one upstream"},
		{[]string{"--upstream-cmd", "true", "--upstream-url", "http://127.0.0.1:1/mcp"}, "needs one upstream"},
		{[]string{"--upstream-cmd", "true", "--http-addr", "0.0.0.0:0"}, "not a loopback address"},
		{[]string{"--upstream-cmd", "true", "--requester", "bot"}, "approvals need --database-url"},
		{[]string{"--upstream-cmd", "true", "--kill-switch", "on"}, "--kill-switch on needs --database-url"},
		{[]string{"--upstream-cmd", "true", "--max-result-bytes", "0"}, "--max-result-bytes must be positive"},
		{[]string{"--upstream-cmd", "true", "--upstream-elicitation", "forward"}, "--upstream-elicitation must be mark or refuse"},
	} {
		cmd := exec.Command(testgated.Binary(t), append(append([]string{"mcp-proxy"}, audit...), tc.args...)...)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%v: exit %v: %s", tc.args, err, out)
		}
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// echoCatalog describes the upstream's echo as mcp__up__echo, a read.
const echoCatalog = `actions:
  - name: mcp__up__echo
    description: Echo.
    command: ["echo"]
    inputSchema: { type: object }
    annotations: { readOnlyHint: true }
`

// echoUpstream is an upstream MCP server over streamable HTTP with one
// tool, echo, and a catalog directory describing it as mcp__up__echo, a
// read; the server closes when the test ends.
func echoUpstream(t *testing.T) (catalogDir string, upstream *httptest.Server) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ACTIONS.yaml"), echoCatalog)
	up := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	up.AddTool(&sdk.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echoed"}}}, nil
	})
	up.AddResource(&sdk.Resource{URI: "note://1", Name: "note"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "note://1", Text: "noted"}}}, nil
	})
	upstream = httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return up }, nil))
	t.Cleanup(upstream.Close)
	return dir, upstream
}
