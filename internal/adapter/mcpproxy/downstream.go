//lint:file-ignore SA1019 logging, sampling and roots are deprecated (SEP-2577) but upstreams still use them, and forwarding them is the proxy's job
package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// Downstream passes on to the proxy's clients what the upstream sends
// them. It exists before the upstream is connected, since the upstream's
// client takes its handlers at construction, and New binds it to the
// proxy's server. The proxy has one upstream session for all its clients:
// notifications about the upstream go to every client; progress goes to
// the client whose request it is about.
type Downstream struct {
	// RefuseElicitation answers every elicitation/create of the upstream
	// with an error instead of passing it on (set before connecting).
	RefuseElicitation bool

	mu       sync.Mutex
	server   *sdk.Server
	client   *sdk.Client
	log      *zap.Logger
	progress map[string]progressTarget
	nextID   uint64
}

// progressTarget is a client's request that the upstream reports progress
// of: the client's session, its own token, and the request's context, which
// tells the go-sdk the progress belongs to that request: a stateless
// session (protocol 2026-07-28) can send a notification only on the stream
// of the request it is about.
type progressTarget struct {
	session *sdk.ServerSession
	token   any
	request context.Context
}

// NewDownstream returns a Downstream bound to no server yet.
func NewDownstream() *Downstream {
	return &Downstream{progress: map[string]progressTarget{}, log: zap.NewNop()}
}

// Client is the client the proxy connects to the upstream with: it relays
// the upstream's notifications and requests to the proxy's clients. It
// declares sampling (with tools), elicitation (form and URL) and roots
// with list changes before any client of the proxy has declared anything,
// since the upstream is connected first; a request a client did not
// declare it takes is an error to the upstream. On 2026-07-28 the upstream
// reads in each request what the client it serves declared (toUpstream).
// The client leaves the upstream's input-required results to the proxy
// (rounds.go), which passes them on to a client on 2026-07-28: the
// go-sdk's own handling would ask the client by request, which such a
// client cannot take.
func (d *Downstream) Client(impl *sdk.Implementation) *sdk.Client {
	c := sdk.NewClient(impl, &sdk.ClientOptions{
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		Capabilities: &sdk.ClientCapabilities{
			RootsV2:     &sdk.RootCapabilities{ListChanged: true},
			Sampling:    &sdk.SamplingCapabilities{Tools: &sdk.SamplingToolsCapabilities{}},
			Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}},
		},
		CreateMessageWithToolsHandler: d.sample,
		ElicitationHandler:            d.elicit,
		ElicitationCompleteHandler:    d.elicitationCompleted,
		ToolListChangedHandler:        func(context.Context, *sdk.ToolListChangedRequest) { d.listChanged(tools) },
		PromptListChangedHandler:      func(context.Context, *sdk.PromptListChangedRequest) { d.listChanged(prompts) },
		ResourceListChangedHandler:    func(context.Context, *sdk.ResourceListChangedRequest) { d.listChanged(resources) },
		ResourceUpdatedHandler:        d.resourceUpdated,
		ProgressNotificationHandler:   d.progressed,
		LoggingMessageHandler:         d.logged,
	})
	// The go-sdk answers roots/list from the client's own roots; the
	// proxy's are its client's.
	c.AddReceivingMiddleware(d.roots)
	d.mu.Lock()
	d.client = c
	d.mu.Unlock()
	return c
}

func (d *Downstream) bind(s *sdk.Server, log *zap.Logger) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.server, d.log = s, log
}

func (d *Downstream) bound() *sdk.Server {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.server
}

type feature int

const (
	tools feature = iota
	prompts
	resources
)

// placeholder names the feature the proxy adds and at once removes to
// have the go-sdk send its clients a list_changed notification, which it
// offers no other way to send. Its lists are the upstream's, answered by
// the forwarding middleware, so no client ever sees the placeholder.
const placeholder = "gated-mcp-proxy-list-changed"

