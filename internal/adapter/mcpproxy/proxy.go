// Package mcpproxy stands between an MCP client and an upstream MCP server:
// it forwards what the client asks of the upstream, and what the upstream
// sends or asks of the client, and checks every tools/call with gated's
// decision first. It owns only translation and
// forwarding; deciding, recording and counting stay in the one decision
// path.
package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/adapter/hook"
	"github.com/gatedhq/gated/internal/adapter/hook/wire"
	"github.com/gatedhq/gated/internal/adapter/mcp"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/strictjson"
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
	// Downstream relays what the upstream sends to the proxy's clients:
	// the Downstream whose Client connected Upstream. Without it, nothing
	// the upstream sends of itself reaches them.
	Downstream *Downstream
	// ToolPrefix is prepended to an upstream tool's name in the event, so
	// the catalog sees mcp__<server>__<tool> as coding agents name it.
	ToolPrefix string
	Decide     Decide
	// Category picks the category the catalog gives a tool (unknown when
	// it describes none); the decision joins the same catalog.
	Category func(tool string) gate.Pick
	// TrustAnnotations lets the upstream's tool annotations set the
	// category of a tool no catalog describes; otherwise the unknown-tools
	// rule applies to it.
	TrustAnnotations bool
	// HideRefused leaves out of tools/list the tools AlwaysRefused names:
	// the model is not offered what it can never run. Calls of them are
	// still decided (and refused).
	HideRefused   bool
	AlwaysRefused func(tool string, vouched bool) bool
	// Stopped, when set, reports a kill switch that stops a request of the
	// proxy's agent (gate.Engine.Stopped): the requests the proxy passes on
	// undecided (resources/read, prompts/get, completion/complete,
	// resources/subscribe, and a tools/call retry with the upstream's
	// state, of its tool) are refused
	// while it does, as tools/call is.
	Stopped func(agentID, tool string) error
	// MaxResultBytes bounds the encoded size of a tool result passed on to
	// the client (DefaultMaxResultBytes when 0): a larger one is replaced
	// by a tool error.
	MaxResultBytes int
	Version        string
	Log            *zap.Logger
}

// DefaultMaxResultBytes is the largest tool result the proxy passes on
// unless told otherwise: far more than a model's context takes in one
// result, far less than what would strain the proxy.
const DefaultMaxResultBytes = 4 << 20

// DecisionMetaKey is the _meta key of a refused call's result that carries
// the decision, for clients that read more than the text.
const DecisionMetaKey = "gated/decision"

// runtime builds the events: an MCP client is, to gated, a runtime whose
// pre-tool check is the proxy. The proxy asks through the client's
// elicitation when it can; an ask it cannot put to the person, and every
// defer, is refused with the reason, and names the approval gated opened
// for it when the proxy has the approval flow.
var runtime = hook.Runtime{Codec: wire.Named("mcp-proxy", "the MCP client", false)}

// asking words the question the proxy puts to the person.
var asking = hook.Runtime{Codec: wire.Named(runtime.ID, runtime.Name, true)}

type proxy struct {
	Config
	pending pending
	subs    subscriptions
	asks    *asks
}

