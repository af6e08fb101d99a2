package mcpproxy

import (
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatedhq/gated/internal/adapter/mcp"
)

// Handler serves the proxy's server over streamable HTTP to clients of
// every protocol version. The go-sdk takes 2026-07-28 only on a stateless
// handler, and a stateless session cannot send the client a request, which
// the proxy needs before 2026-07-28 to ask the person (elicitation/create)
// and to relay the upstream's requests and notifications. So a request
// whose Mcp-Protocol-Version header is 2026-07-28 or later goes to a
// stateless handler, everything else to a stateful one, both over the same
// server. A request whose body claims 2026-07-28 without the header reaches
// the stateful handler, which refuses it.
//
// On 2026-07-28 the Mcp-Param-* headers of a tools/call are checked against
// the upstream's tool (paramCheck) before the go-sdk reads the request.
func Handler(s *sdk.Server, up *sdk.ClientSession, maxBodyBytes int64) http.Handler {
	server := func(*http.Request) *sdk.Server { return s }
	stateful := sdk.NewStreamableHTTPHandler(server, &sdk.StreamableHTTPOptions{MaxRequestBodyBytes: maxBodyBytes})
	stateless := sdk.NewStreamableHTTPHandler(server, &sdk.StreamableHTTPOptions{Stateless: true, MaxRequestBodyBytes: maxBodyBytes})
	params := &paramCheck{up: up, maxBodyBytes: maxBodyBytes}
	return mcp.Headers(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= multiRoundTrip {
			r, ok := params.check(w, r)
			if ok {
				stateless.ServeHTTP(w, r)
			}
			return
		}
		stateful.ServeHTTP(w, r)
	}))
}
