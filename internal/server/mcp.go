package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
func handleMCP(d *Deps, lim *limiter) http.Handler {
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
		if lim != nil && r.Method == http.MethodPost && !limitBatch(w, r, lim, d, limit) {
			return
		}
		h.ServeHTTP(w, r)
	})
	return mcp.Headers(inner)
}

// limitBatch counts a JSON-RPC batch (which the SDK takes from a client on
// 2025-03-26) as its number of messages against the caller's rate limit,
// as an AuthZEN batch counts its evaluations: the middleware took one
// request, and a batch of fifty tools/call decided fifty calls for it. A
// batch larger than the limit ever admits is a 413. It reports whether the
// request goes on, its body put back for the SDK to read.
func limitBatch(w http.ResponseWriter, r *http.Request, lim *limiter, d *Deps, limit int64) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "the request body could not be read")
		return false
	}
	if int64(len(body)) > limit {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", limit))
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '[' {
		return true
	}
	var batch []json.RawMessage
	if json.Unmarshal(body, &batch) != nil {
		return true // the SDK answers what is no batch
	}
	if n := len(batch); n > lim.capacity() {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a batch of %d messages can never be admitted under the rate limit of %d requests per minute: a batch may hold at most %d messages", n, lim.perMinute, lim.capacity()))
		return false
	} else if n > 1 {
		return limitRequest(w, r, lim, d, n-1, writeError)
	}
	return true
}
