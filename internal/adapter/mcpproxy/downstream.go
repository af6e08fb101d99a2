// The upstream's logs, progress and requests are the go-sdk's deprecated
// features (SEP-2577) the upstream may still use: forwarding them is the
// proxy's job while they last.
//
//lint:file-ignore SA1019 the proxy forwards what upstreams still send
package mcpproxy

import (
	"context"
	"fmt"
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
	mu       sync.Mutex
	server   *sdk.Server
	log      *zap.Logger
	progress map[string]progressTarget
	nextID   uint64
}

// progressTarget is a client's request that the upstream reports progress
// of: the client's session and its own token.
type progressTarget struct {
	session *sdk.ServerSession
	token   any
}

// NewDownstream returns a Downstream bound to no server yet.
func NewDownstream() *Downstream {
	return &Downstream{progress: map[string]progressTarget{}, log: zap.NewNop()}
}

// Client is the client the proxy connects to the upstream with: it relays
// the upstream's notifications to the proxy's clients.
func (d *Downstream) Client(impl *sdk.Implementation) *sdk.Client {
	return sdk.NewClient(impl, &sdk.ClientOptions{
		ToolListChangedHandler:      func(context.Context, *sdk.ToolListChangedRequest) { d.listChanged(tools) },
		PromptListChangedHandler:    func(context.Context, *sdk.PromptListChangedRequest) { d.listChanged(prompts) },
		ResourceListChangedHandler:  func(context.Context, *sdk.ResourceListChangedRequest) { d.listChanged(resources) },
		ProgressNotificationHandler: d.progressed,
		LoggingMessageHandler:       d.logged,
	})
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
func (d *Downstream) track(ss *sdk.ServerSession, params sdk.RequestParams) func() {
	token := params.GetProgressToken()
	if token == nil || ss == nil {
		return func() {}
	}
	d.mu.Lock()
	d.nextID++
	id := fmt.Sprintf("gated-%d", d.nextID)
	d.progress[id] = progressTarget{session: ss, token: token}
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
func (d *Downstream) progressed(ctx context.Context, req *sdk.ProgressNotificationClientRequest) {
	id, _ := req.Params.ProgressToken.(string)
	d.mu.Lock()
	target, ok := d.progress[id]
	d.mu.Unlock()
	if !ok {
		return
	}
	p := *req.Params
	p.ProgressToken = target.token
	if err := target.session.NotifyProgress(ctx, &p); err != nil {
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
