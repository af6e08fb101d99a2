// Package mcp offers gated's decision as an MCP tool, aana_pre_tool_check
// (the AANA reference's name), over streamable HTTP and stdio, with the
// official MCP Go SDK. It owns only translation: deciding, recording and
// counting stay in the one decision path.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatedhq/gated/api"
	"github.com/gatedhq/gated/internal/envelope"
	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
)

// ToolName is the reference's tool name, so MCP clients configured for the
// reference find the same tool.
const ToolName = "aana_pre_tool_check"

// Decide decides one event for a call of the tool; the surface that serves
// the tool fills in who is asking (token, client address, shadow mode).
type Decide func(ctx context.Context, event map[string]any) *gate.Decision

const description = "Ask gated, before executing a tool call, whether it may run now. " +
	"The input is an Agent Action Contract v1 event (tool_name, tool_category, authorization_state, " +
	"evidence_refs, risk_domain, proposed_arguments, recommended_route). The answer's route is accept, ask, " +
	"defer or refuse; execute the tool only when execute is true."

// NewServer returns an MCP server with the one tool, answering with decide
// the calls whose arguments are an event nested at most maxDepth deep.
func NewServer(version string, maxDepth int, decide Decide) *sdk.Server {
	// Declared here so that what is not declared can be refused
	// (Declared). The one tool never changes: no list_changed to expect.
	// Logging is the go-sdk's default, kept for the clients that set a level.
	//lint:ignore SA1019 deprecated by 2026-07-28 (SEP-2577), still set by clients of the revisions before
	caps := &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}, Logging: &sdk.LoggingCapabilities{}}
	s := sdk.NewServer(&sdk.Implementation{Name: "gated", Title: "gated policy decisions", Version: version},
		&sdk.ServerOptions{Capabilities: caps})
	s.AddReceivingMiddleware(Declared(caps))
	s.AddTool(&sdk.Tool{
		Name:        ToolName,
		Title:       "gated pre-tool check",
		Description: description,
		InputSchema: json.RawMessage(api.ContractSchema),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: false, OpenWorldHint: ptr(false)},
	}, handler(maxDepth, decide))
	return s
}

// handler decodes the arguments as the HTTP surface decodes a body. Text
// gated will not decide on (not UTF-8, too deep, not one object) is refused
// as the HTTP surface refuses it, with a refuse answer and no decision: a
// tool error, as that is a failure to decide. Every decision is a result,
// whatever its route, and its structured content is the whole answer, as
// /pre-tool-check serves it. No arguments is an empty event, which the
// decision path refuses.
func handler(maxDepth int, decide Decide) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		event := map[string]any{}
		if len(req.Params.Arguments) > 0 {
			var err error
			if event, err = eventcodec.DecodeAs(req.Params.Arguments, maxDepth, "the arguments"); err != nil {
				return undecided(err), nil
			}
		}
		d := decide(ctx, event)
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: summary(d)}},
			StructuredContent: envelope.From(d),
		}, nil
	}
}

// undecided is the answer to arguments gated will not decide on: the
// HTTP surface's error body, route refuse.
func undecided(err error) *sdk.CallToolResult {
	msg := "gated refuses this call: " + err.Error() + "."
	return &sdk.CallToolResult{
		IsError:           true,
		Content:           []sdk.Content{&sdk.TextContent{Text: msg}},
		StructuredContent: map[string]any{"route": route.Refuse.String(), "execute": false, "error": err.Error()},
	}
}

// summary is the short text for clients that read only text content.
func summary(d *gate.Decision) string {
	s := fmt.Sprintf("gated route: %s. Execute: %t.", d.Route, d.Execute)
	if len(d.HardBlockers) > 0 {
		s += " Hard blockers: " + strings.Join(d.HardBlockers, ", ") + "."
	}
	return s + " Decision " + d.DecisionID + "."
}

func ptr[T any](v T) *T { return &v }
