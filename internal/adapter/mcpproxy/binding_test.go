package mcpproxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatedhq/gated/internal/adapter/mcpproxy"
	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/eventcodec"
)

// rawUpstream's tools take any object and keep the arguments they were
// called with, byte for byte: "other" answers "done", "big" answers with
// as many bytes of text as its size argument says.
type rawUpstream struct {
	mu   sync.Mutex
	seen []string
}

func (u *rawUpstream) server() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	schema := map[string]any{"type": "object"}
	s.AddTool(&sdk.Tool{Name: "other", InputSchema: schema}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.seen = append(u.seen, string(req.Params.Arguments))
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "big", InputSchema: schema, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var a struct{ Size int }
			if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
				return nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", a.Size)}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "big_failure", InputSchema: schema, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var a struct{ Size int }
			if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
				return nil, err
			}
			return nil, &jsonrpc.Error{Code: -32001, Message: strings.Repeat("x", a.Size)}
		})
	return s
}

func (u *rawUpstream) calls() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

// Issue 25 §4: the proxy decided on Go's parse of the arguments (the last
// of a repeated key) and forwarded the raw bytes, which an upstream may
// read with the first. A repeated key, at any depth, is now a tool error
// naming it, and nothing reaches the upstream.
func TestProxyRefusesDuplicateArgumentKeys(t *testing.T) {
	t.Parallel()
	up := &rawUpstream{}
	f := newFixture(t, setup{trust: true, upstream: up.server()})
	for args, key := range map[string]string{
		`{"path":"/tmp/scratch","path":"/etc/passwd"}`:       `"/path"`,
		`{"opts":{"force":false,"x":1,"force":true}}`:        `"/opts/force"`,
		`{"list":[{"a":1},{"b":2,"b":3}]}`:                   `"/list/1/b"`,
		`{"p\u0061th":"/tmp","path":"/etc"}`:                 `"/path"`,
		`{"a":{"b":{"c":{"d":[[{"e":1,"e":1}]]}}},"z":true}`: `"/a/b/c/d/0/0/e"`,
	} {
		res, err := f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "other", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, res); !res.IsError || !strings.Contains(got, "gated refuses this call") || !strings.Contains(got, "give the key "+key+" more than once") {
			t.Errorf("arguments %s: %v %q", args, res.IsError, got)
		}
	}
	if c := up.calls(); len(c) != 0 {
		t.Fatalf("the upstream was called with %q", c)
	}
	// The same call without the repeat is decided as usual, and its bytes
	// reach the upstream as sent.
	res, err := f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "other", Arguments: json.RawMessage(`{"path":"/etc/passwd"}`)})
	if err != nil || !res.IsError || !strings.Contains(text(t, res), "needs a person to approve") {
		t.Fatalf("a call without repeated keys: %+v, %v", res, err)
	}
}

// Issue 26 §1: the proxy decoded arguments without the body's checks, so
// arguments nested deeper than any event may be were decided on. They are
// now refused as a body is, one level less deep since the event holds
// them, and nothing reaches the upstream.
func TestProxyRefusesTooDeepArguments(t *testing.T) {
	t.Parallel()
	up := &rawUpstream{}
	f := newFixture(t, setup{trust: true, upstream: up.server()})
	nested := func(depth int) json.RawMessage {
		return json.RawMessage(strings.Repeat(`{"a":`, depth-1) + `{"path":"/etc/passwd"}` + strings.Repeat("}", depth-1))
	}
	limit := eventcodec.DefaultMaxDepth - 1
	res, err := f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "other", Arguments: nested(limit + 1)})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); !res.IsError || !strings.Contains(got, "gated refuses this call") || !strings.Contains(got, fmt.Sprintf("nesting exceeds %d levels", limit)) {
		t.Errorf("too deep: %v %q", res.IsError, got)
	}
	res, err = f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "other", Arguments: nested(limit)})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); strings.Contains(got, "nesting") || !strings.Contains(got, "decision") {
		t.Errorf("at the limit, the call is not decided: %q", got)
	}
	if c := up.calls(); slices.Contains(c, string(nested(limit+1))) {
		t.Fatal("the upstream was called with the arguments that are too deep")
	}
}

