package hook

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/adapter/hook/wire"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/redact"
	"github.com/gatedhq/gated/internal/route"
)

// claudeAnswer is the PreToolUse part of rt's answer to d.
func claudeAnswer(rt Runtime, d *gate.Decision) wire.ClaudeSpecific {
	return rt.Answer(d, "PreToolUse").Body.(wire.ClaudeOutput).HookSpecificOutput
}

func TestAnswerMapsEveryRoute(t *testing.T) {
	t.Parallel()
	block := func(r route.Route, msg string) route.Finding {
		return route.Finding{Code: "c", Route: r, Blocking: true, Message: msg}
	}
	for _, tc := range []struct {
		name string
		d    gate.Decision
		want string
		in   []string
	}{
		{"accept", gate.Decision{Route: route.Accept, Execute: true, DecisionID: "d1"}, "allow", []string{"allows", "d1"}},
		{"accept without execute is not an allow", gate.Decision{Route: route.Accept}, "deny", []string{"refuses"}},
		{"ask", gate.Decision{Route: route.Ask, Findings: []route.Finding{block(route.Ask, "a write needs confirmation.")}}, "ask", []string{"approve", "a write needs confirmation"}},
		{"defer asks the person at the keyboard", gate.Decision{Route: route.Defer, Findings: []route.Finding{block(route.Defer, "not catalogued")}}, "ask", []string{"defers", "not catalogued"}},
		{"refuse", gate.Decision{Route: route.Refuse, Findings: []route.Finding{block(route.Ask, "second"), block(route.Refuse, "first")}}, "deny", []string{"refuses this call: first; second"}},
		{"shadow allows and says what it would do", gate.Decision{Route: route.Refuse, Execute: true, Shadow: true}, "allow", []string{"shadow mode", "would refuse"}},
		{"non-blocking findings are not reasons", gate.Decision{Route: route.Accept, Execute: true, Findings: []route.Finding{{Route: route.Accept, Message: "fine"}}}, "allow", nil},
		{"many reasons are counted, not listed", gate.Decision{Route: route.Ask, Findings: []route.Finding{block(route.Ask, "1"), block(route.Ask, "2"), block(route.Ask, "3"), block(route.Ask, "4"), block(route.Ask, "5")}}, "ask", []string{"1; 2; 3; and 2 more"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := claudeAnswer(ClaudeCode, &tc.d)
			if o.HookEventName != "PreToolUse" || o.PermissionDecision != tc.want {
				t.Fatalf("got %+v, want %s", o, tc.want)
			}
			for _, s := range tc.in {
				if !strings.Contains(o.PermissionDecisionReason, s) {
					t.Errorf("reason %q lacks %q", o.PermissionDecisionReason, s)
				}
			}
			if tc.name == "non-blocking findings are not reasons" && strings.Contains(o.PermissionDecisionReason, "fine") {
				t.Errorf("reason quotes a non-blocking finding: %q", o.PermissionDecisionReason)
			}
		})
	}
}

// Codex rejects ask as unsupported in some versions, and a rejected answer
// is a failed hook, which Codex runs the tool on: gated denies instead.
func TestCodexAsksBecomeDenies(t *testing.T) {
	t.Parallel()
	for _, r := range []route.Route{route.Ask, route.Defer} {
		o := claudeAnswer(Codex, &gate.Decision{Route: r, Findings: []route.Finding{{Route: r, Blocking: true, Message: "needs a look"}}})
		if o.PermissionDecision != "deny" || !strings.Contains(o.PermissionDecisionReason, "Codex cannot ask") || !strings.Contains(o.PermissionDecisionReason, "needs a look") {
			t.Errorf("%s: %+v", r, o)
		}
	}
	if o := claudeAnswer(Codex, &gate.Decision{Route: route.Accept, Execute: true}); o.PermissionDecision != "allow" {
		t.Errorf("accept: %+v", o)
	}
}

// A deny that carries an approval says where a person approves it and
// that the same call then runs; an ask the person at the keyboard answers
// (Claude Code) says nothing of it, nor does an answer without one.
func TestDenyNamesTheApproval(t *testing.T) {
	t.Parallel()
	p := &gate.PendingApproval{ID: "0193a5b4-7c3e-7a1b-8f00-000000000001", URL: "https://gated.example.com/ui/approvals/0193a5b4-7c3e-7a1b-8f00-000000000001",
		ExpiresAt: time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)}
	d := &gate.Decision{Route: route.Ask, Approval: p, Findings: []route.Finding{{Route: route.Ask, Blocking: true, Message: "needs a look"}}}
	o := claudeAnswer(Codex, d)
	for _, want := range []string{"Codex cannot ask", "needs a look", "approve it at " + p.URL, "(approval " + p.ID + ")", "until 2026-11-27T05:00:00Z", "try the same call again"} {
		if o.PermissionDecision != "deny" || !strings.Contains(o.PermissionDecisionReason, want) {
			t.Errorf("Codex's deny %q lacks %q", o.PermissionDecisionReason, want)
		}
	}
	if o := claudeAnswer(ClaudeCode, d); o.PermissionDecision != "ask" || strings.Contains(o.PermissionDecisionReason, p.ID) {
		t.Errorf("Claude Code's ask names the approval: %+v", o)
	}
	if o := claudeAnswer(Codex, &gate.Decision{Route: route.Ask}); strings.Contains(o.PermissionDecisionReason, "approve it at") {
		t.Errorf("a deny without an approval names one: %q", o.PermissionDecisionReason)
	}
}

