package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatedhq/gated/internal/testgated"
)

// TestMCPStdio drives `gated mcp` as an MCP client would start it, with the
// official Go SDK's client: list the tool, call it, read the decision.
func TestMCPStdio(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	cmd := exec.Command(testgated.Binary(t), "mcp", "--catalog", "../../examples/catalog",
		"--audit-file", filepath.Join(dir, "audit.jsonl"), "--spool-dir", filepath.Join(dir, "spool"))
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.InitializeResult().ServerInfo.Name; got != "gated" {
		t.Fatalf("server name %q", got)
	}
	tools, err := s.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "aana_pre_tool_check" {
		t.Fatalf("tools %+v, %v", tools, err)
	}
	schema, _ := json.Marshal(tools.Tools[0].InputSchema)
	var sch struct{ Required []string }
	if json.Unmarshal(schema, &sch) != nil || len(sch.Required) != 7 {
		t.Fatalf("input schema is not the contract's: %s", schema)
	}
	for _, tc := range []struct {
		name  string
		event map[string]any
		route string
	}{
		{"accept", map[string]any{"tool_name": "search_kb", "tool_category": "public_read", "authorization_state": "authenticated",
			"evidence_refs": []any{map[string]any{"source_id": "auth.session", "kind": "auth_event", "trust_tier": "verified", "redaction_status": "redacted", "freshness": map[string]any{"status": "fresh"}, "provenance": "test"}},
			"risk_domain":   "research", "proposed_arguments": map[string]any{"query": "refunds"}, "recommended_route": "accept"}, "accept"},
		{"a risk-4 tool refuses", map[string]any{"tool_name": "drop_database", "tool_category": "write", "authorization_state": "confirmed",
			"evidence_refs": []any{}, "risk_domain": "devops", "proposed_arguments": map[string]any{}, "recommended_route": "accept"}, "refuse"},
		{"not an event refuses", map[string]any{"tool_name": "x"}, "refuse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "aana_pre_tool_check", Arguments: tc.event})
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			raw, _ := json.Marshal(res.StructuredContent)
			var d struct {
				Route      string `json:"route"`
				Execute    bool   `json:"execute"`
				DecisionID string `json:"decision_id"`
				Revisions  struct{ Catalog string }
			}
			if err := json.Unmarshal(raw, &d); err != nil || d.Route != tc.route || d.Execute != (tc.route == "accept") || d.DecisionID == "" {
				t.Fatalf("structured content %s", raw)
			}
			if tc.name != "not an event refuses" && d.Revisions.Catalog == "" {
				t.Fatalf("the decision does not name its catalog revision: %s", raw)
			}
			if text := res.Content[0].(*sdk.TextContent).Text; text == "" {
				t.Fatal("no text content")
			}
		})
	}
}

// One bad message on stdio costs only itself: a request over the line
// limit, a line that is not JSON and a batch are each answered with a
// JSON-RPC error (the over-long request's own id), and the session goes on
// to answer the request after them, under gated mcp and gated mcp-proxy.
// The SDK ended the process on the first of them, and every request still
// waiting lost its answer.
func TestMCPStdioSurvivesBadLines(t *testing.T) {
	t.Parallel()
	dir, upstream := echoUpstream(t)
	for name, args := range map[string][]string{
		"mcp":       {"mcp", "--catalog", "../../examples/catalog", "--audit-file", filepath.Join(dir, "mcp-audit.jsonl"), "--spool-dir", filepath.Join(dir, "mcp-spool")},
		"mcp-proxy": {"mcp-proxy", "--upstream-url", upstream.URL, "--catalog", dir, "--audit-file", filepath.Join(dir, "proxy-audit.jsonl"), "--spool-dir", filepath.Join(dir, "proxy-spool")},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(testgated.Binary(t), args...)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			huge := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"path":"` + strings.Repeat("x", 1100_000) + `"}}}`
			go func() {
				for _, l := range []string{
					`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
					`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
					huge, `not json`, `[{"jsonrpc":"2.0","id":9,"method":"ping"}]`,
					`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
				} {
					if _, err := io.WriteString(stdin, l+"\n"); err != nil {
						return
					}
				}
			}()
			answers := map[string]map[string]any{}
			nulls := 0
			sc := bufio.NewScanner(stdout)
			sc.Buffer(nil, 4<<20)
			for len(answers) < 3 || nulls < 2 {
				if !sc.Scan() {
					t.Fatalf("stdout ended with answers %v and %d errors without an id: %v\n%s", answers, nulls, sc.Err(), stderr.String())
				}
				var m map[string]any
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					t.Fatalf("line %q: %v", sc.Text(), err)
				}
				if m["id"] == nil {
					nulls++
					continue
				}
				answers[fmt.Sprint(m["id"])] = m
			}
			if e, _ := answers["2"]["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(e["message"]), "longer than") {
				t.Errorf("the over-long request: %v", answers["2"])
			}
			if r, _ := answers["3"]["result"].(map[string]any); r == nil || r["tools"] == nil {
				t.Errorf("tools/list after the bad lines: %v", answers["3"])
			}
			_ = stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("gated %s exited with %v once stdin closed:\n%s", name, err, stderr.String())
			}
		})
	}
}
