package mcpproxy

import (
	"context"
	"fmt"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// subscriptions are the clients subscribed to each of the upstream's
// resources through the proxy's one upstream session: the upstream is
// subscribed while any client is.
type subscriptions struct {
	mu    sync.Mutex
	byURI map[string]map[*sdk.ServerSession]bool
}

// relaySubscriptions has the proxy's server take subscriptions when the
// upstream does; the server then sends the upstream's resource updates to
// the clients subscribed.
func (p *proxy) relaySubscriptions(opts *sdk.ServerOptions, up *sdk.ServerCapabilities) {
	if up == nil || up.Resources == nil || !up.Resources.Subscribe {
		return
	}
	p.subs.byURI = map[string]map[*sdk.ServerSession]bool{}
	opts.SubscribeHandler = p.subscribe
	opts.UnsubscribeHandler = p.unsubscribe
}

func (p *proxy) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	p.subs.mu.Lock()
	defer p.subs.mu.Unlock()
	uri := req.Params.URI
	if len(p.subs.byURI[uri]) == 0 {
		if err := p.Upstream.Subscribe(ctx, req.Params); err != nil {
			return fmt.Errorf("the upstream MCP server did not subscribe to %s: %w", uri, err)
		}
		p.subs.byURI[uri] = map[*sdk.ServerSession]bool{}
	}
	p.subs.byURI[uri][req.Session] = true
	return nil
}

func (p *proxy) unsubscribe(ctx context.Context, req *sdk.UnsubscribeRequest) error {
	p.subs.mu.Lock()
	defer p.subs.mu.Unlock()
	uri := req.Params.URI
	subscribed := p.subs.byURI[uri]
	if !subscribed[req.Session] {
		return nil
	}
	if len(subscribed) == 1 {
		if err := p.Upstream.Unsubscribe(ctx, req.Params); err != nil {
			return fmt.Errorf("the upstream MCP server did not unsubscribe from %s: %w", uri, err)
		}
		delete(p.subs.byURI, uri)
		return nil
	}
	delete(subscribed, req.Session)
	return nil
}

// resourceUpdated passes the upstream's update on to the clients
// subscribed to the resource.
func (d *Downstream) resourceUpdated(ctx context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
	if s := d.bound(); s != nil {
		_ = s.ResourceUpdated(ctx, req.Params)
	}
}
