package gate

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/route"
)

// killEngine decides with the example catalog and a board holding kills,
// confirmed at fixedNow; its clock reads now.
func killEngine(t *testing.T, now *time.Time, kills ...kill.Kill) *Engine {
	t.Helper()
	c := exampleCatalog(t)
	board := kill.NewBoard(10*time.Second, func() time.Time { return *now })
	board.Set(kills, fixedNow)
	return New(WithClock(func() time.Time { return fixedNow }),
		WithCatalog(func() *catalog.Catalog { return c }, UnknownDefer, catalog.ArgumentsEnforce),
		WithKillSwitch(board))
}

func TestKillSwitch(t *testing.T) {
	t.Parallel()
	email := func(agent string) map[string]any {
		ev := decode(t, []byte(confirmedEmail))
		ev["agent_id"] = agent
		return ev
	}
	for _, tc := range []struct {
		name   string
		kill   kill.Kill
		killed bool
	}{
		{"its agent", kill.Kill{ID: "k-agent", Scope: kill.ScopeAgent, Value: "agent-7"}, true},
		{"another agent", kill.Kill{ID: "k-other", Scope: kill.ScopeAgent, Value: "agent-8"}, false},
		{"its tool as named", kill.Kill{ID: "k-tool", Scope: kill.ScopeTool, Value: "send_email"}, true},
		{"its catalog action", kill.Kill{ID: "k-action", Scope: kill.ScopeAction, Value: "messaging:send-email"}, true},
		{"another action", kill.Kill{ID: "k-action2", Scope: kill.ScopeAction, Value: "billing:refund"}, false},
		{"the token's principal", kill.Kill{ID: "k-token", Scope: kill.ScopePrincipal, Value: "group://support"}, true},
		{"the event's agent as principal, not vouched for", kill.Kill{ID: "k-bot", Scope: kill.ScopePrincipal, Value: "bot://agent-7"}, true},
		{"every call", kill.Kill{ID: "k-all", Scope: kill.ScopeAll}, true},
		{"lifted", kill.Kill{ID: "k-lifted", Scope: kill.ScopeAll, LiftedAt: fixedNow}, false},
		{"expired", kill.Kill{ID: "k-expired", Scope: kill.ScopeAll, ExpiresAt: fixedNow}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := fixedNow
			e := killEngine(t, &now, tc.kill)
			d := e.Decide(context.Background(), Request{Event: email("agent-7"), TokenName: "runtime", Principals: []string{"group://support"}})
			if !tc.killed {
				if d.Route != route.Accept || slices.Contains(d.HardBlockers, route.CodeKillSwitch) {
					t.Fatalf("route %s blockers %v; want accept", d.Route, d.HardBlockers)
				}
				return
			}
			if d.Route != route.Refuse || d.Execute || !slices.Contains(d.HardBlockers, route.CodeKillSwitch) {
				t.Fatalf("route %s execute %v blockers %v; want refuse by kill_switch", d.Route, d.Execute, d.HardBlockers)
			}
			i := slices.IndexFunc(d.Findings, func(f route.Finding) bool { return f.Code == route.CodeKillSwitch })
			if want := "kill switch " + tc.kill.ID + " (scope " + string(tc.kill.Scope) + ") stops this call"; d.Findings[i].Message != want {
				t.Fatalf("message %q, want %q", d.Findings[i].Message, want)
			}
		})
	}
}

func TestKillSwitchUnconfirmedRefusesEveryCall(t *testing.T) {
	t.Parallel()
	now := fixedNow.Add(11 * time.Second) // past the 10s bound
	e := killEngine(t, &now)
	d := e.Decide(context.Background(), Request{Event: decode(t, []byte(confirmedEmail))})
	if d.Route != route.Refuse || !slices.Equal(d.HardBlockers, []string{route.CodeKillSwitchUnavailable}) {
		t.Fatalf("route %s blockers %v; want refuse by kill_switch_unavailable alone", d.Route, d.HardBlockers)
	}
	now = fixedNow.Add(10 * time.Second)
	if d := e.Decide(context.Background(), Request{Event: decode(t, []byte(confirmedEmail))}); d.Route != route.Accept {
		t.Fatalf("within the bound: route %s blockers %v", d.Route, d.HardBlockers)
	}
}