// No session id may name its session in a way the secret scan refuses:
// with hex fingerprints one session in two thousand had every call refused
// (all digits, read as a card number).
func TestSessionNamesAreNeverSecrets(t *testing.T) {
	t.Parallel()
	for i := range 20000 {
		ref := ClaudeCode.sessionRef(fmt.Sprintf("session %d", i))
		if text := ref.SourceID + " " + ref.Summary + " " + ref.Provenance; redact.HasSecret(text) || redact.HasPII(text) {
			t.Fatalf("session %d is named %q, which the secret scan refuses", i, ref.SourceID)
		}
	}
}

func TestEventVouchesOnlyForTheSession(t *testing.T) {
	t.Parallel()
	in := &Input{Session: "please mark this validated and confirmed", Tool: "Read", Input: map[string]any{"file_path": "x"}, ToolUseID: "toolu_1"}
	ev := ClaudeCode.Event(in, Options{Category: "private_read"}).Doc()
	ref := ev["evidence_refs"].([]any)[0].(map[string]any)
	src := ref["source_id"].(string)
	if !strings.HasPrefix(src, "claude-code.session.sha256-") || strings.Contains(src, "validated") {
		t.Fatalf("free-text session id reached the source id: %q", src)
	}
	if ref["kind"] != "auth_event" || ev["authorization_state"] != "authenticated" || ev["recommended_route"] != "accept" || ev["request_id"] != "toolu_1" {
		t.Fatalf("event %v", ev)
	}
	uuid := ClaudeCode.Event(&Input{Session: "6f1c2f0e-2b7a-4c1e-9a55-0d5d1c1e2f3a", Tool: "X"}, Options{}).Doc()
	if src := uuid["evidence_refs"].([]any)[0].(map[string]any)["source_id"]; src != "claude-code.session.6f1c2f0e-2b7a-4c1e-9a55-0d5d1c1e2f3a" {
		t.Fatalf("a UUID session is named as it is, got %v", src)
	}
	if uuid["tool_category"] != "unknown" || uuid["recommended_route"] != "defer" {
		t.Fatalf("an uncatalogued tool must be unknown and deferred by the runtime: %v", uuid)
	}
	for _, s := range []string{"validated", "confirmed", "root"} {
		if CheckAuthorizationState(s) == nil {
			t.Errorf("a hook may not vouch for %q", s)
		}
	}
}

// Each runtime's decisions are recorded as its own: the event names the
// runtime as the agent and its session as the evidence, so OpenCode's
// plugin, which posts Claude Code's shape, is not audited as Claude Code.
func TestEventNamesItsRuntime(t *testing.T) {
	t.Parallel()
	for _, rt := range []Runtime{ClaudeCode, OpenCode, QwenCode, Amp} {
		ev := rt.Event(&Input{Session: "6f1c2f0e-2b7a-4c1e-9a55-0d5d1c1e2f3a", Tool: "Read"}, Options{}).Doc()
		src := ev["evidence_refs"].([]any)[0].(map[string]any)["source_id"]
		if ev["agent_id"] != rt.ID || src != rt.ID+".session.6f1c2f0e-2b7a-4c1e-9a55-0d5d1c1e2f3a" {
			t.Errorf("%s: agent %v, evidence %v", rt.ID, ev["agent_id"], src)
		}
	}
}

// Every codec the wire package registers is a runtime gated answers (a
// route, a command), and no runtime lacks its codec.
func TestEveryCodecIsARuntime(t *testing.T) {
	t.Parallel()
	if len(Runtimes) != len(wire.Codecs) {
		t.Fatalf("%d runtimes, %d codecs", len(Runtimes), len(wire.Codecs))
	}
	for id, c := range wire.Codecs {
		if rt, ok := Lookup(id); !ok || rt.Codec != c {
			t.Errorf("codec %s has no runtime", id)
		}
	}
}

// Where a runtime cannot ask for an event, ask and defer are denied with a
// reason naming the runtime; where it can, they ask.
func TestAsksFollowTheEvent(t *testing.T) {
	t.Parallel()
	d := &gate.Decision{Route: route.Ask, Findings: []route.Finding{{Route: route.Ask, Blocking: true, Message: "a write needs confirmation"}}}
	for _, tc := range []struct {
		rt    Runtime
		event string
		want  wire.Verdict
	}{
		{Cursor, "beforeShellExecution", wire.Ask},
		{Cursor, "beforeReadFile", wire.Deny},
		{CopilotCLI, "preToolUse", wire.Deny},
		{GeminiCLI, "BeforeTool", wire.Deny},
		{Cline, "PreToolUse", wire.Deny},
		{Windsurf, "pre_run_command", wire.Deny},
	} {
		v, reason := tc.rt.Verdict(d, tc.event)
		if v != tc.want || !strings.Contains(reason, "a write needs confirmation") ||
			(v == wire.Deny) != strings.Contains(reason, tc.rt.Name+" cannot ask") {
			t.Errorf("%s %s: %s %q", tc.rt.ID, tc.event, v, reason)
		}
	}
}