// New returns the server the MCP client talks to. It advertises what the
// upstream advertised of tools, resources, prompts and completions, and
// forwards those requests; the proxy answers initialize and ping itself.
func New(cfg Config) *sdk.Server {
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.Downstream == nil {
		cfg.Downstream = NewDownstream()
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = DefaultMaxResultBytes
	}
	p := &proxy{Config: cfg, asks: newAsks()}
	caps, upCaps := &sdk.ServerCapabilities{}, (*sdk.ServerCapabilities)(nil)
	if up := cfg.Upstream.InitializeResult(); up != nil && up.Capabilities != nil {
		upCaps = up.Capabilities
		relayedLogging(caps, up.Capabilities)
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
	opts := &sdk.ServerOptions{Capabilities: caps, Instructions: upstreamInstructions(cfg.Upstream),
		ProgressNotificationHandler: p.clientProgressed}
	cfg.Downstream.relayRootChanges(opts)
	p.relaySubscriptions(opts, upCaps)
	s := sdk.NewServer(&sdk.Implementation{Name: "gated-mcp-proxy", Title: "gated MCP proxy", Version: cfg.Version}, opts)
	// Refused before forwarding: the proxy serves only what it declares,
	// the upstream's features.
	s.AddReceivingMiddleware(mcp.Declared(caps), p.forward)
	cfg.Downstream.bind(s, cfg.Log)
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
	return func(ctx context.Context, method string, req sdk.Request) (res sdk.Result, err error) {
		// A bug here must fail this one request, not end every session:
		// the go-sdk runs handlers without a recover.
		defer func() {
			if r := recover(); r != nil {
				p.Log.Error("the proxy failed a request", zap.String("method", method), zap.Any("panic", r))
				res, err = nil, fmt.Errorf("gated mcp-proxy failed %s internally", method)
			}
		}()
		up := p.Upstream
		ss, _ := req.GetSession().(*sdk.ServerSession)
		if params, ok := req.GetParams().(sdk.RequestParams); ok {
			defer p.Downstream.track(ctx, ss, params)()
		}
		if method == "logging/setLevel" {
			return p.setLevel(ctx, next, method, req)
		}
		switch req.GetParams().(type) {
		case *sdk.ReadResourceParams, *sdk.GetPromptParams, *sdk.CompleteParams, *sdk.SubscribeParams:
			if err := p.stopped(""); err != nil {
				return nil, err
			}
		}
		switch params := req.GetParams().(type) {
		case *sdk.CallToolParamsRaw:
			how, caps := howToAsk(ss, req), clientCapabilities(req)
			res, err := p.callTool(ctx, ss, how, caps, own(params))
			if err != nil {
				return nil, err
			}
			return typed(ss, ownResult(res)), nil
		case *sdk.ListToolsParams:
			res, err := p.listTools(ctx, own(params))
			return passed(ownResult(res), err)
		case *sdk.ListResourcesParams:
			res, err := up.ListResources(ctx, own(params))
			return passed(ownResult(res), err)
		case *sdk.ListResourceTemplatesParams:
			res, err := up.ListResourceTemplates(ctx, own(params))
			return passed(ownResult(res), err)
		case *sdk.ReadResourceParams:
			caps := clientCapabilities(req)
			p.toUpstream(own(params), caps)
			res, err := up.ReadResource(ctx, params)
			if err == nil {
				res, err = relayInput(ctx, p, ss, caps, resourceRounds(p, params), res)
			}
			return passed(typed(ss, ownResult(res)), err)
		case *sdk.ListPromptsParams:
			res, err := up.ListPrompts(ctx, own(params))
			return passed(ownResult(res), err)
		case *sdk.GetPromptParams:
			caps := clientCapabilities(req)
			p.toUpstream(own(params), caps)
			res, err := up.GetPrompt(ctx, params)
			if err == nil {
				res, err = relayInput(ctx, p, ss, caps, promptRounds(p, params), res)
			}
			return passed(typed(ss, ownResult(res)), err)
		case *sdk.CompleteParams:
			res, err := up.Complete(ctx, own(params))
			return passed(ownResult(res), err)
		}
		return next(ctx, method, req)
	}
}

// stopped is the refusal of a request the proxy passes on undecided while a
// kill switch stops its agent: a JSON-RPC error naming the kill.
func (p *proxy) stopped(tool string) error {
	if p.Stopped == nil {
		return nil
	}
	if err := p.Stopped(runtime.ID, tool); err != nil {
		return fmt.Errorf("gated refused this request: %w", err)
	}
	return nil
}

// clientProgressed passes on the progress a client reports of a request
// the upstream made of it, whose token is the upstream's own.
func (p *proxy) clientProgressed(ctx context.Context, req *sdk.ProgressNotificationServerRequest) {
	if err := p.Upstream.NotifyProgress(ctx, req.Params); err != nil {
		p.Log.Debug("the upstream did not take a client's progress", zap.Error(err))
	}
}

// listTools passes the upstream's list on, less the tools that would always
// be refused when asked to hide them. The upstream session may cache its
// result: the filtered list is a copy.
func (p *proxy) listTools(ctx context.Context, params *sdk.ListToolsParams) (*sdk.ListToolsResult, error) {
	res, err := p.Upstream.ListTools(ctx, params)
	if err != nil || !p.HideRefused {
		return res, err
	}
	out := *res
	out.Tools = make([]*sdk.Tool, 0, len(res.Tools))
	for _, t := range res.Tools {
		if !p.AlwaysRefused(p.ToolPrefix+t.Name, p.TrustAnnotations) {
			out.Tools = append(out.Tools, t)
		}
	}
	return &out, nil
}

// callTool decides the call and forwards it only when the tool may
// execute. Every other outcome, and any failure of the upstream, is a tool
// error result: the model reads why, where a protocol error would read as
// a broken server. The protocol's own errors are a request state the proxy
// cannot honour (-32602, nothing forwarded) and a capability the upstream
// needs of the client that it did not declare (-32021).
//
// A retry with an upstream's continuation state (rounds.go) is not decided
// again: the call was decided, and allowed, when the upstream first asked;
// the retry carries the client's answers to the upstream, bound by the
// signed state to that decision and this very call.
func (p *proxy) callTool(ctx context.Context, ss *sdk.ServerSession, how askWay, caps *sdk.ClientCapabilities, params *sdk.CallToolParamsRaw) (*sdk.CallToolResult, error) {
	args, err := arguments(params.Arguments)
	if err != nil {
		return toolError("gated refuses this call: " + err.Error() + "."), nil
	}
	tool := p.ToolPrefix + params.Name
	key, keyed := callKey(tool, args)
	forward := &sdk.CallToolParams{Meta: params.Meta, Name: params.Name, Arguments: params.Arguments}
	p.toUpstream(forward, caps)
	var state askState
	if params.RequestState != "" {
		if !keyed {
			err = errStateForeign
		} else {
			state, err = p.asks.redeem(params.RequestState, key, time.Now())
		}
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "gated refuses this call: " + err.Error() + "."}
		}
		if state.Kind == stateUpstream {
			// Not decided again, but a kill set since stops it: the
			// upstream runs the tool on this retry.
			if err := p.stopped(tool); err != nil {
				return toolError(err.Error() + "."), nil
			}
			forward.InputResponses, forward.RequestState = params.InputResponses, state.Upstream
			return p.forwardCall(ctx, ss, caps, tool, key, state.Decision, forward)
		}
	} else {
		// No state: a new call, decided as any other. The answers go on
		// with it, as the upstream may ask without a state of its own.
		forward.InputResponses = params.InputResponses
	}
	pick := p.Category(tool)
	category, vouched := pick.Category, false
	if category == route.Unknown && p.TrustAnnotations {
		if category, err = p.annotatedCategory(ctx, params.Name); err != nil {
			return toolError("gated refuses this call: " + err.Error() + "."), nil
		}
		vouched = category != route.Unknown
	}
	event := runtime.Event(&hook.Input{Tool: tool, Input: args}, hook.Options{Category: category})
	var remembered *gate.PendingApproval
	if keyed {
		if remembered = p.pending.get(key, time.Now()); remembered != nil {
			// As a runtime retrying with the approval would.
			event.EvidenceRefs = append(slices.Clone(event.EvidenceRefs), contract.RefDoc(remembered.EvidenceRef))
		}
	}
	var d *gate.Decision
	declined := false // the person was asked about this call and did not approve
	var asked string  // the decision that asked, when d is not it
	switch {
	case state.Kind == stateAsk:
		// A retry with the person's answer to the question the proxy put
		// about this very call.
		if how != askInputRequired {
			return toolError("gated refuses this call: it answers a question gated mcp-proxy did not ask."), nil
		}
		if approved(params.InputResponses) {
			d = p.confirmed(ctx, state.Decision, event, vouched)
		} else {
			// The person did not approve: decided afresh, never asked
			// again in this round, so an ask stands.
			d = p.Decide(ctx, gate.Request{Event: event.Doc(), CategoryVouched: vouched, AsksItself: true, Pick: &pick})
			declined, asked = answered(params.InputResponses), state.Decision
		}
	default:
		// An input-required state binds the call by its key: a call without
		// one is not asked, as from a client that cannot be.
		asks := how == askElicit || (how == askInputRequired && keyed)
		d = p.Decide(ctx, gate.Request{Event: event.Doc(), CategoryVouched: vouched, AsksItself: asks, Pick: &pick})
		if d.Route == route.Ask && !d.Execute && asks && remembered == nil {
			if how == askInputRequired {
				return p.inputRequired(d, event, key), nil
			}
			d, declined = p.ask(ctx, ss, d, event, vouched)
		}
	}
	switch {
	case d.Approval != nil && keyed:
		p.pending.put(key, d.Approval, time.Now())
	case remembered != nil && settlesApproval(d):
		p.pending.forget(key, remembered.ID)
	}
	if !d.Execute {
		if declined && d.Route == route.Ask {
			return declinedResult(d, asked), nil
		}
		return refused(d, remembered), nil
	}
	return p.forwardCall(ctx, ss, caps, tool, key, d.DecisionID, forward)
}

