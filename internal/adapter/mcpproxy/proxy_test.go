package mcpproxy_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gatedhq/gated/internal/adapter/mcpproxy"
	"github.com/gatedhq/gated/internal/approval/approvaltest"
	approvalpg "github.com/gatedhq/gated/internal/approval/postgres"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/pgtest"
)

// testCatalog describes the upstream's tools as coding agents name them:
// echo reads, purge is irreversible (it defers until approved), drop is an
// R4 plugin that never executes; other is left out.
var testCatalog = map[string]string{
	"ACTIONS.yaml": `actions:
  - name: mcp__up__fail
    description: Fail with the argument in the error.
    command: ["fail"]
    inputSchema: { type: object }
    annotations: { readOnlyHint: true }
  - name: mcp__up__echo
    description: Echo a message back.
    command: ["echo", "{{message}}"]
    inputSchema:
      type: object
      required: [message]
      properties:
        message: { type: string }
    annotations:
      readOnlyHint: true
`,
	"tools/purge/TOOL.md": "---\nname: purge\nid: purge\ndescription: purge a table\nversion: 1.0.0\ninputs: {type: object}\noutputs: {type: object}\n" +
		"risk_level: 3\nmutates: [db:tables]\nmetadata: {gated: {aliases: [mcp__up__purge]}}\n---\n",
	"plugins/drop/action.json": `{"name": "mcp__up__drop", "riskTier": "R4",
  "inputSchema": {"type": "object", "properties": {"table": {"type": "string"}}}}`,
}

type echoArgs struct {
	Message string `json:"message"`
}

type tableArgs struct {
	Table string `json:"table,omitempty"`
}

// upstream is a real go-sdk server with the tools the catalog describes
// and one it does not; calls counts the calls that reached it.
func upstream(calls *[]string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, a echoArgs) (*sdk.CallToolResult, any, error) {
			*calls = append(*calls, "echo")
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + a.Message}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "peek", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(true)}},
		func(_ context.Context, _ *sdk.CallToolRequest, _ tableArgs) (*sdk.CallToolResult, any, error) {
			*calls = append(*calls, "peek")
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "peeked"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "wipe", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: new(true)}},
		func(_ context.Context, _ *sdk.CallToolRequest, _ tableArgs) (*sdk.CallToolResult, any, error) {
			*calls = append(*calls, "wipe")
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "wiped"}}}, nil, nil
		})
	for _, name := range []string{"drop", "other", "purge"} {
		sdk.AddTool(s, &sdk.Tool{Name: name}, func(_ context.Context, _ *sdk.CallToolRequest, _ tableArgs) (*sdk.CallToolResult, any, error) {
			*calls = append(*calls, name)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
		})
	}
	s.AddTool(&sdk.Tool{Name: "fail", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: -32001, Message: "cannot handle " + string(req.Params.Arguments)}
	})
	s.AddPrompt(&sdk.Prompt{Name: "greet"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello"}}}}, nil
	})
	return s
}

// fixture connects a client to the proxy, and the proxy to the upstream,
// over the go-sdk's in-memory transports; the decisions are gated's own.
type fixture struct {
	// app is the MCP client, whose session with the proxy client is.
	app      *sdk.Client
	client   *sdk.ClientSession
	upstream *sdk.ClientSession
	// upstreamSession is the upstream server's side of the proxy's
	// connection, to send the proxy what an upstream sends of itself.
	upstreamSession *sdk.ServerSession
	calls           []string
	// approvals is the approval store, when the setup asked for one.
	approvals *approvalpg.Store
	dbURL     string
	// server is the proxy's own; decided counts its decisions.
	server  *sdk.Server
	decided atomic.Int64
	// last is the id of the proxy's last decision.
	last atomic.Value
}

// setup is how a fixture differs from the default: trusted annotations,
// the client's options (an elicitation handler) and protocol version (the
// latest when empty), the unknown-tools rule, tools/list hiding, a logger,
// and gated's approval flow on a real PostgreSQL, as the proxy has it with
// --database-url.
type setup struct {
	trust     bool
	client    *sdk.ClientOptions
	proto     string
	unknown   gate.UnknownTools
	hide      bool
	log       *zap.Logger
	approvals bool
	// upstream replaces the default upstream server; upProto is the
	// protocol version the proxy speaks with it (the latest when empty).
	upstream *sdk.Server
	upProto  string
	// maxResult is the proxy's MaxResultBytes; refuseElicitation its
	// downstream's RefuseElicitation.
	maxResult         int
	refuseElicitation bool
	// stopped is the proxy's Stopped.
	stopped func(agentID, tool string) error
}

