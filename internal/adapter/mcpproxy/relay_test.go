//lint:file-ignore SA1019 the upstream's logs are among what the proxy forwards
package mcpproxy_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// arrived waits for what the test expects to arrive; the deadline only
// keeps a missing notification from hanging the run.
func arrived[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never reached the client", what)
		panic("unreachable")
	}
}

func toolNames(t *testing.T, c *sdk.ClientSession) []string {
	t.Helper()
	res, err := c.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func TestProxyRelaysTheUpstreamsNotifications(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gotProgress := make(chan *sdk.ProgressNotificationParams, 1)
	up := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	// echo reports progress and answers, with what the client got, only once
	// the client has it, so the progress cannot arrive after the answer.
	sdk.AddTool(up, &sdk.Tool{Name: "echo"}, func(ctx context.Context, req *sdk.CallToolRequest, _ echoArgs) (*sdk.CallToolResult, any, error) {
		if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
			ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 2, Message: "halfway"}); err != nil {
			return nil, nil, err
		}
		select {
		case p := <-gotProgress:
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%v: %s", p.ProgressToken, p.Message)}}}, nil, nil
		case <-time.After(10 * time.Second):
			return nil, nil, errors.New("the progress never reached the client")
		}
	})
	up.AddPrompt(&sdk.Prompt{Name: "greet"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{}, nil
	})
	up.AddResource(&sdk.Resource{Name: "readme", URI: "file:///readme"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{}, nil
	})

	toolsChanged, promptsChanged, resourcesChanged := make(chan struct{}, 8), make(chan struct{}, 8), make(chan struct{}, 8)
	logged := make(chan *sdk.LoggingMessageParams, 8)
	f := newFixture(t, setup{upstream: up, hide: true, client: &sdk.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *sdk.ToolListChangedRequest) { toolsChanged <- struct{}{} },
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { promptsChanged <- struct{}{} },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { resourcesChanged <- struct{}{} },
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			gotProgress <- req.Params
		},
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) { logged <- req.Params },
	}})

	t.Run("tool list changes, filtered as before", func(t *testing.T) {
		if got := toolNames(t, f.client); !slices.Equal(got, []string{"echo"}) {
			t.Fatalf("tools %v", got)
		}
		// drop never executes, so --hide-refused leaves it out of the new list.
		for _, name := range []string{"drop", "other"} {
			up.AddTool(&sdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return &sdk.CallToolResult{}, nil
				})
		}
		arrived(t, toolsChanged, "tools/list_changed")
		if got := toolNames(t, f.client); !slices.Equal(got, []string{"echo", "other"}) {
			t.Fatalf("tools after the change %v", got)
		}
	})
	t.Run("prompt and resource list changes", func(t *testing.T) {
		up.RemovePrompts("greet")
		arrived(t, promptsChanged, "prompts/list_changed")
		up.RemoveResources("file:///readme")
		arrived(t, resourcesChanged, "resources/list_changed")
		if res, err := f.client.ListPrompts(ctx, nil); err != nil || len(res.Prompts) != 0 {
			t.Fatalf("prompts after the change %+v, %v", res, err)
		}
	})
	t.Run("progress goes to the caller with its own token", func(t *testing.T) {
		res, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"},
			Meta: sdk.Meta{"progressToken": "mine"}})
		if err != nil || res.IsError || text(t, res) != "mine: halfway" {
			t.Fatalf("the client did not get the upstream's progress with its token: %+v, %v", res, err)
		}
	})
	t.Run("log messages at the client's level", func(t *testing.T) {
		if f.client.InitializeResult().Capabilities.Logging == nil {
			t.Fatal("the proxy does not advertise the upstream's logging")
		}
		if err := f.client.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "warning"}); err != nil {
			t.Fatal(err)
		}
		for _, level := range []sdk.LoggingLevel{"info", "error"} {
			if err := f.upstreamSession.Log(ctx, &sdk.LoggingMessageParams{Level: level, Logger: "up", Data: string(level) + " message"}); err != nil {
				t.Fatal(err)
			}
		}
		if got := arrived(t, logged, "the log message"); got.Level != "error" || got.Data != "error message" || got.Logger != "up" {
			t.Fatalf("log message %+v", got)
		}
	})
}

// askingUpstream's echo asks the client what message says — sampling,
// elicitation or roots — and answers with what the client said, or the
// error the upstream got; rootsChanged hears the client's roots change.
func askingUpstream(rootsChanged chan<- struct{}) *sdk.Server {
	up := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, &sdk.ServerOptions{
		RootsListChangedHandler: func(context.Context, *sdk.RootsListChangedRequest) { rootsChanged <- struct{}{} },
	})
	sdk.AddTool(up, &sdk.Tool{Name: "echo"}, func(ctx context.Context, req *sdk.CallToolRequest, a echoArgs) (*sdk.CallToolResult, any, error) {
		var got string
		var err error
		switch a.Message {
		case "sampling":
			var res *sdk.CreateMessageResult
			if res, err = req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "secret question"}}}}); err == nil {
				got = res.Model + " " + res.Content.(*sdk.TextContent).Text
			}
		case "elicitation":
			var res *sdk.ElicitResult
			if res, err = req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "your name?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}); err == nil {
				got = fmt.Sprintf("%s %v", res.Action, res.Content["name"])
			}
		case "roots":
			var res *sdk.ListRootsResult
			if res, err = req.Session.ListRoots(ctx, nil); err == nil {
				for _, r := range res.Roots {
					got += r.URI + " "
				}
			}
		}
		if err != nil {
			got = "error: " + err.Error()
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: got}}}, nil, nil
	})
	return up
}

func TestProxyForwardsTheUpstreamsRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ask := func(t *testing.T, f *fixture, what string) string {
		t.Helper()
		res, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": what}})
		if err != nil || res.IsError {
			t.Fatalf("call %+v, %v", res, err)
		}
		return text(t, res)
	}
	t.Run("to a client that declared them", func(t *testing.T) {
		t.Parallel()
		rootsChanged := make(chan struct{}, 8)
		var sampled []string
		client := &sdk.ClientOptions{
			CreateMessageHandler: func(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
				sampled = append(sampled, req.Params.Messages[0].Content.(*sdk.TextContent).Text)
				return &sdk.CreateMessageResult{Model: "m1", Role: "assistant", Content: &sdk.TextContent{Text: "42"}}, nil
			},
			ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			},
		}
		core, logs := observer.New(zap.DebugLevel)
		f := newFixture(t, setup{upstream: askingUpstream(rootsChanged), upProto: "2025-11-25", proto: "2025-11-25", client: client,
			log: zap.New(core)})
		t.Cleanup(func() {
			// Not decided, so not recorded; and nothing of them logged.
			for _, e := range logs.All() {
				if strings.Contains(fmt.Sprint(e.Message, e.ContextMap()), "secret") {
					t.Errorf("the log holds what the upstream asked: %+v", e)
				}
			}
		})
		if got := ask(t, f, "sampling"); got != "m1 42" || !slices.Equal(sampled, []string{"secret question"}) {
			t.Fatalf("sampling %q, the client was asked %q", got, sampled)
		}
		if got := ask(t, f, "elicitation"); got != "accept Ada" {
			t.Fatalf("elicitation %q", got)
		}
		if got := ask(t, f, "roots"); got != "" {
			t.Fatalf("roots before the client has any %q", got)
		}
		f.app.AddRoots(&sdk.Root{URI: "file:///work"})
		arrived(t, rootsChanged, "roots/list_changed")
		if got := ask(t, f, "roots"); got != "file:///work " {
			t.Fatalf("the upstream got roots %q, not the client's", got)
		}
	})
	t.Run("not to a client that did not declare them", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, setup{upstream: askingUpstream(make(chan struct{}, 8)), upProto: "2025-11-25", proto: "2025-11-25",
			client: &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}}})
		for what, want := range map[string]string{
			"sampling":    "did not declare sampling",
			"elicitation": "does not support elicitation",
			"roots":       "did not declare roots",
		} {
			if got := ask(t, f, what); !strings.Contains(got, want) {
				t.Fatalf("%s: the upstream got %q, not an error saying %q", what, got, want)
			}
		}
	})
}

func TestProxyForwardsResourceSubscriptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up, upSubs := subscribable()
	updated := make(chan string, 8)
	f := newFixture(t, setup{upstream: up, upProto: "2025-11-25", proto: "2025-11-25", client: &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
	}})
	if caps := f.client.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
		t.Fatalf("the proxy does not advertise the upstream's subscriptions: %+v", caps.Resources)
	}
	if err := f.client.Subscribe(ctx, &sdk.SubscribeParams{URI: "file:///readme"}); err != nil {
		t.Fatal(err)
	}
	if got := arrived(t, upSubs, "the subscription"); got != "subscribe file:///readme" {
		t.Fatalf("the upstream got %q", got)
	}
	if err := up.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: "file:///readme"}); err != nil {
		t.Fatal(err)
	}
	if got := arrived(t, updated, "notifications/resources/updated"); got != "file:///readme" {
		t.Fatalf("updated %q", got)
	}
	if err := f.client.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: "file:///readme"}); err != nil {
		t.Fatal(err)
	}
	if got := arrived(t, upSubs, "the unsubscription"); got != "unsubscribe file:///readme" {
		t.Fatalf("the upstream got %q", got)
	}

	t.Run("not when the upstream takes none", func(t *testing.T) {
		f := newFixture(t, setup{proto: "2025-11-25"})
		if err := f.client.Subscribe(ctx, &sdk.SubscribeParams{URI: "file:///readme"}); err == nil {
			t.Fatal("the proxy took a subscription the upstream does not offer")
		}
	})
}

// A kill that stops the proxy's agent refuses a subscription too: the
// upstream's subscribe handler is its code, run undecided.
func TestProxyKillStopsSubscriptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up, upSubs := subscribable()
	f := newFixture(t, setup{upstream: up, upProto: "2025-11-25", proto: "2025-11-25",
		stopped: func(string, string) error { return errors.New("kill switch k1 (scope all) stops this request") }})
	if err := f.client.Subscribe(ctx, &sdk.SubscribeParams{URI: "file:///readme"}); err == nil || !strings.Contains(err.Error(), "kill switch k1") {
		t.Fatalf("a subscription under a kill: %v", err)
	}
	select {
	case got := <-upSubs:
		t.Fatalf("the killed subscription reached the upstream: %s", got)
	default:
	}
}

// subscribable is an upstream offering one resource, file:///readme, whose
// subscriptions and unsubscriptions it reports on the channel.
func subscribable() (*sdk.Server, chan string) {
	subs := make(chan string, 8)
	up := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, &sdk.ServerOptions{
		SubscribeHandler: func(_ context.Context, req *sdk.SubscribeRequest) error {
			subs <- "subscribe " + req.Params.URI
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *sdk.UnsubscribeRequest) error {
			subs <- "unsubscribe " + req.Params.URI
			return nil
		},
	})
	up.AddResource(&sdk.Resource{Name: "readme", URI: "file:///readme"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{}, nil
	})
	return up, subs
}