// listChanged tells the proxy's clients a list of the upstream's changed,
// so they list it again through the proxy (and --hide-refused filters the
// new list as it did the old).
func (d *Downstream) listChanged(f feature) {
	s := d.bound()
	if s == nil {
		return
	}
	switch f {
	case tools:
		s.AddTool(&sdk.Tool{Name: placeholder, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, errPlaceholder })
		s.RemoveTools(placeholder)
	case prompts:
		s.AddPrompt(&sdk.Prompt{Name: placeholder},
			func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) { return nil, errPlaceholder })
		s.RemovePrompts(placeholder)
	case resources:
		s.AddResource(&sdk.Resource{Name: placeholder, URI: "gated:" + placeholder},
			func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				return nil, errPlaceholder
			})
		s.RemoveResources("gated:" + placeholder)
	}
}

var errPlaceholder = fmt.Errorf("%s is no feature of the upstream", placeholder)

// logged passes an upstream's log message on to every client; each
// client's own logging/setLevel decides whether it gets it.
func (d *Downstream) logged(ctx context.Context, req *sdk.LoggingMessageRequest) {
	s := d.bound()
	if s == nil {
		return
	}
	for ss := range s.Sessions() {
		if err := ss.Log(ctx, req.Params); err != nil {
			d.log.Debug("a client did not take the upstream's log message", zap.Error(err))
		}
	}
}

// track gives a client's request that asks for progress a token of the
// proxy's own for the upstream, since two clients may choose the same
// token; the returned func forgets it once the request is answered.
func (d *Downstream) track(ctx context.Context, ss *sdk.ServerSession, params sdk.RequestParams) func() {
	// A request sent without params (the TypeScript SDK's tools/list and
	// notifications/initialized) arrives as a typed nil, whose getters panic.
	if ss == nil || params == nil || reflect.ValueOf(params).IsNil() {
		return func() {}
	}
	token := params.GetProgressToken()
	if token == nil {
		return func() {}
	}
	d.mu.Lock()
	d.nextID++
	id := fmt.Sprintf("gated-%d", d.nextID)
	d.progress[id] = progressTarget{session: ss, token: token, request: ctx}
	d.mu.Unlock()
	params.SetProgressToken(id)
	return func() {
		d.mu.Lock()
		delete(d.progress, id)
		d.mu.Unlock()
	}
}

// progressed passes the upstream's progress on to the client whose request
// it reports on, with the client's own token; progress on anything else
// has no one to go to.
func (d *Downstream) progressed(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	id, _ := req.Params.ProgressToken.(string)
	d.mu.Lock()
	target, ok := d.progress[id]
	d.mu.Unlock()
	if !ok {
		return
	}
	p := *req.Params
	p.ProgressToken = target.token
	// The upstream's context is not the client's request's: the client's
	// request's routes the notification, and ends with it.
	if err := target.session.NotifyProgress(target.request, &p); err != nil {
		d.log.Debug("a client did not take the upstream's progress", zap.Error(err))
	}
}

// relayedLogging advertises logging to the clients when the upstream does.
func relayedLogging(caps *sdk.ServerCapabilities, up *sdk.ServerCapabilities) {
	caps.Logging = up.Logging
}

// setLevel keeps the client's level, by which the proxy passes on the
// upstream's log messages, and has the upstream send all of them: with
// several clients, each has its own level.
func (p *proxy) setLevel(ctx context.Context, next sdk.MethodHandler, method string, req sdk.Request) (sdk.Result, error) {
	res, err := next(ctx, method, req)
	if err != nil {
		return res, err
	}
	if up := p.Upstream.InitializeResult(); up != nil && up.Capabilities != nil && up.Capabilities.Logging != nil {
		if err := p.Upstream.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
			return nil, fmt.Errorf("the upstream MCP server did not take the logging level: %w", err)
		}
	}
	return res, nil
}

