package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatedhq/gated/internal/gate"
)

// Arguments gated will not decide on are refused as the HTTP surface
// refuses a body: a tool error saying refuse, and no decision.
func TestUndecidableArgumentsAreRefused(t *testing.T) {
	t.Parallel()
	decided := false
	h := handler(4, func(context.Context, map[string]any) *gate.Decision {
		decided = true
		return nil
	})
	// Each says what it refuses: the tool's arguments, which an MCP client
	// sent as such, not a body.
	for name, args := range map[string]string{
		"too deep":    `{"a":{"b":{"c":{"d":{"e":{}}}}}}`,
		"not UTF-8":   "{\"tool_name\":\"\xff\"}",
		"not one obj": `[1]`,
		"repeated":    `{"tool_name":"a","tool_name":"b"}`,
	} {
		req := &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Arguments: json.RawMessage(args)}}
		res, err := h(context.Background(), req)
		if err != nil || !res.IsError {
			t.Fatalf("%s: got %+v, %v; want a tool error", name, res, err)
		}
		body, _ := res.StructuredContent.(map[string]any)
		if body["route"] != "refuse" || body["execute"] != false {
			t.Errorf("%s: structured content %v, want route refuse and execute false", name, body)
		}
		if msg, _ := body["error"].(string); strings.Contains(msg, "body") || name != "too deep" && !strings.HasPrefix(msg, "the arguments ") {
			t.Errorf("%s: %q, want it to speak of the arguments", name, msg)
		}
	}
	if decided {
		t.Error("arguments gated refuses were decided")
	}
}