// Issue 25 §4: the proxy remembers an approval by the call's key, which
// read numbers as doubles: approved for account 1234567890123456789, a
// call with 1234567890123456800 was handed the approval. Now it is
// another call, which opens an approval of its own and does not run.
func TestProxyRemembersCallsByExactNumbers(t *testing.T) {
	t.Parallel()
	up := &rawUpstream{}
	f := newFixture(t, setup{trust: true, approvals: true, upstream: up.server()})
	call := func(args string) (*sdk.CallToolResult, string, string) {
		t.Helper()
		var m map[string]any
		d := json.NewDecoder(strings.NewReader(args))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		return f.call(t, m)
	}
	_, got, id := call(`{"account":1234567890123456789}`)
	if id == "" {
		t.Fatalf("the ask opens no approval: %q", got)
	}
	if _, err := f.approvals.Decide(context.Background(), id, approval.Identity{TokenName: "alice", Principals: []string{"operator://alice"}},
		true, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{`{"account":1234567890123456800}`, `{"account":1234567890123456788}`} {
		res, got, other := call(args)
		if !res.IsError || other == "" || other == id {
			t.Fatalf("%s took the approval of account 1234567890123456789: %q", args, got)
		}
	}
	if c := up.calls(); len(c) != 0 {
		t.Fatalf("the upstream ran %q", c)
	}
	// Another spelling of the approved number is the approved call.
	if res, got, _ := call(`{"account":1.234567890123456789e18}`); res.IsError {
		t.Fatalf("the approved call: %q", got)
	}
	if c := up.calls(); len(c) != 1 || c[0] != `{"account":1.234567890123456789e18}` {
		t.Fatalf("the upstream got %q, not the bytes the client sent", c)
	}
}

// Issue 25 §7: the proxy passed on whatever an upstream answered. A
// result over --max-result-bytes is now a tool error saying so; one
// within it passes unchanged.
func TestProxyCapsUpstreamResults(t *testing.T) {
	t.Parallel()
	up := &rawUpstream{}
	f := newFixture(t, setup{trust: true, upstream: up.server(), maxResult: 64 << 10})
	big := func(size int) *sdk.CallToolResult {
		t.Helper()
		res, err := f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "big", Arguments: map[string]any{"size": size}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := big(60 << 10); res.IsError || len(text(t, res)) != 60<<10 {
		t.Fatalf("a result within the cap: error %v, %d bytes", res.IsError, len(text(t, res)))
	}
	res := big(1 << 20)
	if got := text(t, res); !res.IsError || !strings.Contains(got, "larger than the 65536 bytes gated mcp-proxy passes on (--max-result-bytes)") || len(got) > 1024 {
		t.Fatalf("a result over the cap: error %v, %.300q", res.IsError, got)
	}
	// An upstream's protocol error is quoted to the model, so the cap
	// bounds it too: a megabyte of error message went through whole.
	res, err := f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "big_failure", Arguments: map[string]any{"size": 1 << 20}})
	if got := text(t, res); err != nil || !res.IsError || !strings.Contains(got, "(--max-result-bytes)") || len(got) > 1024 {
		t.Fatalf("an error over the cap: %v, %.300q", err, got)
	}
	res, err = f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "big_failure", Arguments: map[string]any{"size": 100}})
	if got := text(t, res); err != nil || !res.IsError || !strings.Contains(got, "the upstream MCP server failed it") || !strings.Contains(got, strings.Repeat("x", 100)+".") {
		t.Fatalf("an error within the cap: %v, %.300q", err, got)
	}
}

// The default cap is the documented one.
func TestProxyDefaultResultCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{trust: true, upstream: (&rawUpstream{}).server()})
	for size, over := range map[int]bool{mcpproxy.DefaultMaxResultBytes - 1024: false, mcpproxy.DefaultMaxResultBytes + 1: true} {
		res, err := f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "big", Arguments: map[string]any{"size": size}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError != over {
			t.Errorf("a result of %d bytes of text: error %v, want %v", size, res.IsError, over)
		}
	}
}

// Issue 25 §7: an upstream's elicitation/create reached the person as if
// gated asked, so an upstream could imitate gated's approval request. Its
// message is now marked as the upstream's, or, with
// --upstream-elicitation refuse, the upstream gets an error and the
// person is not asked.
func TestProxyMarksTheUpstreamsElicitation(t *testing.T) {
	t.Parallel()
	for _, refuse := range []bool{false, true} {
		var mu sync.Mutex
		var asked []string
		client := &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, req.Params.Message)
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}}
		f := newFixture(t, setup{upstream: askingUpstream(make(chan struct{}, 8)), upProto: "2025-11-25", proto: "2025-11-25",
			client: client, refuseElicitation: refuse})
		res, err := f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "elicitation"}})
		if err != nil || res.IsError {
			t.Fatalf("call %+v, %v", res, err)
		}
		got := text(t, res)
		mu.Lock()
		switch {
		case !refuse && (got != "accept Ada" || len(asked) != 1 || asked[0] != mcpproxy.UpstreamElicitationPrefix+"your name?"):
			t.Errorf("marked: the upstream got %q, the person was asked %q", got, asked)
		case refuse && (!strings.Contains(got, "--upstream-elicitation refuse") || len(asked) != 0):
			t.Errorf("refused: the upstream got %q, the person was asked %q", got, asked)
		}
		mu.Unlock()
	}
}