// asked is the one client the upstream's request goes to. A request from
// the upstream does not say which client's call it serves, so with several
// clients (over HTTP) none is asked: the wrong person could be.
func (d *Downstream) asked(what string) (*sdk.ServerSession, error) {
	s := d.bound()
	if s == nil {
		return nil, fmt.Errorf("gated mcp-proxy has no client to ask for %s yet", what)
	}
	var sessions []*sdk.ServerSession
	for ss := range s.Sessions() {
		sessions = append(sessions, ss)
	}
	if len(sessions) != 1 {
		return nil, fmt.Errorf("gated mcp-proxy has %d clients and cannot tell which one the upstream asks for %s", len(sessions), what)
	}
	return sessions[0], nil
}

// declared is the client's capabilities, never nil.
func declared(ss *sdk.ServerSession) *sdk.ClientCapabilities {
	if ip := ss.InitializeParams(); ip != nil && ip.Capabilities != nil {
		return ip.Capabilities
	}
	return &sdk.ClientCapabilities{}
}

// sample forwards the upstream's sampling/createMessage. It is no tool
// call: gated does not decide it, and the proxy logs nothing of it.
func (d *Downstream) sample(ctx context.Context, req *sdk.CreateMessageWithToolsRequest) (*sdk.CreateMessageWithToolsResult, error) {
	ss, err := d.asked("sampling")
	if err != nil {
		return nil, err
	}
	caps := declared(ss).Sampling
	if caps == nil {
		return nil, errors.New("the MCP client behind gated mcp-proxy did not declare sampling")
	}
	if caps.Tools == nil && (len(req.Params.Tools) > 0 || req.Params.ToolChoice != nil) {
		return nil, errors.New("the MCP client behind gated mcp-proxy did not declare sampling with tools")
	}
	return ss.CreateMessageWithTools(ctx, req.Params)
}

// UpstreamElicitationPrefix starts the message of every elicitation the
// proxy passes on: the person sees that the upstream asks, not gated, so
// an upstream cannot pass its question off as gated's approval request.
const UpstreamElicitationPrefix = "[Asked by the upstream MCP server behind gated, not by gated: this is not an approval of gated's.] "

// elicit forwards the upstream's elicitation/create, its message marked
// as the upstream's, or refuses it (RefuseElicitation); the go-sdk
// refuses a mode the client did not declare. Not decided by gated, and
// not logged.
func (d *Downstream) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	if d.RefuseElicitation {
		return nil, errRefusedElicitation
	}
	ss, err := d.asked("elicitation")
	if err != nil {
		return nil, err
	}
	params := *req.Params
	params.Message = UpstreamElicitationPrefix + params.Message
	return ss.Elicit(ctx, &params)
}

// elicitationCompleted tells the client a URL elicitation it was given
// has completed.
func (d *Downstream) elicitationCompleted(ctx context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
	ss, err := d.asked("elicitation")
	if err != nil {
		return
	}
	if err := ss.NotifyElicitationComplete(ctx, req.Params); err != nil {
		d.log.Debug("the client did not take the upstream's elicitation completion", zap.Error(err))
	}
}

// roots answers the upstream's roots/list with the client's roots.
func (d *Downstream) roots(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		params, ok := req.GetParams().(*sdk.ListRootsParams)
		if !ok {
			return next(ctx, method, req)
		}
		ss, err := d.asked("its roots")
		if err != nil {
			return nil, err
		}
		if declared(ss).RootsV2 == nil {
			return nil, errors.New("the MCP client behind gated mcp-proxy did not declare roots")
		}
		return ss.ListRoots(ctx, params)
	}
}

// relayRootChanges has the proxy's server pass a client's roots changes on.
func (d *Downstream) relayRootChanges(opts *sdk.ServerOptions) {
	opts.RootsListChangedHandler = d.rootsChanged
}

// rootsChanged tells the upstream the client's roots changed. The go-sdk
// sends roots/list_changed only when the client's own roots change: the
// proxy adds and at once removes a placeholder root, which roots never
// lists since it answers roots/list from the client.
func (d *Downstream) rootsChanged(context.Context, *sdk.RootsListChangedRequest) {
	d.mu.Lock()
	c := d.client
	d.mu.Unlock()
	if c == nil {
		return
	}
	c.AddRoots(&sdk.Root{URI: "gated:" + placeholder})
	c.RemoveRoots("gated:" + placeholder)
}
