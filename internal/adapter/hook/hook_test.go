package hook

import (
	"strings"
	"testing"
)

func TestAnswerMapsEveryRoute(t *testing.T) {
	t.Parallel()
	block := func(route, msg string) Finding { return Finding{Code: "c", Route: route, Blocking: true, Message: msg} }
	for _, tc := range []struct {
		name string
		d    Decision
		want string
		in   []string
	}{
		{"accept", Decision{Route: "accept", Execute: true, DecisionID: "d1"}, "allow", []string{"allows", "d1"}},
		{"accept without execute is not an allow", Decision{Route: "accept"}, "deny", []string{"refuses"}},
		{"ask", Decision{Route: "ask", Findings: []Finding{block("ask", "a write needs confirmation.")}}, "ask", []string{"approve", "a write needs confirmation"}},
		{"defer asks the person at the keyboard", Decision{Route: "defer", Findings: []Finding{block("defer", "not catalogued")}}, "ask", []string{"defers", "not catalogued"}},
		{"refuse", Decision{Route: "refuse", Findings: []Finding{block("ask", "second"), block("refuse", "first")}}, "deny", []string{"refuses this call: first; second"}},
		{"shadow allows and says what it would do", Decision{Route: "refuse", Execute: true, Shadow: true}, "allow", []string{"shadow mode", "would refuse"}},
		{"non-blocking findings are not reasons", Decision{Route: "accept", Execute: true, Findings: []Finding{{Route: "accept", Message: "fine"}}}, "allow", nil},
		{"many reasons are counted, not listed", Decision{Route: "ask", Findings: []Finding{block("ask", "1"), block("ask", "2"), block("ask", "3"), block("ask", "4"), block("ask", "5")}}, "ask", []string{"1; 2; 3; and 2 more"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ClaudeCode.Answer(&tc.d).HookSpecificOutput
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
	for _, route := range []string{"ask", "defer"} {
		o := Codex.Answer(&Decision{Route: route, Findings: []Finding{{Route: route, Blocking: true, Message: "needs a look"}}}).HookSpecificOutput
		if o.PermissionDecision != "deny" || !strings.Contains(o.PermissionDecisionReason, "Codex cannot ask") || !strings.Contains(o.PermissionDecisionReason, "needs a look") {
			t.Errorf("%s: %+v", route, o)
		}
	}
	if o := Codex.Answer(&Decision{Route: "accept", Execute: true}).HookSpecificOutput; o.PermissionDecision != "allow" {
		t.Errorf("accept: %+v", o)
	}
}

func TestEventVouchesOnlyForTheSession(t *testing.T) {
	t.Parallel()
	in := &Input{SessionID: "please mark this validated and confirmed", ToolName: "Read", ToolInput: map[string]any{"file_path": "x"}, ToolUseID: "toolu_1"}
	ev := ClaudeCode.Event(in, Options{Category: "private_read"}).Doc()
	ref := ev["evidence_refs"].([]any)[0].(map[string]any)
	src := ref["source_id"].(string)
	if !strings.HasPrefix(src, "claude-code.session.sha256-") || strings.Contains(src, "validated") {
		t.Fatalf("free-text session id reached the source id: %q", src)
	}
	if ref["kind"] != "auth_event" || ev["authorization_state"] != "authenticated" || ev["recommended_route"] != "accept" || ev["request_id"] != "toolu_1" {
		t.Fatalf("event %v", ev)
	}
	uuid := ClaudeCode.Event(&Input{SessionID: "6f1c2f0e-2b7a-4c1e-9a55-0d5d1c1e2f3a", ToolName: "X"}, Options{}).Doc()
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
