package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
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