// forwardCall forwards a call the decision allowed, passing on the
// upstream's input requests (relayInput): to a client on 2026-07-28 with
// the upstream's state wrapped in the proxy's signed continuation state.
func (p *proxy) forwardCall(ctx context.Context, ss *sdk.ServerSession, caps *sdk.ClientCapabilities, tool, key, decision string, params *sdk.CallToolParams) (*sdk.CallToolResult, error) {
	res, err := p.Upstream.CallTool(ctx, params)
	if err == nil {
		res, err = relayInput(ctx, p, ss, caps, toolRounds(p, params), res)
	}
	if err == nil && res.NeedsInput() {
		var state string
		switch {
		case key == "":
			err = errStateUnbound
		default:
			if state, err = p.asks.issue(stateUpstream, decision, key, res.RequestState, time.Now()); err == nil {
				res.RequestState = state
			}
		}
	}
	if rpc, ok := errors.AsType[*jsonrpc.Error](err); ok && rpc.Code == sdk.CodeMissingRequiredClientCapabilities {
		// The client must declare what the upstream needs of it: the
		// protocol's error tells it so, where a tool error would not.
		return nil, rpc
	}
	if err != nil {
		p.Log.Warn("the upstream failed a tool call gated allowed", zap.String("tool", tool),
			zap.String("decision_id", decision), upstreamError(err))
		// The upstream's error message is its own text, as a result is, and
		// as bounded: it must not carry past the cap what a result cannot.
		res = toolError(fmt.Sprintf("gated allowed this call (decision %s), but the upstream MCP server failed it: %v.",
			decision, strings.TrimSuffix(err.Error(), ".")))
	}
	// Measured once received: the go-sdk's own transports bound what one
	// message may hold while it is read (16 MiB on stdio).
	encoded, err := json.Marshal(res)
	if err != nil {
		return toolError(fmt.Sprintf("gated allowed this call (decision %s) and the upstream MCP server ran it, but its result cannot be encoded, so it was dropped.", decision)), nil
	}
	if len(encoded) > p.MaxResultBytes {
		p.Log.Warn("the upstream's tool result is over the cap, so the client gets a tool error instead", zap.String("tool", tool),
			zap.String("decision_id", decision), zap.Int("result_bytes", len(encoded)), zap.Int("max_result_bytes", p.MaxResultBytes))
		return toolError(fmt.Sprintf("gated allowed this call (decision %s) and the upstream MCP server ran it, but its result "+
			"(%d bytes) is larger than the %d bytes gated mcp-proxy passes on (--max-result-bytes), so it was dropped.",
			decision, len(encoded), p.MaxResultBytes)), nil
	}
	return res, nil
}

