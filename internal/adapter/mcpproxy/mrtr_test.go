//lint:file-ignore SA1019 sampling is deprecated (SEP-2577) but upstreams still ask for it, and the proxy passes it on
package mcpproxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatedhq/gated/internal/adapter/mcpproxy"
)

// mrtrUpstream is a go-sdk server on 2026-07-28 whose tool quiz (a read,
// by its annotations) asks the client for input by input-required results,
// as the argument what says; seen keeps the request state of every call
// that reached it.
type mrtrUpstream struct {
	mu   sync.Mutex
	seen []string
}

var nameSchema = map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}

func (u *mrtrUpstream) calls() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

func (u *mrtrUpstream) server() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "quiz", InputSchema: map[string]any{"type": "object"}, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct {
				What string `json:"what"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			u.mu.Lock()
			u.seen = append(u.seen, req.Params.RequestState)
			u.mu.Unlock()
			answered := func(key string) string {
				r, _ := req.Params.InputResponses[key].(*sdk.ElicitResult)
				if r == nil {
					return ""
				}
				return fmt.Sprint(r.Content["name"])
			}
			done := func(text string) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
			}
			asks := func(state string, reqs sdk.InputRequestMap) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{InputRequests: reqs, RequestState: state}, nil
			}
			elicit := func(q string) *sdk.ElicitParams { return &sdk.ElicitParams{Message: q, RequestedSchema: nameSchema} }
			switch args.What {
			case "elicit":
				if name := answered("name"); name != "" {
					return done("hello " + name + " state=" + req.Params.RequestState)
				}
				return asks("up-state-1", sdk.InputRequestMap{"name": elicit("your name?")})
			case "rounds":
				switch req.Params.RequestState {
				case "":
					return asks("r1", sdk.InputRequestMap{"name": elicit("first?")})
				case "r1":
					return asks("r2", sdk.InputRequestMap{"name": elicit("second?")})
				}
				return done("done after " + req.Params.RequestState + " with " + answered("name"))
			case "always":
				return asks("again", sdk.InputRequestMap{"name": elicit("again?")})
			case "sampling-anyway":
				// Asks whatever the client declared.
				return asks("", sdk.InputRequestMap{"llm": &sdk.CreateMessageParams{MaxTokens: 5,
					Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}}})
			case "caps":
				caps := req.ClientCapabilities()
				return done(fmt.Sprintf("elicitation=%t sampling=%t", caps != nil && caps.Elicitation != nil, caps != nil && caps.Sampling != nil))
			}
			return done("nothing asked")
		})
	s.AddPrompt(&sdk.Prompt{Name: "greet"}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		r, _ := req.Params.InputResponses["name"].(*sdk.ElicitResult)
		if r == nil {
			return &sdk.GetPromptResult{InputRequests: sdk.InputRequestMap{"name": &sdk.ElicitParams{Message: "whom?", RequestedSchema: nameSchema}},
				RequestState: "p1"}, nil
		}
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user",
			Content: &sdk.TextContent{Text: fmt.Sprintf("greet %v (%s)", r.Content["name"], req.Params.RequestState)}}}}, nil
	})
	return s
}

// answering is a client that answers every elicitation with the name Ada
// and keeps the messages it was asked.
func answering(asked *[]string, mu *sync.Mutex, opts *sdk.ClientOptions) *sdk.ClientOptions {
	if opts == nil {
		opts = &sdk.ClientOptions{}
	}
	opts.ElicitationHandler = func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		*asked = append(*asked, req.Params.Message)
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}
	return opts
}

func quiz(what string, extra ...any) map[string]any {
	args := map[string]any{"what": what}
	if len(extra) > 0 {
		args["n"] = extra[0]
	}
	return args
}

func rpcCode(err error) int64 {
	if rpc, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return rpc.Code
	}
	return 0
}

// TestProxyPassesUpstreamInputOn: to a client on 2026-07-28, the
// upstream's input requests are the proxy's own input-required result,
// the upstream's state inside a state the proxy signs; the retry reaches
// the upstream with its own state and the client's answers, and is not
// decided again. A state the proxy did not issue for this call, or has
// seen already, is refused (-32602) and nothing is forwarded.
func TestProxyPassesUpstreamInputOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := &mrtrUpstream{}
	var mu sync.Mutex
	var asked []string
	f := newFixture(t, setup{trust: true, upstream: up.server(),
		client: answering(&asked, &mu, &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})})
	first := func(args map[string]any) string {
		t.Helper()
		res, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "quiz", Arguments: args})
		if err != nil || !res.NeedsInput() || len(res.Content) != 0 {
			t.Fatalf("not input-required: %+v, %v", res, err)
		}
		q, ok := res.InputRequests["name"].(*sdk.ElicitParams)
		if !ok || len(res.InputRequests) != 1 || q.Message != mcpproxy.UpstreamElicitationPrefix+"your name?" {
			t.Fatalf("input requests %+v", res.InputRequests)
		}
		if !strings.HasPrefix(res.RequestState, "gated1.") || strings.Contains(res.RequestState, "up-state-1") {
			t.Fatalf("the upstream's state is not wrapped: %q", res.RequestState)
		}
		return res.RequestState
	}
	ada := sdk.InputResponseMap{"name": &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}}
	retry := func(args map[string]any, state string) (*sdk.CallToolResult, error) {
		return f.client.CallTool(ctx, &sdk.CallToolParams{Name: "quiz", Arguments: args, InputResponses: ada, RequestState: state})
	}
	state := first(quiz("elicit"))
	if f.decided.Load() != 1 {
		t.Fatalf("decided %d times", f.decided.Load())
	}
	res, err := retry(quiz("elicit"), state)
	if err != nil || res.NeedsInput() || res.IsError || text(t, res) != "hello Ada state=up-state-1" {
		t.Fatalf("the retry: %+v, %v", res, err)
	}
	if f.decided.Load() != 1 || len(asked) != 0 {
		t.Fatalf("the retry was decided again (%d decisions), or the client's handler asked %q", f.decided.Load(), asked)
	}
	calls := len(up.calls())
	state = first(quiz("elicit", 1))
	for _, tc := range []struct {
		name  string
		args  map[string]any
		state string
		want  string
	}{
		{"a tampered state", quiz("elicit", 1), state + "-TAMPERED", "not one this gated mcp-proxy issued"},
		{"the upstream's own state", quiz("elicit", 1), "up-state-1", "not one this gated mcp-proxy issued"},
		{"other arguments", quiz("elicit", 2), state, "issued for another call"},
		{"another tool", nil, state, "issued for another call"},
	} {
		var err error
		if tc.args == nil {
			_, err = f.client.CallTool(ctx, &sdk.CallToolParams{Name: "peek", Arguments: map[string]any{}, InputResponses: ada, RequestState: tc.state})
		} else {
			_, err = retry(tc.args, tc.state)
		}
		if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(fmt.Sprint(err), tc.want) {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
	if got := len(up.calls()); got != calls+1 {
		t.Fatalf("refused retries reached the upstream: %d calls, want %d", got, calls+1)
	}
	if res, err := retry(quiz("elicit", 1), state); err != nil || text(t, res) != "hello Ada state=up-state-1" {
		t.Fatalf("the retry: %+v, %v", res, err)
	}
	if _, err := retry(quiz("elicit", 1), state); rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "answered already") {
		t.Fatalf("a replayed state: %v", err)
	}
	if got := len(up.calls()); got != calls+2 {
		t.Fatalf("the replay reached the upstream: %d calls, want %d", got, calls+2)
	}
}

// TestProxyUpstreamInputRounds: the go-sdk's own client on 2026-07-28
// answers the passed-on requests and retries, round after round, through
// the proxy; a client before 2026-07-28 is asked by request by the proxy,
// which retries the upstream, at most ten rounds. Either way the call is
// decided once, and the person sees the upstream's questions marked as its
// own; prompts/get is passed on likewise, undecided.
func TestProxyUpstreamInputRounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, proto := range []string{"", "2025-11-25"} {
		t.Run("protocol "+proto, func(t *testing.T) {
			t.Parallel()
			up := &mrtrUpstream{}
			var mu sync.Mutex
			var asked []string
			f := newFixture(t, setup{trust: true, upstream: up.server(), proto: proto, client: answering(&asked, &mu, nil)})
			res, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "quiz", Arguments: quiz("rounds")})
			if err != nil || res.IsError || text(t, res) != "done after r2 with Ada" {
				t.Fatalf("rounds: %+v, %v", res, err)
			}
			mu.Lock()
			if f.decided.Load() != 1 || strings.Join(asked, "|") != mcpproxy.UpstreamElicitationPrefix+"first?|"+mcpproxy.UpstreamElicitationPrefix+"second?" {
				t.Errorf("decided %d times; the person was asked %q", f.decided.Load(), asked)
			}
			mu.Unlock()
			if got := strings.Join(up.calls(), ","); got != ",r1,r2" {
				t.Errorf("the upstream got the states %q", got)
			}
			p, err := f.client.GetPrompt(ctx, &sdk.GetPromptParams{Name: "greet"})
			if err != nil || len(p.Messages) != 1 || p.Messages[0].Content.(*sdk.TextContent).Text != "greet Ada (p1)" {
				t.Fatalf("prompt: %+v, %v", p, err)
			}
			if f.decided.Load() != 1 {
				t.Errorf("prompts/get was decided")
			}
		})
	}
	t.Run("bounded before 2026-07-28", func(t *testing.T) {
		t.Parallel()
		up := &mrtrUpstream{}
		var mu sync.Mutex
		var asked []string
		f := newFixture(t, setup{trust: true, upstream: up.server(), proto: "2025-11-25", client: answering(&asked, &mu, nil)})
		res, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "quiz", Arguments: quiz("always")})
		if err != nil || !res.IsError || !strings.Contains(text(t, res), "asked for input more than 10 times") {
			t.Fatalf("an upstream that never stops asking: %+v, %v", res, err)
		}
		if got := len(up.calls()); got != 11 {
			t.Fatalf("the upstream was called %d times, want 11", got)
		}
	})
}

// TestProxyUpstreamInputCapabilities: the upstream reads in each request
// what the client declared it can be asked (less elicitation the proxy
// refuses to pass on); an upstream that asks the client for what it did
// not declare gets the client SEP-2575's -32021, naming what is missing.
func TestProxyUpstreamInputCapabilities(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		refuse bool
		want   string
	}{
		{"passed on", false, "elicitation=true sampling=false"},
		{"refused", true, "elicitation=false sampling=false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := &mrtrUpstream{}
			var mu sync.Mutex
			var asked []string
			f := newFixture(t, setup{trust: true, upstream: up.server(), refuseElicitation: tc.refuse, client: answering(&asked, &mu, nil)})
			res, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "quiz", Arguments: quiz("caps")})
			if err != nil || text(t, res) != tc.want {
				t.Fatalf("the upstream read %+v, %v", res, err)
			}
			_, err = f.client.CallTool(ctx, &sdk.CallToolParams{Name: "quiz", Arguments: quiz("sampling-anyway")})
			rpc, _ := errors.AsType[*jsonrpc.Error](err)
			var data sdk.MissingRequiredClientCapabilityData
			if rpc == nil || rpc.Code != sdk.CodeMissingRequiredClientCapabilities || json.Unmarshal(rpc.Data, &data) != nil ||
				data.RequiredCapabilities == nil || data.RequiredCapabilities.Sampling == nil || data.RequiredCapabilities.Elicitation != nil {
				t.Fatalf("sampling the client did not declare: %v (%s)", err, rpcData(rpc))
			}
		})
	}
}

func rpcData(rpc *jsonrpc.Error) string {
	if rpc == nil {
		return ""
	}
	return string(rpc.Data)
}

// TestProxyUpstreamInputOverHTTP: over the proxy's HTTP handler, a go-sdk
// client on 2026-07-28 (stateless: the proxy cannot send it a request)
// gets the upstream's questions as input-required results and answers
// them round after round; one on 2025-11-25 (a session) is asked by
// request. A question the client cannot take is -32021, as HTTP 400.
func TestProxyUpstreamInputOverHTTP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := &mrtrUpstream{}
	f := newFixture(t, setup{trust: true, upstream: up.server()})
	srv := httptest.NewServer(mcpproxy.Handler(f.server, f.upstream, 1<<20))
	t.Cleanup(srv.Close)
	for _, proto := range []string{"2026-07-28", "2025-11-25"} {
		var mu sync.Mutex
		var asked []string
		c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, answering(&asked, &mu, nil))
		s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL}, &sdk.ClientSessionOptions{ProtocolVersion: proto})
		if err != nil {
			t.Fatalf("%s: %v", proto, err)
		}
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "quiz", Arguments: quiz("rounds")})
		if err != nil || res.IsError || text(t, res) != "done after r2 with Ada" || len(asked) != 2 {
			t.Fatalf("%s: %+v, %v, asked %q", proto, res, err, asked)
		}
		// Before 2026-07-28 the proxy cannot ask it, as it could not the
		// upstream's request: a tool error.
		res, err = s.CallTool(ctx, &sdk.CallToolParams{Name: "quiz", Arguments: quiz("sampling-anyway")})
		switch {
		case proto == "2026-07-28" && rpcCode(err) != sdk.CodeMissingRequiredClientCapabilities:
			t.Fatalf("%s: sampling the client did not declare: %+v, %v", proto, res, err)
		case proto == "2025-11-25" && (err != nil || !res.IsError || !strings.Contains(text(t, res), "did not declare sampling")):
			t.Fatalf("%s: sampling the client did not declare: %+v, %v", proto, res, err)
		}
		_ = s.Close()
	}
	// The status, as a client on 2026-07-28 reads it.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"quiz","arguments":{"what":"sampling-anyway"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "quiz")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(got), "-32021") {
		t.Fatalf("HTTP %d: %s", resp.StatusCode, got)
	}
}

// A retry carrying the upstream's state is not decided again, but a kill
// set since the call was allowed stops it: the upstream runs the tool on
// the retry, and it passed on through a kill of the tool.
func TestProxyKillStopsARetryWithState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := &mrtrUpstream{}
	var mu sync.Mutex
	var asked []string
	var killed atomic.Bool
	f := newFixture(t, setup{trust: true, upstream: up.server(),
		client: answering(&asked, &mu, &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}}),
		stopped: func(_, tool string) error {
			if killed.Load() && tool == "mcp__up__quiz" {
				return errors.New("kill switch k1 (scope tool) stops this request")
			}
			return nil
		}})
	res, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "quiz", Arguments: quiz("elicit")})
	if err != nil || !res.NeedsInput() {
		t.Fatalf("not input-required: %+v, %v", res, err)
	}
	calls := len(up.calls())
	killed.Store(true)
	ada := sdk.InputResponseMap{"name": &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}}
	res, err = f.client.CallTool(ctx, &sdk.CallToolParams{Name: "quiz", Arguments: quiz("elicit"), InputResponses: ada, RequestState: res.RequestState})
	if err != nil || !res.IsError || !strings.Contains(text(t, res), "kill switch k1") {
		t.Fatalf("the retry after a kill: %+v, %v", res, err)
	}
	if got := len(up.calls()); got != calls {
		t.Fatalf("the killed retry reached the upstream: %d calls, want %d", got, calls)
	}
}
