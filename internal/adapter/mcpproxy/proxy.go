// Package mcpproxy stands between an MCP client and an upstream MCP server:
// it forwards what the client asks of the upstream and checks every
// tools/call with gated's decision first. It owns only translation and
// forwarding; deciding, recording and counting stay in the one decision
// path.
package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/adapter/hook"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/server"
)

// Decide decides a tools/call: the proxy fills in the event and whether it
// vouches for the category; the command that runs the proxy fills in who is
// asking.
type Decide func(ctx context.Context, req gate.Request) *gate.Decision

// Config is what a proxy needs: the upstream to forward to and the decision
// path to check calls with.
type Config struct {
	// Upstream is the connected session with the upstream server.
	Upstream *sdk.ClientSession
	// ToolPrefix is prepended to an upstream tool's name in the event, so
	// the catalog sees mcp__<server>__<tool> as coding agents name it.
	ToolPrefix string
	Decide     Decide
	// Category is the category the catalog gives a tool (unknown when it
	// describes none).
	Category func(tool string) route.Category
	// TrustAnnotations lets the upstream's tool annotations set the
	// category of a tool no catalog describes; otherwise the unknown-tools
	// rule applies to it.
	TrustAnnotations bool
	Version          string
	Log              *zap.Logger
}

// DecisionMetaKey is the _meta key of a refused call's result that carries
// the decision, for clients that read more than the text.
const DecisionMetaKey = "gated/decision"

// runtime builds the events: an MCP client is, to gated, a runtime whose
// pre-tool check is the proxy. It cannot ask (yet), so an ask or a defer
// is refused with the reason.
var runtime = hook.Runtime{ID: "mcp-proxy", Name: "the MCP client", CannotAsk: true}

type proxy struct {
	Config
}

// New returns the server the MCP client talks to. It advertises what the
// upstream advertised of tools, resources, prompts and completions, and
// forwards those requests; everything else (initialize, ping, logging
// level) the proxy answers itself.
func New(cfg Config) *sdk.Server {
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	p := &proxy{Config: cfg}
	caps := &sdk.ServerCapabilities{}
	if up := cfg.Upstream.InitializeResult(); up != nil && up.Capabilities != nil {
		caps.Tools = up.Capabilities.Tools
		caps.Resources = up.Capabilities.Resources
		caps.Prompts = up.Capabilities.Prompts
		caps.Completions = up.Capabilities.Completions
	}
	if caps.Tools == nil {
		// The proxy exists to check tool calls: it always serves tools, if
		// only an empty list.
		caps.Tools = &sdk.ToolCapabilities{}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "gated-mcp-proxy", Title: "gated MCP proxy", Version: cfg.Version},
		&sdk.ServerOptions{Capabilities: caps, Instructions: upstreamInstructions(cfg.Upstream)})
	s.AddReceivingMiddleware(p.forward)
	return s
}

func upstreamInstructions(up *sdk.ClientSession) string {
	if r := up.InitializeResult(); r != nil {
		return r.Instructions
	}
	return ""
}

// forward answers the forwarded methods from the upstream, checking
// tools/call first, and leaves the rest to the proxy's own server.
func (p *proxy) forward(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		up := p.Upstream
		switch params := req.GetParams().(type) {
		case *sdk.CallToolParamsRaw:
			return p.callTool(ctx, params), nil
		case *sdk.ListToolsParams:
			return up.ListTools(ctx, params)
		case *sdk.ListResourcesParams:
			return up.ListResources(ctx, params)
		case *sdk.ListResourceTemplatesParams:
			return up.ListResourceTemplates(ctx, params)
		case *sdk.ReadResourceParams:
			return up.ReadResource(ctx, params)
		case *sdk.ListPromptsParams:
			return up.ListPrompts(ctx, params)
		case *sdk.GetPromptParams:
			return up.GetPrompt(ctx, params)
		case *sdk.CompleteParams:
			return up.Complete(ctx, params)
		}
		return next(ctx, method, req)
	}
}

// callTool decides the call and forwards it only when the tool may
// execute. Every other outcome, and any failure of the upstream, is a tool
// error result: the model reads why, where a protocol error would read as
// a broken server.
func (p *proxy) callTool(ctx context.Context, params *sdk.CallToolParamsRaw) *sdk.CallToolResult {
	args, err := arguments(params.Arguments)
	if err != nil {
		return toolError("gated refuses this call: " + err.Error() + ".")
	}
	tool := p.ToolPrefix + params.Name
	category, vouched := p.Category(tool), false
	if category == route.Unknown && p.TrustAnnotations {
		if category, err = p.annotatedCategory(ctx, params.Name); err != nil {
			return toolError("gated refuses this call: " + err.Error() + ".")
		}
		vouched = category != route.Unknown
	}
	event := runtime.Event(&hook.Input{ToolName: tool, ToolInput: args}, hook.Options{Category: string(category)})
	d := p.Decide(ctx, gate.Request{Event: event, CategoryVouched: vouched})
	if !d.Execute {
		res := toolError(runtime.Answer(server.HookDecision(d)).HookSpecificOutput.PermissionDecisionReason + blockers(d))
		res.Meta = sdk.Meta{DecisionMetaKey: map[string]any{
			"decision_id": d.DecisionID, "route": d.Route.String(), "hard_blockers": nonNil(d.HardBlockers),
		}}
		return res
	}
	res, err := p.Upstream.CallTool(ctx, &sdk.CallToolParams{Meta: params.Meta, Name: params.Name, Arguments: params.Arguments})
	if err != nil {
		// The error is the upstream's or the transport's and names no
		// argument; the arguments themselves are never logged.
		p.Log.Warn("the upstream failed a tool call gated allowed", zap.String("tool", tool),
			zap.String("decision_id", d.DecisionID), zap.Error(err))
		return toolError(fmt.Sprintf("gated allowed this call (decision %s), but the upstream MCP server failed it: %v.",
			d.DecisionID, strings.TrimSuffix(err.Error(), ".")))
	}
	return res
}

// annotatedCategory is the category an uncatalogued tool's annotations, as
// the upstream lists them now, set. Only a tool that says it reads, and does
// not also say it destroys, reads; and a read is private_read whatever its
// openWorldHint, since annotations cannot tell public data from private.
// Everything else writes, as MCP's defaults (not read-only, destructive,
// open world) say. A tool the upstream does not list stays unknown.
func (p *proxy) annotatedCategory(ctx context.Context, name string) (route.Category, error) {
	for tool, err := range p.Upstream.Tools(ctx, nil) {
		if err != nil {
			return route.Unknown, fmt.Errorf("the upstream MCP server did not list its tools: %w", err)
		}
		if tool.Name != name {
			continue
		}
		a := tool.Annotations
		if a != nil && a.ReadOnlyHint && (a.DestructiveHint == nil || !*a.DestructiveHint) {
			return route.PrivateRead, nil
		}
		return route.Write, nil
	}
	return route.Unknown, nil
}

// arguments decodes a call's arguments as the HTTP surface decodes a body
// (numbers kept exact). MCP requires an object; absent means empty.
func arguments(raw json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil || args == nil {
		return nil, errors.New("its arguments are not a JSON object")
	}
	return args, nil
}

func blockers(d *gate.Decision) string {
	if len(d.HardBlockers) == 0 {
		return ""
	}
	return " Blockers: " + strings.Join(d.HardBlockers, ", ") + "."
}

func toolError(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
