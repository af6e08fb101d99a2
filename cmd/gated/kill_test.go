package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/kill/saved"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/testgated"
	"github.com/gatedhq/gated/internal/testwait"
)

// TestServeKillSwitchAcrossReplicas runs three gated servers on one
// database, as replicas: an agent killed through one is refused by the
// other two at its next call, other agents still run, and the lift
// through a third lets it run everywhere again.
func TestServeKillSwitchAcrossReplicas(t *testing.T) {
	t.Parallel()
	const agentSecret, adminSecret = "kill-agent-token-0123456789", "kill-admin-token-0123456789"
	_, dbURL := pgtest.Fresh(t)
	tokens := tokensFile(t, token{"agent", agentSecret, "[pre_tool_check]", ""}, token{"oncall", adminSecret, "[admin, metrics]", ""})
	args := []string{"--database-url", dbURL, "--audit-hmac-key", testHMACKey, "--audit-durability", "sync", "--tokens", tokens}
	var bases []string
	for range 3 {
		base, _ := startServe(t, args, nil)
		bases = append(bases, base)
	}
	agent, admin := map[string]string{"Authorization": "Bearer " + agentSecret}, map[string]string{"Authorization": "Bearer " + adminSecret}
	blockers := func(base, agentID string) []string {
		code, d := post(t, base+"/pre-tool-check", `{"tool_name":"get_weather","tool_category":"public_read","authorization_state":"none",
			"evidence_refs":[],"risk_domain":"public_information","agent_id":"`+agentID+`","proposed_arguments":{"city":"Lisbon"},"recommended_route":"accept"}`, agent)
		if code != http.StatusOK {
			t.Fatalf("decision: %d %v", code, d)
		}
		var out []string
		for _, b := range d["hard_blockers"].([]any) {
			out = append(out, b.(string))
		}
		return out
	}
	for _, base := range bases {
		if b := blockers(base, "agent-7"); len(b) != 0 {
			t.Fatalf("before the kill: %v", b)
		}
	}
	code, k := post(t, bases[0]+"/v1/kill", `{"scope":"agent","value":"agent-7","reason":"runaway loop"}`, admin)
	if code != http.StatusCreated {
		t.Fatalf("kill: %d %v", code, k)
	}
	for _, base := range bases[1:] {
		testwait.Until(t, "a replica to refuse agent-7", func() bool { return slices.Contains(blockers(base, "agent-7"), "kill_switch") })
		if b := blockers(base, "agent-8"); len(b) != 0 {
			t.Fatalf("another agent refused: %v", b)
		}
	}
	_, m := send(t, http.MethodGet, bases[1]+"/metrics", nil, admin)
	if !strings.Contains(string(m), "gated_kill_switches_active 1") {
		t.Errorf("the gauge does not count the kill")
	}
	code, lifted := call(t, http.MethodDelete, bases[2]+"/v1/kill/"+k["id"].(string), nil, admin)
	if code != http.StatusOK || lifted["lifted_by"] != "oncall" {
		t.Fatalf("lift: %d %v", code, lifted)
	}
	for _, base := range bases {
		testwait.Until(t, "every replica to let agent-7 run", func() bool { return len(blockers(base, "agent-7")) == 0 })
	}
}

// TestServeKillSwitchFailsClosed stalls the database under a running
// gated: once it could not confirm the kill list for --kill-stale-after it
// refuses every call (kill_switch_unavailable), says so in its log, and
// decides again once the database answers.
func TestServeKillSwitchFailsClosed(t *testing.T) {
	t.Parallel()
	const agentSecret = "stale-agent-token-0123456789"
	_, dbURL := pgtest.Fresh(t)
	p := pgProxy(t)
	tokens := tokensFile(t, token{"agent", agentSecret, "[pre_tool_check]", ""})
	base, logs := startServe(t, []string{"--database-url", p.URL(t, dbURL), "--audit-hmac-key", testHMACKey,
		"--tokens", tokens, "--kill-stale-after", "4s", "--kill-max-stale", "4s"}, nil)
	hdr := map[string]string{"Authorization": "Bearer " + agentSecret}
	blockers := func() []any {
		code, d := post(t, base+"/pre-tool-check", `{"tool_name":"get_weather","tool_category":"public_read","authorization_state":"none",
			"evidence_refs":[],"risk_domain":"public_information","proposed_arguments":{"city":"Lisbon"},"recommended_route":"accept"}`, hdr)
		if code != http.StatusOK {
			t.Fatalf("decision: %d %v", code, d)
		}
		return d["hard_blockers"].([]any)
	}
	if b := blockers(); len(b) != 0 {
		t.Fatalf("with the database up: %v", b)
	}
	p.Stall()
	testwait.Until(t, "every call to be refused for the unconfirmed kill list", func() bool {
		b := blockers()
		return len(b) == 1 && b[0] == "kill_switch_unavailable"
	})
	testwait.Until(t, "the log to say why calls are refused", func() bool {
		return strings.Contains(logs.String(), "the kill switch list cannot be read")
	})
	p.Restore()
	testwait.Until(t, "calls to be decided again", func() bool { return len(blockers()) == 0 })
	testwait.Until(t, "the log to say the outage ended", func() bool {
		return strings.Contains(logs.String(), "the kill switch list is read again")
	})
}

