package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/kill/saved"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/pgtest"
	pgdb "github.com/gatedhq/gated/internal/postgres"
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

// killClock is a clock a test moves by hand.
type killClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *killClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// Set puts the clock at t.
func (c *killClock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// killDB is a fresh database with gated's tables, as the audit recorder
// leaves it.
func killDB(t *testing.T) string {
	t.Helper()
	_, u := pgtest.Fresh(t)
	if err := pgdb.Migrate(context.Background(), u, "up", io.Discard); err != nil {
		t.Fatal(err)
	}
	return u
}

// deadDB is a database URL whose port refuses connections.
func deadDB(t *testing.T) string {
	return "postgres://postgres@" + testgated.ClosedAddr(t) + "/gated?sslmode=disable&connect_timeout=1"
}

// openTestKills is openKills with f, on spoolDir, with clock and a log
// and metrics of its own; closed when the test ends.
func openTestKills(t *testing.T, f killFlags, dbURL, spoolDir string, clock *killClock) (*kills, *metrics.Metrics, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	log, err := newLogger(logs, "info")
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New("test")
	k, err := openKills(context.Background(), &f, pgtest.DB(t, dbURL), spoolDir, m, log, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.close)
	return k, m, logs
}

// metricValue is the value of the unlabelled metric name in m.
func metricValue(t *testing.T, m *metrics.Metrics, name string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		switch mt := mf.GetMetric()[0]; {
		case mt.Counter != nil:
			return mt.Counter.GetValue()
		case mt.Gauge != nil:
			return mt.Gauge.GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// stopped reports whether board's list stops agent, failing the test on
// an unconfirmed list.
func stopped(t *testing.T, board *kill.Board, agent string) bool {
	t.Helper()
	k, err := board.Check(kill.Target{AgentID: agent}, nil)
	if err != nil {
		t.Fatalf("agent %s: %v", agent, err)
	}
	return k != nil
}

var killTestFlags = killFlags{mode: "auto", staleAfter: 10 * time.Second, maxStale: 10 * time.Minute, startFail: "closed"}

// TestKillListOutlivesAFrozenDatabase freezes the database under a running
// kill switch (the fault-injecting proxy): past --kill-stale-after gated
// still decides from the last list — the killed agent stays stopped, the
// others run — reports each minute of it in the log and the metrics, and
// refuses every call only past --kill-max-stale (issue 25 §6).
func TestKillListOutlivesAFrozenDatabase(t *testing.T) {
	t.Parallel()
	dbURL := killDB(t)
	p := pgProxy(t)
	clock := &killClock{now: time.Now()}
	k, m, logs := openTestKills(t, killTestFlags, p.URL(t, dbURL), t.TempDir(), clock)
	ks := &kill.Kill{Scope: kill.ScopeAgent, Value: "bot-7", Reason: "loops", CreatedBy: "oncall"}
	if err := k.Create(context.Background(), ks, time.Now()); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the kill to reach the board", func() bool { return stopped(t, k.board, "bot-7") })
	_, confirmed, _ := k.board.List()
	p.Stall()
	clock.Set(confirmed.Add(5 * time.Minute))
	if !stopped(t, k.board, "bot-7") || stopped(t, k.board, "bot-8") {
		t.Fatal("five minutes into the outage: the kill list is not decided from")
	}
	k.report()
	if n := metricValue(t, m, "gated_kill_list_stale_seconds_total"); n != 60 {
		t.Fatalf("stale seconds %v, want 60", n)
	}
	if age := metricValue(t, m, "gated_kill_list_age_seconds"); age != 300 {
		t.Fatalf("list age %v, want 300", age)
	}
	if l := logs.String(); !strings.Contains(l, "deciding from a kill switch list that could not be confirmed recently") || !strings.Contains(l, `"refusing_every_call_in":300`) {
		t.Fatalf("the minute's log line is missing:\n%s", l)
	}
	clock.Set(confirmed.Add(10*time.Minute + time.Second))
	if _, err := k.board.Check(kill.Target{AgentID: "bot-8"}, nil); !errors.Is(err, kill.ErrUnconfirmed) {
		t.Fatalf("past --kill-max-stale: %v, want ErrUnconfirmed", err)
	}
	k.report()
	if n := metricValue(t, m, "gated_kill_list_stale_seconds_total"); n != 60 {
		t.Fatalf("stale seconds past the bound %v, want still 60", n)
	}
	if !strings.Contains(logs.String(), "every call is refused until it is") {
		t.Fatalf("the log does not say every call is refused:\n%s", logs)
	}
}

// TestKillListSavedForARestart: a process that read a list saved it
// beside the spool; started again while the database refuses
// connections, it decides from that list at once, for --kill-max-stale
// from the list's confirmation.
func TestKillListSavedForARestart(t *testing.T) {
	t.Parallel()
	dbURL, spool := killDB(t), t.TempDir()
	clock := &killClock{now: time.Now()}
	first, _, _ := openTestKills(t, killTestFlags, dbURL, spool, clock)
	if err := first.Create(context.Background(), &kill.Kill{Scope: kill.ScopeAll, Reason: "incident", CreatedBy: "oncall"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the kill to be saved", func() bool {
		ks, _, err := saved.Load(filepath.Join(spool, saved.FileName), clock.Now())
		return err == nil && len(ks) == 1
	})
	_, confirmed, _ := saved.Load(filepath.Join(spool, saved.FileName), clock.Now())
	first.close()

	clock.Set(confirmed.Add(9 * time.Minute))
	k, _, logs := openTestKills(t, killTestFlags, deadDB(t), spool, clock)
	if !stopped(t, k.board, "anyone") {
		t.Fatal("the saved kill of every call does not stop a call")
	}
	if !strings.Contains(logs.String(), "the saved kill switch list is loaded") {
		t.Fatalf("the log does not say the saved list is used:\n%s", logs)
	}
	clock.Set(confirmed.Add(10*time.Minute + time.Second))
	if _, err := k.board.Check(kill.Target{}, nil); !errors.Is(err, kill.ErrUnconfirmed) {
		t.Fatalf("past --kill-max-stale: %v, want ErrUnconfirmed", err)
	}
}

// TestKillStartWithoutAnyList: no database and no saved list — every call
// is refused, unless --kill-start-fail open, which decides as if no kill
// were set for --kill-max-stale from the start. A damaged saved list is no
// list.
func TestKillStartWithoutAnyList(t *testing.T) {
	t.Parallel()
	f := killTestFlags
	f.staleAfter = 10 * time.Millisecond // the wait for a first list that cannot come
	clock := &killClock{now: time.Now()}
	k, _, _ := openTestKills(t, f, deadDB(t), t.TempDir(), clock)
	if _, err := k.board.Check(kill.Target{}, nil); !errors.Is(err, kill.ErrUnconfirmed) {
		t.Fatalf("closed: %v, want ErrUnconfirmed", err)
	}
	spool := t.TempDir()
	if err := os.WriteFile(filepath.Join(spool, saved.FileName), []byte(`{"content":{},"sha256":"00"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f.startFail = "open"
	start := clock.Now()
	k, _, logs := openTestKills(t, f, deadDB(t), spool, clock)
	if stopped(t, k.board, "bot-7") {
		t.Fatal("open: a call is stopped")
	}
	if l := logs.String(); !strings.Contains(l, "the saved kill switch list is ignored") || !strings.Contains(l, "--kill-start-fail open") {
		t.Fatalf("the log does not say why:\n%s", l)
	}
	clock.Set(start.Add(10*time.Minute + time.Second))
	if _, err := k.board.Check(kill.Target{}, nil); !errors.Is(err, kill.ErrUnconfirmed) {
		t.Fatalf("open, past --kill-max-stale: %v, want ErrUnconfirmed", err)
	}
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
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ACTIONS.yaml"), `actions:
  - name: mcp__up__echo
    description: Echo.
    command: ["echo"]
    inputSchema: { type: object }
    annotations: { readOnlyHint: true }
`)
	up := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	up.AddTool(&sdk.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echoed"}}}, nil
	})
	upstream := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return up }, nil))
	t.Cleanup(upstream.Close)
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
	if isErr, text := proxied(); isErr || text != "echoed" {
		t.Fatalf("before the kill, the proxy: %q\n%s", text, proxy.Logs())
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
