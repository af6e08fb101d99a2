package kill

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		k    Kill
		want string // "" for valid
	}{
		{"agent", Kill{Scope: ScopeAgent, Value: "agent-7", Reason: "loops"}, ""},
		{"all", Kill{Scope: ScopeAll, Reason: "incident"}, ""},
		{"future expiry", Kill{Scope: ScopeTool, Value: "t", Reason: "r", ExpiresAt: t0.Add(time.Minute)}, ""},
		{"unknown scope", Kill{Scope: "team", Value: "x", Reason: "r"}, `scope "team" is not all, agent, tool, action or principal`},
		{"all with value", Kill{Scope: ScopeAll, Value: "x", Reason: "r"}, "scope all takes no value"},
		{"no value", Kill{Scope: ScopePrincipal, Reason: "r"}, "scope principal needs the value"},
		{"no reason", Kill{Scope: ScopeAgent, Value: "a"}, "a reason is required"},
		{"long reason", Kill{Scope: ScopeAgent, Value: "a", Reason: strings.Repeat("é", MaxReason+1)}, "reason is longer"},
		{"long value", Kill{Scope: ScopeAgent, Value: strings.Repeat("a", MaxValue+1), Reason: "r"}, "value is longer"},
		{"past expiry", Kill{Scope: ScopeAgent, Value: "a", Reason: "r", ExpiresAt: t0}, "is not in the future"},
		{"expiry past a year", Kill{Scope: ScopeAgent, Value: "a", Reason: "r", ExpiresAt: t0.Add(MaxExpiry + time.Second)}, "days ahead"},
		{"blank value", Kill{Scope: ScopeAgent, Value: " \u200b ", Reason: "r"}, "scope agent needs the value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.k.Check(t0)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want ErrInvalid saying %q", err, tc.want)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	call := Target{AgentID: "agent-7", ToolName: "payments.refund", ActionID: "payments:refund", Principals: []string{"bot://agent-7", "group://ops"}}
	for _, tc := range []struct {
		name string
		k    Kill
		want bool
	}{
		{"all", Kill{Scope: ScopeAll}, true},
		{"its agent", Kill{Scope: ScopeAgent, Value: "agent-7"}, true},
		{"another agent", Kill{Scope: ScopeAgent, Value: "agent-8"}, false},
		{"its tool", Kill{Scope: ScopeTool, Value: "payments.refund"}, true},
		{"another tool", Kill{Scope: ScopeTool, Value: "payments.refund2"}, false},
		{"its action", Kill{Scope: ScopeAction, Value: "payments:refund"}, true},
		{"another action", Kill{Scope: ScopeAction, Value: "crm:read"}, false},
		{"one of its principals", Kill{Scope: ScopePrincipal, Value: "group://ops"}, true},
		{"another principal", Kill{Scope: ScopePrincipal, Value: "group://dev"}, false},
		{"lifted", Kill{Scope: ScopeAll, LiftedAt: t0.Add(-time.Second)}, false},
		{"expired", Kill{Scope: ScopeAll, ExpiresAt: t0}, false},
		{"not yet expired", Kill{Scope: ScopeAll, ExpiresAt: t0.Add(time.Second)}, true},
	} {
		if got := tc.k.Matches(call, t0); got != tc.want {
			t.Errorf("%s: Matches = %v, want %v", tc.name, got, tc.want)
		}
	}
	// An empty value never stands for "no agent".
	if (&Kill{Scope: ScopeAgent, Value: "agent-7"}).Matches(Target{}, t0) {
		t.Error("a kill of agent-7 matches a call without an agent")
	}
}

// TestCheckExpiry: the zero time is an expiry long past, not "none" (issue
// 25 §5: "0001-01-01T00:00:00Z" made a kill permanent).
func TestCheckExpiry(t *testing.T) {
	for _, at := range []time.Time{{}, t0, t0.Add(-time.Hour), t0.Add(MaxExpiry + time.Nanosecond), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)} {
		if err := CheckExpiry(at, t0); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckExpiry(%v) = %v, want ErrInvalid", at, err)
		}
	}
	for _, at := range []time.Time{t0.Add(time.Nanosecond), t0.Add(MaxExpiry)} {
		if err := CheckExpiry(at, t0); err != nil {
			t.Errorf("CheckExpiry(%v) = %v", at, err)
		}
	}
}

