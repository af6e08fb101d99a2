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
	limit := d.MaxBodyBytes + mcpEnvelopeBytes
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		c := callerOf(d, r)
		return mcp.NewServer(d.Version, d.MaxDepth, func(ctx context.Context, event map[string]any) *gate.Decision {
			return c.decide(ctx, d.Engine, event)
		})
	}, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: limit})
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The SDK reads before it counts, and the first read sends
		// "100 Continue": refuse a declared oversize body before that.
		if berr := declaredTooLarge(r, limit); berr != nil {
			writeError(w, berr.status, berr.msg)
			return
		}
		h.ServeHTTP(w, r)
	})
	return mcp.Headers(inner)
}