// TestKillSwitchCannotBeDodged holds the dodges of issue 25 §5: a tool
// kill named by one of the tool's catalog names stops the calls made by
// another, an agent kill stops a respelled agent_id, and an agent or
// principal kill binds a call that leaves its agent_id out when the token
// vouches for the agent.
func TestKillSwitchCannotBeDodged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		kill       kill.Kill
		tool       string
		agent      any // nil: no agent_id
		principals []string
		killed     bool
	}{
		{"tool kill, called by its alias", kill.Kill{Scope: kill.ScopeTool, Value: "send_email"}, "email_customer", "a", nil, true},
		{"alias kill, called by the tool's other alias", kill.Kill{Scope: kill.ScopeTool, Value: "email_customer"}, "send_email", "a", nil, true},
		{"tool kill by the catalog id", kill.Kill{Scope: kill.ScopeTool, Value: "support.send-email"}, "email_customer", "a", nil, true},
		{"tool kill, another tool", kill.Kill{Scope: kill.ScopeTool, Value: "issue_refund"}, "send_email", "a", nil, false},
		{"agent kill, trailing space", kill.Kill{Scope: kill.ScopeAgent, Value: "bot-7"}, "send_email", "bot-7 ", nil, true},
		{"agent kill, other case", kill.Kill{Scope: kill.ScopeAgent, Value: "bot-7"}, "send_email", "Bot-7", nil, true},
		{"agent kill, full-width", kill.Kill{Scope: kill.ScopeAgent, Value: "bot-7"}, "send_email", "ｂｏｔ-７", nil, true},
		{"agent kill, no agent_id, the token vouches for the agent", kill.Kill{Scope: kill.ScopeAgent, Value: "bot-7"}, "send_email", nil, []string{"bot://bot-7"}, true},
		{"agent kill, no agent_id, nothing vouched", kill.Kill{Scope: kill.ScopeAgent, Value: "bot-7"}, "send_email", nil, []string{"group://support"}, false},
		{"principal kill, no agent_id", kill.Kill{Scope: kill.ScopePrincipal, Value: "group://support"}, "send_email", nil, []string{"group://support"}, true},
		{"principal kill, another agent_id claimed", kill.Kill{Scope: kill.ScopePrincipal, Value: "bot://bot-7"}, "send_email", "bot-8", []string{"bot://bot-7"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := fixedNow
			tc.kill.ID = "k1"
			e := killEngine(t, &now, tc.kill)
			ev := decode(t, []byte(confirmedEmail))
			ev["tool_name"] = tc.tool
			if tc.agent != nil {
				ev["agent_id"] = tc.agent
			}
			d := e.Decide(context.Background(), Request{Event: ev, TokenName: "runtime", Principals: tc.principals})
			if got := slices.Contains(d.HardBlockers, route.CodeKillSwitch); got != tc.killed {
				t.Fatalf("killed = %v (route %s, blockers %v), want %v", got, d.Route, d.HardBlockers, tc.killed)
			}
		})
	}
}

// Stopped with a tool stops what a tool kill stops by the tool's catalog
// action as well as its name (a tools/call retry gated mcp-proxy passes on
// undecided), and without one only what stops the whole agent.
func TestStoppedNamesTheTool(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kill       kill.Kill
		tool, none bool
	}{
		{kill.Kill{ID: "k-tool", Scope: kill.ScopeTool, Value: "send_email"}, true, false},
		{kill.Kill{ID: "k-action", Scope: kill.ScopeAction, Value: "messaging:send-email"}, true, false},
		{kill.Kill{ID: "k-bot", Scope: kill.ScopePrincipal, Value: "bot://agent-7"}, true, true},
		{kill.Kill{ID: "k-agent", Scope: kill.ScopeAgent, Value: "agent-7"}, true, true},
		{kill.Kill{ID: "k-other", Scope: kill.ScopeTool, Value: "refund"}, false, false},
	} {
		now := fixedNow
		e := killEngine(t, &now, tc.kill)
		if got := e.Stopped("agent-7", "send_email") != nil; got != tc.tool {
			t.Errorf("%s: stopped send_email %v, want %v", tc.kill.ID, got, tc.tool)
		}
		if got := e.Stopped("agent-7", "") != nil; got != tc.none {
			t.Errorf("%s: stopped without a tool %v, want %v", tc.kill.ID, got, tc.none)
		}
	}
}