// TestMatchesClean: values and names compare clean and case-insensitively,
// and an agent kill binds the bot:// principal a token vouches for.
func TestMatchesClean(t *testing.T) {
	for _, tc := range []struct {
		name string
		k    Kill
		t    Target
		want bool
	}{
		{"agent, spaces", Kill{Scope: ScopeAgent, Value: "bot-7"}, Target{AgentID: " bot-7\t"}, true},
		{"agent, case", Kill{Scope: ScopeAgent, Value: "bot-7"}, Target{AgentID: "BOT-7"}, true},
		{"agent, value spelled oddly", Kill{Scope: ScopeAgent, Value: "Bot-7 "}, Target{AgentID: "bot-7"}, true},
		{"agent, zero-width", Kill{Scope: ScopeAgent, Value: "bot-7"}, Target{AgentID: "bot\u200b-7"}, true},
		{"agent, by its vouched principal", Kill{Scope: ScopeAgent, Value: "bot-7"}, Target{Principals: []string{"bot://Bot-7"}}, true},
		{"agent, another", Kill{Scope: ScopeAgent, Value: "bot-7"}, Target{AgentID: "bot-77", Principals: []string{"bot://bot-77"}}, false},
		{"tool, by an alias", Kill{Scope: ScopeTool, Value: "email_customer"}, Target{ToolName: "send_email", ToolID: "support.send-email", ToolAliases: []string{"send_email", "email_customer"}}, true},
		{"tool, by its catalog id", Kill{Scope: ScopeTool, Value: "support.send-email"}, Target{ToolName: "email_customer", ToolID: "support.send-email"}, true},
		{"tool, none of its names", Kill{Scope: ScopeTool, Value: "refund"}, Target{ToolName: "send_email", ToolID: "support.send-email", ToolAliases: []string{"send_email"}}, false},
		{"agent, a format character inside a letter", Kill{Scope: ScopeAgent, Value: "caf\u00e9"}, Target{AgentID: "cafe\u200d\u0301"}, true},
		{"tool, as an MCP tool of any server", Kill{Scope: ScopeTool, Value: "send_email"}, Target{ToolName: "mcp__mail-v2__send_email"}, true},
		{"tool, as an MCP tool, case", Kill{Scope: ScopeTool, Value: "Send_Email"}, Target{ToolName: "MCP__mail__send_email"}, true},
		{"tool, an MCP server's name is no tool", Kill{Scope: ScopeTool, Value: "mail"}, Target{ToolName: "mcp__mail__send_email"}, false},
		{"tool, another MCP tool", Kill{Scope: ScopeTool, Value: "send_email"}, Target{ToolName: "mcp__mail__send_email_draft"}, false},
		{"tool, an MCP name, its upstream renamed", Kill{Scope: ScopeTool, Value: "mcp__mail__send_email"}, Target{ToolName: "mcp__mail-v2__send_email"}, true},
		{"tool, an MCP name, by a catalog alias", Kill{Scope: ScopeTool, Value: "mcp__mail__send_email"}, Target{ToolName: "email_customer", ToolAliases: []string{"send_email"}}, true},
		{"tool, an MCP name, another tool", Kill{Scope: ScopeTool, Value: "mcp__mail__send_email"}, Target{ToolName: "mcp__mail__send_email_draft"}, false},
		{"principal, case", Kill{Scope: ScopePrincipal, Value: "group://Ops"}, Target{Principals: []string{"group://ops"}}, true},
		{"action, space", Kill{Scope: ScopeAction, Value: "billing:refund "}, Target{ActionID: "billing:refund"}, true},
	} {
		if got := tc.k.Matches(tc.t, t0); got != tc.want {
			t.Errorf("%s: Matches = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestBoard(t *testing.T) {
	now := t0
	b := NewBoard(10*time.Second, func() time.Time { return now })
	if _, err := b.Check(Target{AgentID: "a"}, nil); !errors.Is(err, ErrUnconfirmed) {
		t.Fatalf("a board never set: Check = %v, want ErrUnconfirmed", err)
	}
	b.Set([]Kill{{ID: "k1", Scope: ScopeAgent, Value: "a", ExpiresAt: t0.Add(time.Minute)}}, now)
	if k, err := b.Check(Target{AgentID: "a"}, nil); err != nil || k == nil || k.ID != "k1" {
		t.Fatalf("Check(a) = %v, %v; want kill k1", k, err)
	}
	if k, err := b.Check(Target{AgentID: "b"}, nil); err != nil || k != nil {
		t.Fatalf("Check(b) = %v, %v; want no kill", k, err)
	}
	if n := b.Active(); n != 1 {
		t.Fatalf("Active = %d, want 1", n)
	}
	now = t0.Add(10 * time.Second) // at the bound: still confirmed
	if _, err := b.Check(Target{AgentID: "b"}, nil); err != nil {
		t.Fatalf("at the bound: Check = %v", err)
	}
	now = t0.Add(10*time.Second + time.Nanosecond)
	if _, err := b.Check(Target{AgentID: "b"}, nil); !errors.Is(err, ErrUnconfirmed) {
		t.Fatalf("past the bound: Check = %v, want ErrUnconfirmed", err)
	}
	now = t0.Add(2 * time.Minute)
	b.Set(b.cur.Load().kills, now)
	if k, err := b.Check(Target{AgentID: "a"}, nil); err != nil || k != nil {
		t.Fatalf("after the kill expired: Check = %v, %v; want no kill", k, err)
	}
	if n := b.Active(); n != 0 {
		t.Fatalf("Active after expiry = %d, want 0", n)
	}
}
