package mcpproxy_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatedhq/gated/internal/adapter/mcpproxy"
	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/route"
)

var approvalID = regexp.MustCompile(`Approval ([0-9a-f-]{36}) waits for a person to decide it at https://gated\.example\.com/ui/approvals/([0-9a-f-]{36}) until `)

// call calls the uncatalogued, trusted-to-write tool "other", which asks,
// and returns the tool result's text and the approval it names, if any.
func (f *fixture) call(t *testing.T, args map[string]any) (res *sdk.CallToolResult, got, approvalNamed string) {
	t.Helper()
	return f.callTool(t, "other", args)
}

func (f *fixture) callTool(t *testing.T, tool string, args map[string]any) (res *sdk.CallToolResult, got, approvalNamed string) {
	t.Helper()
	res, err := f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	got = text(t, res)
	if m := approvalID.FindStringSubmatch(got); m != nil {
		if m[1] != m[2] {
			t.Fatalf("the text names approval %s with the url of %s", m[1], m[2])
		}
		approvalNamed = m[1]
		d := res.Meta[mcpproxy.DecisionMetaKey].(map[string]any)
		if a, _ := d["approval"].(map[string]any); a == nil || a["id"] != approvalNamed {
			t.Fatalf("_meta does not name approval %s: %+v", approvalNamed, d)
		}
	}
	return res, got, approvalNamed
}

func (f *fixture) approval(t *testing.T, id string) *approval.Approval {
	t.Helper()
	a, err := f.approvals.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestProxyAskFallsBackToApprovals: a client that cannot be asked gets an
// ask as a tool error naming a stored approval; the same call is refused
// while it is pending, runs exactly once after a person approves it, and
// is refused approval_used after that; other arguments are another call,
// which the approval does not allow.
func TestProxyAskFallsBackToApprovals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{trust: true, approvals: true})
	args := map[string]any{"table": "secret-table"}

	res, got, id := f.call(t, args)
	if !res.IsError || id == "" || !strings.Contains(got, "gated needs a person to approve this call, and the MCP client cannot ask") ||
		!strings.Contains(got, "call this tool again with the same arguments") || strings.Contains(got, "secret-table") {
		t.Fatalf("the ask does not name an approval: %q", got)
	}
	a := f.approval(t, id)
	if a.Status != approval.StatusPending || a.Requester.TokenName != requester || a.ToolName != "mcp__up__other" || a.Route != "ask" {
		t.Fatalf("stored approval %+v", a)
	}

	res, got, named := f.call(t, args)
	if !res.IsError || named != id || !strings.Contains(got, route.CodeApprovalPending) {
		t.Fatalf("a retry before the approval: %q", got)
	}
	if len(f.calls) != 0 {
		t.Fatalf("the upstream saw %v before anyone approved", f.calls)
	}

	if _, err := f.approvals.Decide(context.Background(), id, approval.Identity{TokenName: "alice", Principals: []string{"operator://alice"}},
		true, "fine", time.Now()); err != nil {
		t.Fatal(err)
	}
	res, got, other := f.call(t, map[string]any{"table": "another-table"})
	if !res.IsError || other == "" || other == id {
		t.Fatalf("other arguments are allowed by the approval, or open none: %q", got)
	}

	res, got, _ = f.call(t, map[string]any{"table": "secret-table"})
	if res.IsError || got != "done" || strings.Join(f.calls, ",") != "other" {
		t.Fatalf("the approved call does not run once: %q, upstream calls %v", got, f.calls)
	}
	if a := f.approval(t, id); a.Status != approval.StatusUsed || a.ConsumedBy == "" {
		t.Fatalf("the approval is not spent: %+v", a)
	}

	res, got, named = f.call(t, args)
	if !res.IsError || named != "" || !strings.Contains(got, route.CodeApprovalUsed) {
		t.Fatalf("a second retry: %q", got)
	}
	if len(f.calls) != 1 {
		t.Fatalf("the upstream saw %v; the approval allows one call", f.calls)
	}
	// The refusal settles the spent approval: the same call asks afresh.
	if res, got, again := f.call(t, args); !res.IsError || again == "" || again == id {
		t.Fatalf("after a refused replay: %q", got)
	}
}

// TestProxyElicitsWithoutStoredApprovals: with approvals on, a client that
// can be asked is asked, and no stored approval waits for an approver.
func TestProxyElicitsWithoutStoredApprovals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{trust: true, approvals: true, proto: "2025-11-25", client: &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "decline"}, nil
		},
	}})
	res, got, id := f.call(t, map[string]any{})
	if !res.IsError || id != "" || len(f.calls) != 0 {
		t.Fatalf("a declined ask: %q", got)
	}
	if n := pgtest.QueryInt(t, f.dbURL, "SELECT count(*) FROM approvals"); n != 0 {
		t.Fatalf("%d approvals stored for an ask put to the person at the client", n)
	}
}

// TestProxyApprovalsBeyondElicitation: a defer an approval resolves (an
// irreversible tool) gets a stored approval even from a client that can be
// asked, and an ask from a client on protocol 2026-07-28 that declared no
// elicitation gets one too; a defer nothing could approve gets none.
func TestProxyApprovalsBeyondElicitation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, proto, tool      string
		trust, opens, noElicit bool
	}{
		{"irreversible defer, eliciting client", "2025-11-25", "purge", false, true, false},
		{"ask on 2026-07-28 without elicitation", "2026-07-28", "other", true, true, true},
		{"uncatalogued defer", "2025-11-25", "other", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var asked int
			client := &sdk.ClientOptions{
				ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					asked++
					return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
				},
			}
			if tc.noElicit {
				client = nil
			}
			f := newFixture(t, setup{trust: tc.trust, approvals: true, proto: tc.proto, client: client})
			res, got, id := f.callTool(t, tc.tool, map[string]any{})
			if !res.IsError || asked != 0 || (id != "") != tc.opens || len(f.calls) != 0 {
				t.Fatalf("approval %q, asked %d: %q", id, asked, got)
			}
			if !tc.opens {
				return
			}
			if _, err := f.approvals.Decide(context.Background(), id, approval.Identity{TokenName: "alice"}, true, "", time.Now()); err != nil {
				t.Fatal(err)
			}
			if res, got, _ := f.callTool(t, tc.tool, map[string]any{}); res.IsError || strings.Join(f.calls, ",") != tc.tool {
				t.Fatalf("the approved retry: %q, upstream calls %v", got, f.calls)
			}
		})
	}
}
