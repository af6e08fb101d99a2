//lint:file-ignore SA1019 the upstream's logs are among what the proxy forwards
package mcpproxy_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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
