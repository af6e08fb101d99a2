package server

import (
	"context"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatedhq/gated/internal/adapter/mcp"
	"github.com/gatedhq/gated/internal/gate"
)

// mcpEnvelopeBytes is room for the JSON-RPC envelope around an event.
const mcpEnvelopeBytes = 4 << 10

// handleMCP serves the aana_pre_tool_check tool over MCP streamable HTTP,
// stateless (any replica can answer any request) and with plain JSON
// answers. Each request gets a server bound to its caller, so the decision
// sees the same token, principals, client address and shadow flag as a
// /pre-tool-check call.
func handleMCP(d *Deps) http.Handler {
	return sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		base := callerRequest(d, r, nil)
		return mcp.NewServer(d.Version, func(ctx context.Context, event map[string]any) *gate.Decision {
			req := base
			req.Event = event
			return d.Engine.Decide(ctx, req)
		})
	}, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: d.MaxBodyBytes + mcpEnvelopeBytes})
}