// requester is who the proxy's approvals are for, as cmd/gated names it.
const requester = "mcp-proxy:up"

func newFixture(t *testing.T, o setup) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	for name, body := range testCatalog {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := catalog.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	opts := []gate.Option{gate.WithCatalog(func() *catalog.Catalog { return cat }, o.unknown, catalog.ArgumentsEnforce)}
	f := &fixture{}
	token := ""
	if o.approvals {
		_, f.dbURL = approvaltest.Database(t, time.Now())
		f.approvals = approvalpg.New(pgtest.DB(t, f.dbURL))
		t.Cleanup(f.approvals.Close)
		opts = append(opts, gate.WithAudit(approvaltest.SyncRecorder(t, f.dbURL), audit.NewRedactor([]byte("0123456789abcdef0123456789abcdef")), "test"),
			gate.WithApprovals(f.approvals, "https://gated.example.com"))
		token = requester
	}
	engine := gate.New(opts...)
	upT, upS := sdk.NewInMemoryTransports()
	up := o.upstream
	if up == nil {
		up = upstream(&f.calls)
	}
	if f.upstreamSession, err = up.Connect(ctx, upS, nil); err != nil {
		t.Fatal(err)
	}
	down := mcpproxy.NewDownstream()
	down.RefuseElicitation = o.refuseElicitation
	f.upstream, err = down.Client(&sdk.Implementation{Name: "gated-mcp-proxy", Version: "test"}).Connect(ctx, upT,
		&sdk.ClientSessionOptions{ProtocolVersion: o.upProto})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.upstream.Close() })
	proxy := mcpproxy.New(mcpproxy.Config{
		Upstream: f.upstream, Downstream: down, ToolPrefix: "mcp__up__", Category: engine.Category, Version: "test",
		TrustAnnotations: o.trust, HideRefused: o.hide, AlwaysRefused: engine.AlwaysRefused, Log: o.log, MaxResultBytes: o.maxResult,
		Stopped: o.stopped,
		Decide: func(ctx context.Context, req gate.Request) *gate.Decision {
			req.TrustEventPrincipals, req.TokenName = true, token
			f.decided.Add(1)
			d := engine.Decide(ctx, req)
			f.last.Store(d.DecisionID)
			return d
		},
	})
	f.server = proxy
	cT, cS := sdk.NewInMemoryTransports()
	if _, err := proxy.Connect(ctx, cS, nil); err != nil {
		t.Fatal(err)
	}
	f.app = sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, o.client)
	f.client, err = f.app.Connect(ctx, cT, &sdk.ClientSessionOptions{ProtocolVersion: o.proto})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.client.Close() })
	return f
}

func text(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content %+v", res.Content)
	}
	return res.Content[0].(*sdk.TextContent).Text
}

func TestProxyForwardsWhatTheUpstreamServes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{})
	ctx := context.Background()
	tools, err := f.client.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "drop,echo,fail,other,peek,purge,wipe" {
		t.Fatalf("tools %v", names)
	}
	p, err := f.client.GetPrompt(ctx, &sdk.GetPromptParams{Name: "greet"})
	if err != nil || text(t, &sdk.CallToolResult{Content: []sdk.Content{p.Messages[0].Content}}) != "hello" {
		t.Fatalf("prompt %+v, %v", p, err)
	}
	caps := f.client.InitializeResult().Capabilities
	if caps.Tools == nil || caps.Prompts == nil || caps.Resources != nil {
		t.Fatalf("capabilities are not the upstream's: %+v", caps)
	}
}

func TestProxyChecksEveryCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{})
	ctx := context.Background()

	res, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || res.IsError || text(t, res) != "echo: hi" {
		t.Fatalf("an accepted call is not forwarded: %+v, %v", res, err)
	}
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       []string
	}{
		{"a tool that never executes is refused", "drop", map[string]any{"table": "users"},
			[]string{"gated refuses this call", "Blockers:", "(decision "}},
		{"an uncatalogued tool defers, which the client cannot answer", "other", map[string]any{},
			[]string{"gated defers this call to a person, and the MCP client cannot ask", "tool_not_in_catalog"}},
		{"arguments the catalog rejects are refused", "echo", map[string]any{"message": 7},
			[]string{"arguments_invalid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil || !res.IsError {
				t.Fatalf("a blocked call is not a tool error: %+v, %v", res, err)
			}
			got := text(t, res)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Fatalf("text %q does not say %q", got, w)
				}
			}
			if strings.Contains(got, "users") {
				t.Fatalf("the reason quotes an argument: %q", got)
			}
			d, _ := res.Meta[mcpproxy.DecisionMetaKey].(map[string]any)
			if d == nil || d["decision_id"] == "" || d["route"] == "accept" {
				t.Fatalf("_meta %+v", res.Meta)
			}
		})
	}
	if strings.Join(f.calls, ",") != "echo" {
		t.Fatalf("the upstream saw %v; only the accepted call may reach it", f.calls)
	}
}

// TestProxyUpstreamErrorStaysOutOfTheLog: an upstream's protocol error is
// the model's to read, as a tool error; the log keeps its code, since its
// message may quote the arguments.
func TestProxyUpstreamErrorStaysOutOfTheLog(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.DebugLevel)
	f := newFixture(t, setup{log: zap.New(core)})
	res, err := f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "fail", Arguments: map[string]any{"token": "s3cr3t"}})
	if err != nil || !res.IsError || !strings.Contains(text(t, res), "the upstream MCP server failed it") {
		t.Fatalf("%+v, %v", res, err)
	}
	entries := logs.All()
	if len(entries) != 1 || entries[0].ContextMap()["upstream_error_code"] != int64(-32001) {
		t.Fatalf("log %+v", entries)
	}
	for _, e := range entries {
		if strings.Contains(fmt.Sprint(e.Message, e.ContextMap()), "s3cr3t") {
			t.Fatalf("an argument reached the log: %+v", e)
		}
	}
}

func TestProxyFailsClosedWhenTheUpstreamIsGone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{})
	if err := f.upstream.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || !res.IsError || !strings.Contains(text(t, res), "the upstream MCP server failed it") {
		t.Fatalf("an allowed call to a closed upstream: %+v, %v", res, err)
	}
}

// TestProxyTrustedAnnotations: with the upstream's annotations trusted, an
// uncatalogued tool that says it reads runs, one that says nothing or also
// says it destroys writes (ask, which the client cannot answer), and a
// catalogued tool keeps the catalog's word. Untrusted, the unknown-tools
// rule applies.
func TestProxyTrustedAnnotations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	trusted, untrusted := newFixture(t, setup{trust: true}), newFixture(t, setup{})
	call := func(f *fixture, tool string) (*sdk.CallToolResult, string) {
		res, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		return res, text(t, res)
	}
	if res, got := call(trusted, "peek"); res.IsError || got != "peeked" {
		t.Fatalf("a trusted read-only tool: %q", got)
	}
	for _, tool := range []string{"other", "wipe"} {
		if res, got := call(trusted, tool); !res.IsError || !strings.Contains(got, "write_missing_validation_or_confirmation") {
			t.Fatalf("%s with trusted annotations: %q", tool, got)
		}
	}
	if res, got := call(trusted, "drop"); !res.IsError || !strings.Contains(got, "gated refuses this call") {
		t.Fatalf("the catalog's refusal gave way to annotations: %q", got)
	}
	if res, got := call(untrusted, "peek"); !res.IsError || !strings.Contains(got, "tool_not_in_catalog") {
		t.Fatalf("untrusted annotations counted: %q", got)
	}
	if strings.Join(trusted.calls, ",") != "peek" || len(untrusted.calls) != 0 {
		t.Fatalf("calls reached the upstreams: %v, %v", trusted.calls, untrusted.calls)
	}
}