// Kill switch flags that cannot work stop gated at start with a sentence.
func TestKillSwitchFlagErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kill-switch", "maybe"}, "--kill-switch must be auto, on or off"},
		{[]string{"--kill-switch", "on"}, "--kill-switch on needs --database-url"},
		{[]string{"--kill-stale-after", "1s"}, "--kill-stale-after must be at least 4s"},
		{[]string{"--kill-max-stale", "5s"}, "--kill-max-stale (5s) must be at least --kill-stale-after (10s)"},
		{[]string{"--kill-start-fail", "maybe"}, "--kill-start-fail must be closed or open"},
	} {
		err := run(context.Background(), append([]string{"gated", "serve", "--addr", freeAddr(t)}, c.args...), env(nil), nil, io.Discard, io.Discard)
		var ex exitError
		if !errors.As(err, &ex) || ex.code != exitUsage || !strings.Contains(ex.msg, c.want) {
			t.Errorf("%v: got %v, want a usage error naming %q", c.args, err, c.want)
		}
	}
}

// deadDB is a database URL whose port refuses connections.
func deadDB(t *testing.T) string {
	return "postgres://postgres@" + testgated.ClosedAddr(t) + "/gated?sslmode=disable&connect_timeout=1"
}

// TestKillStopsEverySurface is issue 25 §5's first finding: on one
// database, a scope all kill set through gated serve stops the calls of
// gated mcp-proxy and gated mcp too (before, both went on forwarding and
// accepting). All three are real: serve in-process, the other two as
// processes.
func TestKillStopsEverySurface(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const adminSecret, agentSecret = "every-surface-admin-0123456789", "every-surface-agent-0123456789"
	_, dbURL := pgtest.Fresh(t)
	base, _ := startServe(t, []string{"--database-url", dbURL, "--audit-hmac-key", testHMACKey,
		"--tokens", tokensFile(t, token{"oncall", adminSecret, "[admin]", ""}, token{"agent", agentSecret, "[pre_tool_check]", ""})}, nil)
	dir, upstream := echoUpstream(t)
	db := []string{"--database-url", dbURL, "--audit-hmac-key", testHMACKey}
	proxy := testgated.StartCommand(t, append([]string{"mcp-proxy", "--upstream-url", upstream.URL, "--http-addr", "127.0.0.1:0", "--log-level", "info",
		"--catalog", dir, "--spool-dir", filepath.Join(dir, "proxy-spool")}, db...)...)
	viaProxy, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: proxy.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = viaProxy.Close() })
	mcpCmd := exec.Command(testgated.Binary(t), append([]string{"mcp", "--spool-dir", filepath.Join(dir, "mcp-spool")}, db...)...)
	viaMCP, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: mcpCmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = viaMCP.Close() })

	proxied := func() (bool, string) {
		res, err := viaProxy.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		return res.IsError, res.Content[0].(*sdk.TextContent).Text
	}
	const weather = `{"tool_name":"get_weather","tool_category":"public_read","authorization_state":"none","evidence_refs":[],
		"risk_domain":"public_information","proposed_arguments":{"city":"Lisbon"},"recommended_route":"accept"}`
	served := func() []any {
		code, d := post(t, base+"/pre-tool-check", weather, map[string]string{"Authorization": "Bearer " + agentSecret})
		if code != http.StatusOK {
			t.Fatalf("decision: %d %v", code, d)
		}
		return d["hard_blockers"].([]any)
	}
	checked := func() string {
		res, err := viaMCP.CallTool(ctx, &sdk.CallToolParams{Name: "aana_pre_tool_check", Arguments: map[string]any{
			"tool_name": "get_weather", "tool_category": "public_read", "authorization_state": "none", "evidence_refs": []any{},
			"risk_domain": "public_information", "proposed_arguments": map[string]any{"city": "Lisbon"}, "recommended_route": "accept"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*sdk.TextContent).Text
	}
	// What the proxy passes on undecided (a resource read) a scope all
	// kill stops too; a tool kill leaves it.
	read := func() error {
		_, err := viaProxy.ReadResource(ctx, &sdk.ReadResourceParams{URI: "note://1"})
		return err
	}
	if isErr, text := proxied(); isErr || text != "echoed" {
		t.Fatalf("before the kill, the proxy: %q\n%s", text, proxy.Logs())
	}
	if err := read(); err != nil {
		t.Fatalf("before the kill, a resource read through the proxy: %v", err)
	}
	if text := checked(); !strings.Contains(text, "gated route: accept") {
		t.Fatalf("before the kill, gated mcp: %q", text)
	}
	if b := served(); len(b) != 0 {
		t.Fatalf("before the kill, gated serve: %v", b)
	}
	// A tool kill by the upstream's own name of the tool stops the proxy's
	// mcp__up__echo (before, only by the name with the prefix the upstream's
	// reported server name makes).
	if code, k := post(t, base+"/v1/kill", `{"scope":"tool","value":"echo","reason":"incident 25"}`, map[string]string{"Authorization": "Bearer " + adminSecret}); code != http.StatusCreated {
		t.Fatalf("tool kill: %d %v", code, k)
	}
	testwait.Until(t, "the proxy to refuse the killed tool", func() bool {
		isErr, text := proxied()
		return isErr && strings.Contains(text, "kill_switch")
	})
	if b := served(); len(b) != 0 {
		t.Fatalf("a tool kill of echo, gated serve's get_weather: %v", b)
	}
	if err := read(); err != nil {
		t.Fatalf("a tool kill of echo, a resource read through the proxy: %v", err)
	}
	if code, k := post(t, base+"/v1/kill", `{"scope":"all","reason":"incident 25"}`, map[string]string{"Authorization": "Bearer " + adminSecret}); code != http.StatusCreated {
		t.Fatalf("kill: %d %v", code, k)
	}
	testwait.Until(t, "gated serve to refuse the call", func() bool {
		b := served()
		return len(b) == 1 && b[0] == "kill_switch"
	})
	testwait.Until(t, "the proxy to refuse the call", func() bool {
		isErr, text := proxied()
		return isErr && strings.Contains(text, "kill_switch")
	})
	if err := read(); err == nil || !strings.Contains(err.Error(), "kill switch") || !strings.Contains(err.Error(), "scope all") {
		t.Fatalf("under a scope all kill, a resource read through the proxy: %v", err)
	}
	testwait.Until(t, "gated mcp to refuse the call", func() bool {
		return strings.Contains(checked(), "gated route: refuse. Execute: false. Hard blockers: kill_switch.")
	})
}

// TestServeStartsOnASavedKillList is issue 25 §6's reproduction: with
// --database-url and --tokens, PostgreSQL refusing connections at start
// refused every call (kill_switch_unavailable). With a kill list saved
// beside the spool by an earlier run, gated decides from it: the killed
// agent is refused, every other call is decided as usual.
func TestServeStartsOnASavedKillList(t *testing.T) {
	t.Parallel()
	const agentSecret = "saved-list-agent-token-0123456789"
	spool := t.TempDir()
	if err := saved.Save(filepath.Join(spool, saved.FileName), []kill.Kill{{ID: "k-7", Scope: kill.ScopeAgent, Value: "bot-7", Reason: "loops"}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	base, logs := startServe(t, []string{"--database-url", deadDB(t), "--audit-hmac-key", testHMACKey, "--spool-dir", spool,
		"--tokens", tokensFile(t, token{"agent", agentSecret, "[pre_tool_check]", ""})}, nil)
	blockers := func(agent string) []any {
		code, d := post(t, base+"/pre-tool-check", `{"tool_name":"get_weather","tool_category":"public_read","authorization_state":"none",
			"evidence_refs":[],"risk_domain":"public_information","agent_id":"`+agent+`","proposed_arguments":{"city":"Lisbon"},"recommended_route":"accept"}`,
			map[string]string{"Authorization": "Bearer " + agentSecret})
		if code != http.StatusOK {
			t.Fatalf("decision: %d %v", code, d)
		}
		return d["hard_blockers"].([]any)
	}
	for range 20 {
		if b := blockers("bot-8"); len(b) != 0 {
			t.Fatalf("another agent, the database away: blockers %v\n%s", b, logs)
		}
	}
	if b := blockers("bot-7"); len(b) != 1 || b[0] != "kill_switch" {
		t.Fatalf("the killed agent, the database away: blockers %v", b)
	}
}
