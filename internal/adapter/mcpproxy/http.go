package mcpproxy

import (
	"bytes"
	"encoding/json"
	"io"
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
// server. A request whose body names a protocol version in _meta
// (2026-07-28 and later do) without the header is refused with -32020
// here (unheadered): the stateful handler would refuse it as the legacy
// version a missing header defaults to, naming versions without the one
// the body asked for.
//
// On 2026-07-28 the Mcp-Param-* headers of a tools/call are checked against
// the upstream's tool (paramCheck) before the go-sdk reads the request.
func Handler(s *sdk.Server, up *sdk.ClientSession, maxBodyBytes int64) http.Handler {
	server := func(*http.Request) *sdk.Server { return s }
	stateful := sdk.NewStreamableHTTPHandler(server, &sdk.StreamableHTTPOptions{MaxRequestBodyBytes: maxBodyBytes})
	stateless := sdk.NewStreamableHTTPHandler(server, &sdk.StreamableHTTPOptions{Stateless: true, MaxRequestBodyBytes: maxBodyBytes})
	params := &paramCheck{up: up, maxBodyBytes: maxBodyBytes}
	return mcp.Headers(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") == "" {
			var ok bool
			if r, ok = unheadered(w, r, maxBodyBytes); !ok {
				return
			}
		}
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

// unheadered refuses a POST without Mcp-Protocol-Version whose body names
// its protocol version in _meta: SEP-2575 requires the header of such a
// request. Any other request is passed on with its body intact.
func unheadered(w http.ResponseWriter, r *http.Request, maxBodyBytes int64) (*http.Request, bool) {
	if r.Method != http.MethodPost {
		return r, true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	_ = r.Body.Close()
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil || int64(len(body)) > maxBodyBytes {
		return r, true // the go-sdk refuses it
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return r, true
	}
	if _, ok := msg.Params.Meta[sdk.MetaKeyProtocolVersion]; ok {
		mcp.RefuseHeaders(w, msg.ID, "a request that names its protocol version in _meta ("+sdk.MetaKeyProtocolVersion+
			", as 2026-07-28 requests do) must carry the Mcp-Protocol-Version header")
		return r, false
	}
	return r, true
}