// TestProxyAsksThroughElicitation: an ask goes to the person through the
// client's elicitation; an approval runs the call, decided again with the
// approval as evidence, and anything else refuses it. A defer is never put
// to the person.
// TestProxyAsksThroughElicitation: an ask is put to the person at a client
// that declared elicitation, as an elicitation/create request before
// protocol 2026-07-28 and as an input-required result from it (the go-sdk
// client answers it from the same handler and retries); only an approval
// runs the call.
func TestProxyAsksThroughElicitation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		for _, tc := range []struct {
			name   string
			answer *sdk.ElicitResult
			runs   bool
		}{
			{"approved", &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, true},
			{"not approved", &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, false},
			{"declined", &sdk.ElicitResult{Action: "decline"}, false},
		} {
			t.Run(proto+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				var asked []string
				f := newFixture(t, setup{trust: true, proto: proto, client: &sdk.ClientOptions{
					ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
						asked = append(asked, req.Params.Message)
						return tc.answer, nil
					},
				}})
				if got := f.client.InitializeResult().ProtocolVersion; got != proto {
					t.Fatalf("protocol %s", got)
				}
				res, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "other", Arguments: map[string]any{"table": "secret-table"}})
				if err != nil || res.IsError == tc.runs || res.NeedsInput() {
					t.Fatalf("%+v, %v", res, err)
				}
				if len(asked) != 1 || !strings.Contains(asked[0], "mcp__up__other") || !strings.Contains(asked[0], "gated asks you to approve this call") ||
					strings.Contains(asked[0], "secret-table") {
					t.Fatalf("asked %q", asked)
				}
				if got := strings.Join(f.calls, ","); got != map[bool]string{true: "other", false: ""}[tc.runs] {
					t.Fatalf("upstream calls %q", got)
				}
				// The client asked and the person did not approve: the
				// refusal says so, not that the client cannot ask.
				// It names the decision refused, the last; from 2026-07-28
				// that is the retry's, and the one that asked is named as such.
				retried := map[string]bool{"2025-11-25": false, "2026-07-28": true}[proto]
				if msg := text(t, res); !tc.runs && (!strings.Contains(msg, "the person declined it when gated asked") || strings.Contains(msg, "cannot ask") ||
					strings.Contains(msg, "so this retry is refused") != retried || !strings.Contains(msg, "(decision "+f.last.Load().(string)+").")) {
					t.Fatalf("a declined ask reads %q", msg)
				}
			})
		}
	}
	// A defer is not put to the person, on either protocol.
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		var asked int
		f := newFixture(t, setup{proto: proto, client: &sdk.ClientOptions{
			ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				asked++
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
			},
		}})
		res, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "other", Arguments: map[string]any{}})
		if err != nil || !res.IsError || asked != 0 || len(f.calls) != 0 {
			t.Fatalf("defer on %s: %+v, %v, asked %d", proto, res, err, asked)
		}
	}
}

// TestProxyHidesAlwaysRefusedTools: with hiding on, tools/list leaves out
// the never-executing tool and, under --unknown-tools refuse, the
// uncatalogued ones, unless their annotations are trusted; a hidden tool's
// call is still refused.
func TestProxyHidesAlwaysRefusedTools(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		trust   bool
		unknown gate.UnknownTools
		want    string
	}{
		{"defer", false, gate.UnknownDefer, "echo,fail,other,peek,purge,wipe"},
		{"refuse", false, gate.UnknownRefuse, "echo,fail,purge"},
		{"refuse, annotations trusted", true, gate.UnknownRefuse, "echo,fail,other,peek,purge,wipe"},
	} {
		f := newFixture(t, setup{trust: tc.trust, unknown: tc.unknown, hide: true})
		tools, err := f.client.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range tools.Tools {
			names = append(names, tool.Name)
		}
		if strings.Join(names, ",") != tc.want {
			t.Errorf("%s: tools %v", tc.name, names)
		}
		res, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "drop", Arguments: map[string]any{}})
		if err != nil || !res.IsError || len(f.calls) != 0 {
			t.Errorf("%s: a hidden tool's call: %+v, %v", tc.name, res, err)
		}
	}
}