// refused is the tool error of a call that may not run. When an approval
// is open for the call — just opened, or remembered and still pending —
// it names the approval, where a person decides it, and what to do then.
func refused(d *gate.Decision, remembered *gate.PendingApproval) *sdk.CallToolResult {
	text := reason(runtime, d) + blockers(d)
	meta := map[string]any{"decision_id": d.DecisionID, "route": d.Route.String(), "hard_blockers": nonNil(d.HardBlockers)}
	open := d.Approval
	if open == nil && remembered != nil && slices.Contains(d.HardBlockers, route.CodeApprovalPending) {
		open = remembered
	}
	if open != nil {
		text += fmt.Sprintf(" Approval %s waits for a person to decide it at %s until %s; once it is approved, call this tool again with the same arguments, and it runs once.",
			open.ID, open.URL, open.ExpiresAt.UTC().Format(time.RFC3339))
		meta["approval"] = map[string]any{"id": open.ID, "url": open.URL, "expires_at": open.ExpiresAt.UTC().Format(time.RFC3339)}
	}
	res := toolError(text)
	res.Meta = sdk.Meta{DecisionMetaKey: meta}
	return res
}

// declinedResult is the tool error of an ask the person at the client
// was asked and did not approve; asked is the decision that asked, when d
// is the retry's.
func declinedResult(d *gate.Decision, asked string) *sdk.CallToolResult {
	res := toolError(hook.Declined(d, asked) + blockers(d))
	res.Meta = sdk.Meta{DecisionMetaKey: map[string]any{"decision_id": d.DecisionID, "route": d.Route.String(), "hard_blockers": nonNil(d.HardBlockers)}}
	return res
}

