//lint:file-ignore SA1019 sampling and roots are deprecated (SEP-2577) but upstreams still ask for them, and passing them on is the proxy's job
package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The upstream's own input requests (SEP-2322): an upstream on 2026-07-28
// answers a tools/call, prompts/get or resources/read it needs more for
// with input-required, listing what it asks of the client (elicitation,
// sampling, roots). The proxy's upstream session does not answer them
// itself (MultiRoundTrip disabled): a client on 2026-07-28 gets them as the
// proxy's own input-required result, and a client before it is asked by
// request, as the go-sdk's server does for such a client, and the proxy
// retries the upstream with the answers.

// maxRounds bounds the rounds of one call with a client before 2026-07-28,
// as the go-sdk's client bounds its own (10).
const maxRounds = 10

// roundTrip is what the proxy reads and writes of a result that may be
// input-required: the go-sdk's three such results share the fields, not
// an interface.
type roundTrip[R sdk.Result] struct {
	needs func(R) bool
	get   func(R) (sdk.InputRequestMap, string)
	// with is a copy of the result carrying these requests and state;
	// the copy keeps its input-required type.
	with func(R, sdk.InputRequestMap, string) R
	// again retries the upstream with the answers and the upstream's state.
	again func(context.Context, sdk.InputResponseMap, string) (R, error)
}

func toolRounds(p *proxy, params *sdk.CallToolParams) roundTrip[*sdk.CallToolResult] {
	return roundTrip[*sdk.CallToolResult]{
		needs: (*sdk.CallToolResult).NeedsInput,
		get:   func(r *sdk.CallToolResult) (sdk.InputRequestMap, string) { return r.InputRequests, r.RequestState },
		with: func(r *sdk.CallToolResult, m sdk.InputRequestMap, s string) *sdk.CallToolResult {
			cp := *r
			cp.InputRequests, cp.RequestState = m, s
			return &cp
		},
		again: func(ctx context.Context, answers sdk.InputResponseMap, state string) (*sdk.CallToolResult, error) {
			cp := *params
			cp.InputResponses, cp.RequestState = answers, state
			return p.Upstream.CallTool(ctx, &cp)
		},
	}
}

func promptRounds(p *proxy, params *sdk.GetPromptParams) roundTrip[*sdk.GetPromptResult] {
	return roundTrip[*sdk.GetPromptResult]{
		needs: (*sdk.GetPromptResult).NeedsInput,
		get:   func(r *sdk.GetPromptResult) (sdk.InputRequestMap, string) { return r.InputRequests, r.RequestState },
		with: func(r *sdk.GetPromptResult, m sdk.InputRequestMap, s string) *sdk.GetPromptResult {
			cp := *r
			cp.InputRequests, cp.RequestState = m, s
			return &cp
		},
		again: func(ctx context.Context, answers sdk.InputResponseMap, state string) (*sdk.GetPromptResult, error) {
			cp := *params
			cp.InputResponses, cp.RequestState = answers, state
			return p.Upstream.GetPrompt(ctx, &cp)
		},
	}
}

func resourceRounds(p *proxy, params *sdk.ReadResourceParams) roundTrip[*sdk.ReadResourceResult] {
	return roundTrip[*sdk.ReadResourceResult]{
		needs: (*sdk.ReadResourceResult).NeedsInput,
		get:   func(r *sdk.ReadResourceResult) (sdk.InputRequestMap, string) { return r.InputRequests, r.RequestState },
		with: func(r *sdk.ReadResourceResult, m sdk.InputRequestMap, s string) *sdk.ReadResourceResult {
			cp := *r
			cp.InputRequests, cp.RequestState = m, s
			return &cp
		},
		again: func(ctx context.Context, answers sdk.InputResponseMap, state string) (*sdk.ReadResourceResult, error) {
			cp := *params
			cp.InputResponses, cp.RequestState = answers, state
			return p.Upstream.ReadResource(ctx, &cp)
		},
	}
}