// TestProxyInputRequiredState drives the 2026-07-28 round trip by hand, as
// a client that retries itself: the state binds the retry to the ask and
// the call, is the proxy's own, and runs the call once. A state the proxy
// cannot honour is the protocol's error (-32602), as SEP-2322 has a server
// reject a state that fails its integrity check. Every refused retry
// leaves the upstream uncalled.
func TestProxyInputRequiredState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, setup{trust: true, client: &sdk.ClientOptions{
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			t.Error("the client's handler is not called when it retries itself")
			return nil, nil
		},
	}})
	args := map[string]any{"table": "t1"}
	asked := func(res *sdk.CallToolResult, err error) string {
		t.Helper()
		if err != nil || !res.NeedsInput() || res.RequestState == "" || len(res.Content) != 0 {
			t.Fatalf("not input-required: %+v, %v", res, err)
		}
		q, ok := res.InputRequests["gated_approval"].(*sdk.ElicitParams)
		if !ok || len(res.InputRequests) != 1 || !strings.Contains(q.Message, "mcp__up__other") || strings.Contains(q.Message, "t1") {
			t.Fatalf("input requests %+v", res.InputRequests)
		}
		return res.RequestState
	}
	ask := func() string {
		t.Helper()
		return asked(f.client.CallTool(ctx, &sdk.CallToolParams{Name: "other", Arguments: args}))
	}
	approve := sdk.InputResponseMap{"gated_approval": &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}
	retry := func(args map[string]any, answer sdk.InputResponseMap, state string) string {
		t.Helper()
		res, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "other", Arguments: args, InputResponses: answer, RequestState: state})
		if err != nil {
			if rpc, ok := errors.AsType[*jsonrpc.Error](err); !ok || rpc.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("retry: %v", err)
			}
			return err.Error()
		}
		if res.NeedsInput() {
			t.Fatalf("retry: %+v", res)
		}
		if res.IsError {
			return text(t, res)
		}
		return ""
	}
	state := ask()
	i := strings.LastIndexByte(state, '.')
	forged := state[:i] + "." + strings.Repeat("A", len(state)-i-1)
	for _, tc := range []struct {
		name, args, state, want string
	}{
		{"a forged signature", "t1", forged, "not one this gated mcp-proxy issued"},
		{"a tampered state", "t1", state + "-TAMPERED", "not one this gated mcp-proxy issued"},
		{"someone else's format", "t1", "step=1", "not one this gated mcp-proxy issued"},
		{"an oversized state", "t1", state + strings.Repeat("x", 16<<10), "not one this gated mcp-proxy issued"},
		{"other arguments", "t2", state, "issued for another call"},
	} {
		got := retry(map[string]any{"table": tc.args}, approve, tc.state)
		if !strings.Contains(got, tc.want) || len(f.calls) != 0 {
			t.Fatalf("%s: %q, upstream calls %v", tc.name, got, f.calls)
		}
	}
	// An answer without a state is a new call: asked again, not approved.
	asked(f.client.CallTool(ctx, &sdk.CallToolParams{Name: "other", Arguments: args, InputResponses: approve}))
	if len(f.calls) != 0 {
		t.Fatalf("an answer without state ran the call: %v", f.calls)
	}
	if got := retry(args, approve, state); got != "" || strings.Join(f.calls, ",") != "other" {
		t.Fatalf("the approved retry: %q, upstream calls %v", got, f.calls)
	}
	if got := retry(args, approve, state); !strings.Contains(got, "answered already") || len(f.calls) != 1 {
		t.Fatalf("a replayed state: %q, upstream calls %v", got, f.calls)
	}
	// Declined: the ask stands, and the state is spent. The refusal names
	// the decision that asked as that, and the retry's own as its own.
	state = ask()
	askedBy := f.last.Load().(string)
	decline := sdk.InputResponseMap{"gated_approval": &sdk.ElicitResult{Action: "decline"}}
	got := retry(args, decline, state)
	if retryID := f.last.Load().(string); retryID == askedBy ||
		!strings.Contains(got, "gated needs a person to approve this call, and the person declined it when gated asked (decision "+askedBy+"), so this retry is refused") ||
		!strings.Contains(got, "(decision "+retryID+").") || strings.Contains(got, "cannot ask") || len(f.calls) != 1 {
		t.Fatalf("a declined retry: %q (asked by %s, retry %s), upstream calls %v", got, askedBy, retryID, f.calls)
	}
	if got := retry(args, approve, state); !strings.Contains(got, "answered already") || len(f.calls) != 1 {
		t.Fatalf("approving after declining: %q, upstream calls %v", got, f.calls)
	}
}