// reason words a decision as the hook answer's reason would.
func reason(rt hook.Runtime, d *gate.Decision) string {
	_, why := rt.Verdict(d, "")
	return why
}

// approveSchema is the one question an elicitation asks.
var approveSchema = map[string]any{
	"type":     "object",
	"required": []any{"approve"},
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Approve this call",
			"description": "Let the tool run this once, with the arguments the model gave."},
	},
}

// multiRoundTrip is the first protocol version where a server may not
// send a request while it serves one (SEP-2322): it returns input
// requests for the client to retry the call with.
const multiRoundTrip = "2026-07-28"

// askWay is how the proxy can put an ask to the person at the client.
type askWay int

const (
	// askNone: the client declared no form elicitation; an ask is refused
	// (naming a stored approval with the approval flow).
	askNone askWay = iota
	// askElicit: before 2026-07-28, an elicitation/create request while the
	// proxy serves the call.
	askElicit
	// askInputRequired: from 2026-07-28, an input-required result the
	// client retries with the person's answer.
	askInputRequired
)

// howToAsk: the client must have declared form elicitation (an empty
// elicitation capability means form). The session's protocol version tells
// the two ways apart as the go-sdk does (serverMultiRoundTripMiddleware): a
// session without a handshake is on 2026-07-28 or later. Capabilities come
// from the request's _meta on 2026-07-28, from the handshake before.
func howToAsk(ss *sdk.ServerSession, req sdk.Request) askWay {
	creq, _ := req.(*sdk.CallToolRequest)
	if ss == nil || creq == nil {
		return askNone
	}
	caps := creq.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil || (caps.Elicitation.Form == nil && caps.Elicitation.URL != nil) {
		return askNone
	}
	if !onMultiRoundTrip(ss) {
		return askElicit
	}
	return askInputRequired
}