// relayInput takes an upstream's result on to the client. A complete one
// goes as it is. An input-required one goes, to a client on 2026-07-28, as
// the proxy's own input-required result with the same requests (the
// upstream's elicitations marked as its own) and the upstream's state,
// which the caller may wrap; a request of a kind the client did not
// declare is refused (-32021), as the upstream must not ask it. A client
// before 2026-07-28 is asked each request by the proxy, and the upstream
// retried with the answers, for at most maxRounds rounds.
func relayInput[R sdk.Result](ctx context.Context, p *proxy, ss *sdk.ServerSession, caps *sdk.ClientCapabilities, rt roundTrip[R], res R) (R, error) {
	var zero R
	if !rt.needs(res) {
		return res, nil
	}
	if onMultiRoundTrip(ss) {
		reqs, state := rt.get(res)
		marked, err := p.passable(caps, reqs)
		if err != nil {
			return zero, err
		}
		return rt.with(res, marked, state), nil
	}
	for round := 1; ; round++ {
		reqs, state := rt.get(res)
		if len(reqs) == 0 {
			return zero, errors.New("the upstream MCP server is busy (it asked for no input yet did not answer): call again later")
		}
		if round > maxRounds {
			return zero, fmt.Errorf("the upstream MCP server asked for input more than %d times in one call", maxRounds)
		}
		answers, err := p.fulfil(ctx, ss, caps, reqs)
		if err != nil {
			return zero, err
		}
		if res, err = rt.again(ctx, answers, state); err != nil || !rt.needs(res) {
			return res, err
		}
	}
}

// onMultiRoundTrip: the client is on 2026-07-28 or later, as the go-sdk
// tells (a session without a handshake is). Without a session nobody can
// be asked by request either.
func onMultiRoundTrip(ss *sdk.ServerSession) bool {
	if ss == nil {
		return true
	}
	ip := ss.InitializeParams()
	return ip == nil || ip.ProtocolVersion >= multiRoundTrip
}

// passable is the upstream's input requests as the proxy passes them on:
// each of a kind the client declared, an elicitation's message marked as
// the upstream's. The upstream's maps and params are left as they are.
func (p *proxy) passable(caps *sdk.ClientCapabilities, reqs sdk.InputRequestMap) (sdk.InputRequestMap, error) {
	missing := &sdk.ClientCapabilities{}
	lacks := false
	out := make(sdk.InputRequestMap, len(reqs))
	for id, ir := range reqs {
		switch r := ir.(type) {
		case *sdk.ElicitParams:
			if p.Downstream.RefuseElicitation {
				return nil, errRefusedElicitation
			}
			if caps.Elicitation == nil {
				missing.Elicitation, lacks = &sdk.ElicitationCapabilities{}, true
				continue
			}
			cp := *r
			cp.Message = UpstreamElicitationPrefix + cp.Message
			out[id] = &cp
		case *sdk.CreateMessageParams, *sdk.CreateMessageWithToolsParams:
			if caps.Sampling == nil {
				missing.Sampling, lacks = &sdk.SamplingCapabilities{}, true
				continue
			}
			out[id] = ir
		case *sdk.ListRootsParams:
			if !declaresRoots(caps) {
				missing.RootsV2, lacks = &sdk.RootCapabilities{}, true
				continue
			}
			out[id] = ir
		default:
			return nil, fmt.Errorf("the upstream MCP server asked the client for input gated mcp-proxy does not know (%T)", ir)
		}
	}
	if lacks {
		return nil, missingCapabilities(missing)
	}
	if reqs == nil {
		return nil, nil
	}
	return out, nil
}

var errRefusedElicitation = errors.New("gated mcp-proxy does not pass the upstream's elicitation requests on (--upstream-elicitation refuse)")

// missingCapabilities is SEP-2575's MissingRequiredClientCapabilityError
// naming what the upstream asked for and the client did not declare; on
// HTTP the go-sdk answers it with 400.
func missingCapabilities(missing *sdk.ClientCapabilities) error {
	data, err := json.Marshal(sdk.MissingRequiredClientCapabilityData{RequiredCapabilities: missing})
	if err != nil {
		return err
	}
	return &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities, Data: data,
		Message: "the upstream MCP server behind gated mcp-proxy asks the client for input of a kind it did not declare"}
}

func declaresRoots(caps *sdk.ClientCapabilities) bool {
	return caps.RootsV2 != nil || caps.Roots.ListChanged
}

