package mcp

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Declared refuses, as methods the server does not have (-32601), the
// requests of a feature caps does not declare: the go-sdk answers
// prompts/list, resources/list and the like whatever the server declared,
// with empty lists, where a server must not serve a feature it did not
// declare (checked by the MCP conformance suite on 2026-07-28).
func Declared(caps *sdk.ServerCapabilities) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if !declares(caps, method) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q is not served here: the server declares no such capability", method)}
			}
			return next(ctx, method, req)
		}
	}
}

func declares(caps *sdk.ServerCapabilities, method string) bool {
	switch method {
	case "prompts/list", "prompts/get":
		return caps.Prompts != nil
	case "resources/list", "resources/templates/list", "resources/read":
		return caps.Resources != nil
	case "resources/subscribe", "resources/unsubscribe":
		return caps.Resources != nil && caps.Resources.Subscribe
	case "completion/complete":
		return caps.Completions != nil
	case "logging/setLevel":
		//lint:ignore SA1019 deprecated by 2026-07-28 (SEP-2577), still served to the revisions before
		return caps.Logging != nil
	}
	return true
}
