package server_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/kill"
	killpg "github.com/gatedhq/gated/internal/kill/postgres"
	"github.com/gatedhq/gated/internal/pgtest"
	pgdb "github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/server"
	"github.com/gatedhq/gated/internal/testwait"
)

const adminSecret = "admin-secret-0123456789ab"

// killTokens are the test tokens plus an admin.
func killTokens(t testing.TB) *auth.Tokens {
	t.Helper()
	ts, err := auth.Parse([]byte(`
- name: runtime
  sha256: ` + auth.Hash(runtimeSecret) + `
  scopes: [pre_tool_check]
  principals: ["bot://runtime-1"]
- name: oncall
  sha256: ` + auth.Hash(adminSecret) + `
  scopes: [admin]
`))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// killDatabase is a migrated database of the test's own.
func killDatabase(t *testing.T) string {
	t.Helper()
	_, dbURL := pgtest.Fresh(t)
	if err := pgdb.Migrate(context.Background(), dbURL, "up", io.Discard); err != nil {
		t.Fatal(err)
	}
	return dbURL
}

// killReplica is one gated replica on dbURL: its own store, and its own
// board kept by its own watcher, as cmd/gated wires them.
func killReplica(t *testing.T, dbURL string) *fixture {
	t.Helper()
	store := killpg.New(pgtest.DB(t, dbURL))
	board := kill.NewBoard(time.Minute, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { store.Watch(ctx, board, killpg.DefaultResync, killpg.Hooks{}) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	testwait.Until(t, "the replica's first kill list", func() bool { _, err := board.Check(kill.Target{}, nil); return err == nil })
	return newServer(t, func(d *server.Deps) {
		d.Engine = gate.New(gate.WithClock(func() time.Time { return fixedNow }), gate.WithKillSwitch(board))
		d.Tokens = killTokens(t)
		d.Kills = store
	})
}

func (f *fixture) kill(secret, body string) *response {
	return f.do(request{method: http.MethodPost, target: "/v1/kill", body: strings.NewReader(body), header: bearer(secret)})
}

// blockers is the hard blockers of a decision for agent.
func (f *fixture) blockers(agent string) []string {
	res := f.post(eventWith(f.t, map[string]string{"agent_id": `"` + agent + `"`}))
	var out []string
	for _, b := range res.body["hard_blockers"].([]any) {
		out = append(out, b.(string))
	}
	return out
}

func killed(f *fixture, agent string) bool {
	return slices.Contains(f.blockers(agent), route.CodeKillSwitch)
}

// TestKillThreeReplicas is the issue's own test: kill an agent through one
// replica, and the other two refuse its next call; lift it through
// another, and all three let it run again.
func TestKillThreeReplicas(t *testing.T) {
	t.Parallel()
	dbURL := killDatabase(t)
	replicas := []*fixture{killReplica(t, dbURL), killReplica(t, dbURL), killReplica(t, dbURL)}
	for i, r := range replicas {
		if b := r.blockers("agent-7"); len(b) != 0 {
			t.Fatalf("replica %d before the kill: blockers %v", i+1, b)
		}
	}
	res := replicas[0].kill(adminSecret, `{"scope":"agent","value":"agent-7","reason":"loops on refunds"}`)
	if res.status != http.StatusCreated || res.str("created_by") != "oncall" || res.str("id") == "" {
		t.Fatalf("kill: %d %s", res.status, res.raw)
	}
	id := res.str("id")
	for i, r := range replicas[1:] {
		testwait.Until(t, "replica "+string(rune('2'+i))+" to refuse agent-7", func() bool { return killed(r, "agent-7") })
		if b := r.blockers("agent-8"); len(b) != 0 {
			t.Fatalf("replica %d refuses another agent: %v", i+2, b)
		}
	}
	res = replicas[0].do(request{method: http.MethodGet, target: "/v1/kill", header: bearer(adminSecret)})
	if ks := res.body["kills"].([]any); res.status != http.StatusOK || len(ks) != 1 || ks[0].(map[string]any)["id"] != id {
		t.Fatalf("list: %d %s", res.status, res.raw)
	}

	res = replicas[2].do(request{method: http.MethodDelete, target: "/v1/kill/" + id, header: bearer(adminSecret)})
	if res.status != http.StatusOK || res.str("lifted_by") != "oncall" || res.str("lifted_at") == "" {
		t.Fatalf("lift: %d %s", res.status, res.raw)
	}
	for _, r := range replicas {
		testwait.Until(t, "every replica to let agent-7 run again", func() bool { return len(r.blockers("agent-7")) == 0 })
	}
	res = replicas[1].do(request{method: http.MethodDelete, target: "/v1/kill/" + id, header: bearer(adminSecret)})
	if res.status != http.StatusNotFound || res.str("code") != "kill_switch_unknown" {
		t.Fatalf("lifting twice: %d %s", res.status, res.raw)
	}
	res = replicas[1].do(request{method: http.MethodGet, target: "/v1/kill?all=true", header: bearer(adminSecret)})
	if ks := res.body["kills"].([]any); len(ks) != 1 || ks[0].(map[string]any)["lifted_by"] != "oncall" {
		t.Fatalf("history: %s", res.raw)
	}
	if res := replicas[1].do(request{method: http.MethodGet, target: "/v1/kill", header: bearer(adminSecret)}); len(res.body["kills"].([]any)) != 0 {
		t.Fatalf("in force after the lift: %s", res.raw)
	}
}

// TestKillPrincipalBindsTheToken: a principal kill on the token's
// principal stops its calls whatever agent_id they claim, or none (issue
// 25 §5: an agent kill binds only what the caller says).
func TestKillPrincipalBindsTheToken(t *testing.T) {
	t.Parallel()
	f := killReplica(t, killDatabase(t))
	if res := f.kill(adminSecret, `{"scope":"principal","value":"bot://runtime-1","reason":"leaked token"}`); res.status != http.StatusCreated {
		t.Fatalf("kill: %d %s", res.status, res.raw)
	}
	testwait.Until(t, "the token's calls to be refused", func() bool { return killed(f, "someone-else") })
	res := f.post(eventWith(t, map[string]string{"agent_id": ""}))
	if b, _ := res.body["hard_blockers"].([]any); !slices.Contains(b, any(route.CodeKillSwitch)) {
		t.Fatalf("a call without agent_id: %s", res.raw)
	}
}

func TestKillRequests(t *testing.T) {
	t.Parallel()
	f := killReplica(t, killDatabase(t))
	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		name, secret, body string
		status             int
		code, says         string
	}{
		{"no token", "", `{"scope":"all","reason":"r"}`, http.StatusUnauthorized, "", "bearer token"},
		{"without scope admin", runtimeSecret, `{"scope":"all","reason":"r"}`, http.StatusForbidden, "", "lacks scope admin"},
		{"unknown scope", adminSecret, `{"scope":"team","value":"x","reason":"r"}`, http.StatusBadRequest, "kill_switch_invalid", `scope "team" is not all, agent, tool, action or principal`},
		{"unknown field", adminSecret, `{"scope":"all","reason":"r","by":"mallory"}`, http.StatusBadRequest, "kill_switch_invalid", `unknown field "by"`},
		{"no value", adminSecret, `{"scope":"tool","reason":"r"}`, http.StatusBadRequest, "kill_switch_invalid", "scope tool needs the value"},
		{"value with all", adminSecret, `{"scope":"all","value":"x","reason":"r"}`, http.StatusBadRequest, "kill_switch_invalid", "scope all takes no value"},
		{"no reason", adminSecret, `{"scope":"agent","value":"a"}`, http.StatusBadRequest, "kill_switch_invalid", "a reason is required"},
		{"expired already", adminSecret, `{"scope":"agent","value":"a","reason":"r","expires_at":"` + past + `"}`, http.StatusBadRequest, "kill_switch_invalid", "is not in the future"},
		{"the zero time as expiry", adminSecret, `{"scope":"all","reason":"r","expires_at":"0001-01-01T00:00:00Z"}`, http.StatusBadRequest, "kill_switch_invalid", "expires_at 0001-01-01T00:00:00Z is not in the future"},
		{"expiry years ahead", adminSecret, `{"scope":"all","reason":"r","expires_at":"9999-12-31T23:59:59Z"}`, http.StatusBadRequest, "kill_switch_invalid", "days ahead"},
		{"blank value", adminSecret, `{"scope":"agent","value":"  ","reason":"r"}`, http.StatusBadRequest, "kill_switch_invalid", "scope agent needs the value"},
		{"bad expiry", adminSecret, `{"scope":"agent","value":"a","reason":"r","expires_at":"tomorrow"}`, http.StatusBadRequest, "kill_switch_invalid", "expires_at"},
		{"two objects", adminSecret, `{"scope":"all","reason":"r"}{}`, http.StatusBadRequest, "kill_switch_invalid", "unexpected data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.secret != "" {
				hdr = bearer(tc.secret)
			}
			res := f.do(request{method: http.MethodPost, target: "/v1/kill", body: strings.NewReader(tc.body), header: hdr})
			if res.status != tc.status || res.str("code") != tc.code || !strings.Contains(res.str("error"), tc.says) {
				t.Fatalf("%d %s; want %d %s saying %q", res.status, res.raw, tc.status, tc.code, tc.says)
			}
		})
	}
	res := f.do(request{method: http.MethodGet, target: "/v1/kill", header: bearer(adminSecret)})
	if res.status != http.StatusOK || len(res.body["kills"].([]any)) != 0 {
		t.Fatalf("nothing refused may be set: %d %s", res.status, res.raw)
	}
	if res := f.do(request{method: http.MethodGet, target: "/v1/kill?all=yes", header: bearer(adminSecret)}); res.status != http.StatusBadRequest {
		t.Fatalf("all=yes: %d %s", res.status, res.raw)
	}
	if res := f.do(request{method: http.MethodDelete, target: "/v1/kill/nope", header: bearer(adminSecret)}); res.status != http.StatusNotFound {
		t.Fatalf("lifting an unknown kill: %d %s", res.status, res.raw)
	}
	// A kill of every call that expires: set, in force, listed with its expiry.
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	res = f.kill(adminSecret, `{"scope":"all","reason":"incident 42","expires_at":"`+future+`"}`)
	if res.status != http.StatusCreated || res.str("expires_at") != future {
		t.Fatalf("kill with expiry: %d %s", res.status, res.raw)
	}
	testwait.Until(t, "every call to be refused", func() bool { return killed(f, "agent-9") })
}

func TestKillNeedsTokensAndDatabase(t *testing.T) {
	t.Parallel()
	open := newServer(t, func(d *server.Deps) { d.Tokens = nil })
	res := open.kill("", `{"scope":"all","reason":"r"}`)
	if res.status != http.StatusForbidden || res.str("code") != "kill_switch_needs_tokens" {
		t.Fatalf("without tokens: %d %s", res.status, res.raw)
	}
	noDB := newServer(t, func(d *server.Deps) { d.Tokens = killTokens(t) })
	res = noDB.kill(adminSecret, `{"scope":"all","reason":"r"}`)
	if res.status != http.StatusServiceUnavailable || res.str("code") != "kill_switch_needs_database" {
		t.Fatalf("without a database: %d %s", res.status, res.raw)
	}
	// Decisions are unaffected: no kill switch, nothing refused for it.
	if b := noDB.blockers("agent-7"); len(b) != 0 {
		t.Fatalf("without a database: blockers %v", b)
	}
	// The database check comes after authentication: a caller without a
	// token learns nothing of how gated is set up.
	if res := noDB.kill("", `{"scope":"all","reason":"r"}`); res.status != http.StatusUnauthorized {
		t.Fatalf("without a token: %d %s", res.status, res.raw)
	}
}