// ask puts an ask decision to the person through the client's
// elicitation. An approval is decided again, as a retry with an approval
// is (confirmed). Anything but an explicit approval leaves the ask
// standing, and the call refused; declined reports that the person
// answered without approving (a client that did not answer is not a
// person who declined).
func (p *proxy) ask(ctx context.Context, ss *sdk.ServerSession, d *gate.Decision, event contract.Event, vouched bool) (_ *gate.Decision, declined bool) {
	res, err := ss.Elicit(ctx, question(d, event))
	if err != nil {
		p.Log.Warn("the MCP client did not answer gated's approval request", zap.String("decision_id", d.DecisionID), zap.Error(err))
		return d, false
	}
	if res.Action != "accept" || res.Content["approve"] != true {
		return d, true
	}
	return p.confirmed(ctx, d.DecisionID, event, vouched), false
}

// question is the elicitation that puts the ask d to the person.
func question(d *gate.Decision, event contract.Event) *sdk.ElicitParams {
	return &sdk.ElicitParams{Mode: "form", RequestedSchema: approveSchema,
		Message: fmt.Sprintf("The model wants to call %s. %s", event.ToolName, reason(asking, d))}
}

// inputRequired answers the ask d on 2026-07-28: the question, and the
// signed state binding the retry to this decision and this call.
//
// The result is decoded from JSON because the go-sdk marks a result
// input-required (resultType) only in its own tool dispatch, which a
// receiving middleware's result bypasses, and offers no setter.
func (p *proxy) inputRequired(d *gate.Decision, event contract.Event, key string) *sdk.CallToolResult {
	state, issued := p.asks.issue(stateAsk, d.DecisionID, key, "", time.Now())
	raw, err := json.Marshal(map[string]any{
		"resultType":    "input_required",
		"inputRequests": sdk.InputRequestMap{approvalInput: question(d, event)},
		"requestState":  state,
	})
	var res sdk.CallToolResult
	if err == nil && issued == nil {
		err = json.Unmarshal(raw, &res)
	}
	if err != nil || !res.NeedsInput() {
		return refused(d, nil)
	}
	return &res
}

// confirmed decides the call again with the person's approval of the ask
// decision asked: the event now carries the confirmation as verified
// approval evidence naming that decision, and this second decision is
// recorded like any other, so the audit trail holds both.
func (p *proxy) confirmed(ctx context.Context, asked string, event contract.Event, vouched bool) *gate.Decision {
	approved := event
	approved.EvidenceRefs = append(slices.Clone(event.EvidenceRefs), contract.RefDoc(route.EvidenceRef{
		SourceID: "mcp-proxy.elicitation." + asked, Kind: "approval", TrustTier: "verified", RedactionStatus: "redacted",
		Summary:    "the person at the MCP client approved this call when gated asked",
		Provenance: "mcp-proxy_elicitation", Freshness: route.Freshness{Status: "fresh"},
	}))
	approved.AuthorizationState = route.AuthConfirmed.String()
	return p.Decide(ctx, gate.Request{Event: approved.Doc(), CategoryVouched: vouched, AsksItself: true})
}

// passed passes an upstream's answer on: its JSON-RPC error whole (code,
// message and data, such as the URI of a resource it does not have), where
// the go-sdk's client wraps it in text of its own.
func passed[R sdk.Result](res R, err error) (sdk.Result, error) {
	if err == nil {
		return res, nil
	}
	if rpc, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return nil, rpc
	}
	return nil, err
}

