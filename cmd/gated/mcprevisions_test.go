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

	"github.com/gatedhq/gated/internal/testgated"
	"github.com/gatedhq/gated/internal/testwait"
)

// revisions are the MCP protocol versions gated's MCP surfaces are tested
// on: 2026-07-28 (no handshake, stateless) and the latest before it.
var revisions = []string{"2026-07-28", "2025-11-25"}

// connectAt connects the official Go SDK's client on protocol proto and
// checks that proto was negotiated.
func connectAt(t *testing.T, tr sdk.Transport, proto string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	s, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(context.Background(), tr,
		&sdk.ClientSessionOptions{ProtocolVersion: proto})
	if err != nil {
		t.Fatalf("%s: %v", proto, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if got := s.InitializeResult().ProtocolVersion; got != proto {
		t.Fatalf("asked for %s, negotiated %s", proto, got)
	}
	return s
}

// TestMCPStdioRevisions: `gated mcp` lists and decides for a client on
// each revision.
func TestMCPStdioRevisions(t *testing.T) {
	t.Parallel()
	for _, proto := range revisions {
		dir := t.TempDir()
		cmd := exec.Command(testgated.Binary(t), "mcp", "--audit-file", filepath.Join(dir, "audit.jsonl"), "--spool-dir", filepath.Join(dir, "spool"))
		s := connectAt(t, &sdk.CommandTransport{Command: cmd}, proto, nil)
		decidesThroughTool(t, s, proto)
	}
}

// TestMCPProxyStdioRevisions: `gated mcp-proxy` on stdio, in front of
// `gated mcp`, lists and forwards for a client on each revision.
func TestMCPProxyStdioRevisions(t *testing.T) {
	t.Parallel()
	bin := testgated.Binary(t)
	for _, proto := range revisions {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "ACTIONS.yaml"), `actions:
  - name: mcp__gated__aana_pre_tool_check
    description: Ask gated whether a call may run.
    command: ["check"]
    inputSchema: { type: object }
    annotations: { readOnlyHint: true }
`)
		cmd := exec.Command(bin, "mcp-proxy", "--upstream-cmd", bin, "--catalog", dir,
			"--audit-file", filepath.Join(dir, "audit.jsonl"), "--spool-dir", filepath.Join(dir, "spool"),
			"--", "mcp", "--audit-file", filepath.Join(dir, "up-audit.jsonl"), "--spool-dir", filepath.Join(dir, "up-spool"))
		s := connectAt(t, &sdk.CommandTransport{Command: cmd}, proto, nil)
		decidesThroughTool(t, s, proto)
	}
}

// decidesThroughTool checks that the session lists gated's one decision
// tool and that calling it about an uncatalogued tool answers refuse.
func decidesThroughTool(t *testing.T, s *sdk.ClientSession, proto string) {
	t.Helper()
	ctx := context.Background()
	tools, err := s.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "aana_pre_tool_check" {
		t.Fatalf("%s: tools %+v, %v", proto, tools, err)
	}
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "aana_pre_tool_check", Arguments: map[string]any{"tool_name": "x"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "gated route: refuse") {
		t.Fatalf("%s: %+v, %v", proto, res, err)
	}
}

// TestMCPProxyHTTPRevisions: `gated mcp-proxy --http-addr` serves a client
// on 2026-07-28 and one on 2025-11-25 at the same /mcp: both list and
// call, and an ask reaches the person at each — as an input-required
// result on 2026-07-28, as elicitation/create before — and runs the call
// once approved, with both decisions recorded.
func TestMCPProxyHTTPRevisions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ACTIONS.yaml"), echoCatalog)
	var sent atomic.Int32
	up := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	up.AddTool(&sdk.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echoed"}}}, nil
	})
	// Not catalogued, and trusted: its lack of annotations makes it a
	// write, which asks.
	up.AddTool(&sdk.Tool{Name: "send", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		sent.Add(1)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "sent"}}}, nil
	})
	upstream := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return up }, nil))
	t.Cleanup(upstream.Close)
	auditFile := filepath.Join(dir, "audit.jsonl")
	proxy := testgated.StartCommand(t, "mcp-proxy", "--upstream-url", upstream.URL, "--http-addr", "127.0.0.1:0", "--log-level", "info",
		"--catalog", dir, "--trust-annotations", "up", "--audit-file", auditFile, "--spool-dir", filepath.Join(dir, "spool"))
	for i, proto := range revisions {
		var asked atomic.Int32
		s := connectAt(t, &sdk.StreamableClientTransport{Endpoint: proxy.URL + "/mcp"}, proto, &sdk.ClientOptions{
			ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				asked.Add(1)
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
			},
		})
		tools, err := s.ListTools(ctx, nil)
		if err != nil || len(tools.Tools) != 2 {
			t.Fatalf("%s: tools %+v, %v", proto, tools, err)
		}
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{}})
		if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "echoed" {
			t.Fatalf("%s: %+v, %v\n%s", proto, res, err, proxy.Logs())
		}
		res, err = s.CallTool(ctx, &sdk.CallToolParams{Name: "send", Arguments: map[string]any{"to": "ops@example.com"}})
		if err != nil || res.IsError || asked.Load() != 1 || sent.Load() != int32(i+1) {
			t.Fatalf("%s: an approved ask: %+v, %v, asked %d, sent %d\n%s", proto, res, err, asked.Load(), sent.Load(), proxy.Logs())
		}
		_ = s.Close()
	}
	// Each revision's echo, ask, and approved decision.
	testwait.Until(t, "the decisions to be recorded", func() bool {
		audit, _ := os.ReadFile(auditFile)
		return strings.Count(string(audit), "\n") == 3*len(revisions)
	})
}