// fulfil asks a client before 2026-07-28 each of the upstream's input
// requests, as the proxy passes the upstream's requests on (downstream.go):
// only of a kind the client declared, an elicitation marked as the
// upstream's. Not decided by gated, and not logged.
func (p *proxy) fulfil(ctx context.Context, ss *sdk.ServerSession, caps *sdk.ClientCapabilities, reqs sdk.InputRequestMap) (sdk.InputResponseMap, error) {
	answers := make(sdk.InputResponseMap, len(reqs))
	for id, ir := range reqs {
		var (
			answer sdk.InputResponse
			err    error
		)
		switch r := ir.(type) {
		case *sdk.ElicitParams:
			switch {
			case p.Downstream.RefuseElicitation:
				return nil, errRefusedElicitation
			case caps.Elicitation == nil:
				return nil, errors.New("the MCP client behind gated mcp-proxy did not declare elicitation")
			}
			cp := *r
			cp.Message = UpstreamElicitationPrefix + cp.Message
			answer, err = ss.Elicit(ctx, &cp)
		case *sdk.CreateMessageParams:
			if caps.Sampling == nil {
				return nil, errors.New("the MCP client behind gated mcp-proxy did not declare sampling")
			}
			answer, err = ss.CreateMessage(ctx, r)
		case *sdk.CreateMessageWithToolsParams:
			switch {
			case caps.Sampling == nil:
				return nil, errors.New("the MCP client behind gated mcp-proxy did not declare sampling")
			case caps.Sampling.Tools == nil && (len(r.Tools) > 0 || r.ToolChoice != nil):
				return nil, errors.New("the MCP client behind gated mcp-proxy did not declare sampling with tools")
			}
			answer, err = ss.CreateMessageWithTools(ctx, r)
		case *sdk.ListRootsParams:
			if !declaresRoots(caps) {
				return nil, errors.New("the MCP client behind gated mcp-proxy did not declare roots")
			}
			answer, err = ss.ListRoots(ctx, r)
		default:
			return nil, fmt.Errorf("the upstream MCP server asked the client for input gated mcp-proxy does not know (%T)", ir)
		}
		if err != nil {
			return nil, fmt.Errorf("the MCP client did not answer the upstream's input request %q: %w", id, err)
		}
		answers[id] = answer
	}
	return answers, nil
}

// clientCapabilities is what the client declared: in the request's _meta
// on 2026-07-28, in the handshake before. Never nil.
func clientCapabilities(req sdk.Request) *sdk.ClientCapabilities {
	if r, ok := req.(interface {
		ClientCapabilities() *sdk.ClientCapabilities
	}); ok {
		if caps := r.ClientCapabilities(); caps != nil {
			return caps
		}
	}
	return &sdk.ClientCapabilities{}
}

// askable is what the proxy tells an upstream on 2026-07-28 it may ask of
// the client, in the request's _meta: the client's own elicitation,
// sampling and roots, less elicitation when the proxy refuses to pass it
// on. So the upstream asks only what the client can answer, as it would
// of the client itself (SEP-2575); nothing else of the client's is told.
type askable struct {
	Roots       *sdk.RootCapabilities        `json:"roots,omitempty"`
	Sampling    *sdk.SamplingCapabilities    `json:"sampling,omitempty"`
	Elicitation *sdk.ElicitationCapabilities `json:"elicitation,omitempty"`
}

// toUpstream sets the capabilities an upstream on 2026-07-28 reads in a
// forwarded request's _meta to what the client can be asked (askable).
// Before 2026-07-28 the upstream reads the proxy's from the handshake, and
// every request of its own reaches the client through Downstream.
func (p *proxy) toUpstream(params sdk.Params, caps *sdk.ClientCapabilities) {
	r := p.Upstream.InitializeResult()
	if r == nil || r.ProtocolVersion < multiRoundTrip {
		return
	}
	a := askable{Sampling: caps.Sampling}
	if !p.Downstream.RefuseElicitation {
		a.Elicitation = caps.Elicitation
	}
	if declaresRoots(caps) {
		a.Roots = &sdk.RootCapabilities{ListChanged: caps.Roots.ListChanged || (caps.RootsV2 != nil && caps.RootsV2.ListChanged)}
	}
	meta := maps.Clone(params.GetMeta())
	if meta == nil {
		meta = map[string]any{}
	}
	meta[sdk.MetaKeyClientCapabilities] = a
	params.SetMeta(meta)
}