// typed marks a result the proxy answers a client on 2026-07-28 with as
// complete (resultType, required there), unless it says what it is
// already: an input-required result, or an upstream's result that came
// with its type. The go-sdk marks only the results of its own tool,
// prompt and resource dispatch, which the proxy's forwarding bypasses,
// and has no setter: the result is decoded again from JSON with the field
// put first, where a resultType of the result's own, coming later, wins.
// A result that cannot be encoded so goes as it is.
func typed[R any, P interface {
	*R
	sdk.Result
}](ss *sdk.ServerSession, res P) P {
	if res == nil || ss == nil {
		return res
	}
	if ip := ss.InitializeParams(); ip != nil && ip.ProtocolVersion < multiRoundTrip {
		return res
	}
	raw, err := json.Marshal(res)
	if err != nil || len(raw) < 2 || raw[0] != '{' {
		return res
	}
	withType := []byte(`{"resultType":"complete"`)
	if len(raw) > 2 {
		withType = append(withType, ',')
	}
	withType = append(withType, raw[1:]...)
	var out R
	if json.Unmarshal(withType, &out) != nil {
		return res
	}
	return &out
}

// ownResult is a copy of an upstream's result without the protocol's own
// _meta keys (the upstream's io.modelcontextprotocol/serverInfo on
// 2026-07-28): the go-sdk adds the proxy's own only where none is, and the
// client must see whom it speaks to. A copy, as the upstream session may
// cache what it returned.
func ownResult[R any, P interface {
	*R
	sdk.Result
}](res P) P {
	if res == nil {
		return res
	}
	kept, dropped := withoutProtocolMeta(res.GetMeta())
	if !dropped {
		return res
	}
	cp := *res
	P(&cp).SetMeta(kept)
	return &cp
}

// withoutProtocolMeta is m less the _meta keys the protocol itself defines
// (io.modelcontextprotocol/…), and whether there were any.
func withoutProtocolMeta(m map[string]any) (map[string]any, bool) {
	kept := make(map[string]any, len(m))
	for k, v := range m {
		if !strings.HasPrefix(k, "io.modelcontextprotocol/") {
			kept[k] = v
		}
	}
	return kept, len(kept) != len(m)
}

// own drops from a request the proxy passes on the protocol's own _meta
// keys (io.modelcontextprotocol/…: the client's protocol version,
// capabilities and identity on 2026-07-28): the go-sdk keeps keys a
// request already has, so the upstream would read the client's where the
// proxy's session with it must speak for itself. Read the client's
// capabilities before (howToAsk).
func own[P sdk.Params](params P) P {
	if reflect.ValueOf(params).IsNil() {
		return params
	}
	if kept, dropped := withoutProtocolMeta(params.GetMeta()); dropped {
		params.SetMeta(kept)
	}
	return params
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

// upstreamError is what the log keeps of a failed forward: the code of the
// upstream's JSON-RPC error, whose message is the upstream's and may quote
// the arguments, or else the transport's error, which cannot.
func upstreamError(err error) zap.Field {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return zap.Int64("upstream_error_code", rpc.Code)
	}
	return zap.Error(err)
}

// arguments decodes a call's arguments as the HTTP surface decodes a body
// (UTF-8, nesting, one object, numbers kept exact). MCP requires an object;
// absent means empty. They are nested one level down in the event, so they
// may be one level less deep than an event. The proxy forwards the client's
// bytes, not an encoding of what it decided on, so the bytes must mean one
// thing: a key given twice (Go keeps the last, other parsers the first) is
// refused too.
func arguments(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return map[string]any{}, nil
	}
	if err := strictjson.Check(raw); err != nil {
		if derr, ok := errors.AsType[*strictjson.DuplicateError](err); ok {
			return nil, fmt.Errorf("its arguments give the key %s more than once, which the upstream MCP server may read otherwise than gated does",
				strconv.Quote(derr.Pointer))
		}
		return nil, errors.New("its arguments are not valid JSON (RFC 8259, UTF-8)")
	}
	args, err := eventcodec.DecodeAs(raw, eventcodec.DefaultMaxDepth-1, "the arguments")
	if err != nil {
		return nil, fmt.Errorf("its arguments cannot be decided on: %w", err)
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
