package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/adapter/hook/wire"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/server"
)

// hookVerdict reads the verdict out of the answer of /v1/hooks/<runtime>,
// in that runtime's shape; an answer that is not the runtime's fails.
func hookVerdict(t *testing.T, path string, raw []byte) wire.Verdict {
	t.Helper()
	id := strings.TrimPrefix(path, "/v1/hooks/")
	c, ok := wire.Lookup(id)
	if !ok {
		t.Fatalf("no codec for %s", path)
	}
	v, _, err := c.Verdict(raw)
	if err != nil {
		t.Fatalf("%s answered %s, not %s's answer: %v", path, raw, c.Name, err)
	}
	return v
}

// One catalog decides every runtime's calls, as each runtime sends them: a
// harmless read runs, a secret read and a recursive delete never do, and
// the delete is asked only where the runtime can ask.
func TestHookEndpointsOfEveryRuntime(t *testing.T) {
	t.Parallel()
	cat, err := catalog.Load([]string{"../../examples/claude-code/catalog"})
	if err != nil {
		t.Fatal(err)
	}
	f := newServer(t, func(d *server.Deps) {
		d.Engine = gate.New(gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce))
	})
	for _, tc := range []struct {
		name, runtime, body string
		want                wire.Verdict
		reason              string
	}{
		{"copilot-cli read", "copilot-cli", `{"timestamp":1,"cwd":"/w","toolName":"view","toolArgs":"{\"path\":\"/w/README.md\"}"}`, wire.Allow, "allows"},
		{"copilot-cli secret", "copilot-cli", `{"timestamp":1,"cwd":"/w","toolName":"view","toolArgs":"{\"path\":\"/w/.env\"}"}`, wire.Deny, "secret files"},
		{"copilot-cli delete", "copilot-cli", `{"timestamp":1,"cwd":"/w","toolName":"bash","toolArgs":"{\"command\":\"rm -rf canary\"}"}`, wire.Deny, "cannot ask"},
		{"copilot-cli shell read", "copilot-cli", `{"timestamp":1,"cwd":"/w","toolName":"bash","toolArgs":"{\"command\":\"cat README.md\"}"}`, wire.Allow, "allows"},
		{"copilot-cli shell cat .env", "copilot-cli", `{"timestamp":1,"cwd":"/w","toolName":"bash","toolArgs":"{\"command\":\"cat .env\"}"}`, wire.Deny, ""},
		{"copilot-cli toolArgs not JSON", "copilot-cli", `{"timestamp":1,"cwd":"/w","toolName":"bash","toolArgs":"rm -rf /"}`, wire.Deny, "could not check"},
		{"gemini read", "gemini-cli", `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"file_path":"README.md"}}`, wire.Allow, "allows"},
		{"gemini secret, older argument name", "gemini-cli", `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"absolute_path":"/w/.env"}}`, wire.Deny, "secret files"},
		{"gemini delete", "gemini-cli", `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"rm -rf canary"}}`, wire.Deny, "cannot ask"},
		{"gemini read elsewhere is not a read", "gemini-cli", `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"cat passwd","dir_path":"/etc"}}`, wire.Deny, "cannot ask"},
		{"gemini read of a range", "gemini-cli", `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"file_path":"README.md","start_line":1,"end_line":20}}`, wire.Allow, "allows"},
		{"gemini shell read in the background", "gemini-cli", `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"git status","is_background":false}}`, wire.Allow, "allows"},
		{"gemini AfterTool", "gemini-cli", `{"session_id":"s","cwd":"/w","hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{"file_path":"README.md"}}`, wire.Deny, "BeforeTool"},
		{"cursor shell asks", "cursor", `{"hook_event_name":"beforeShellExecution","conversation_id":"c","workspace_roots":["/w"],"command":"rm -rf canary","cwd":"/w"}`, wire.Ask, "approve"},
		{"cursor read", "cursor", `{"hook_event_name":"beforeReadFile","conversation_id":"c","workspace_roots":["/w"],"file_path":"/w/README.md","content":"# hi"}`, wire.Allow, "allows"},
		{"cursor secret", "cursor", `{"hook_event_name":"beforeReadFile","conversation_id":"c","workspace_roots":["/w"],"file_path":"/w/.env","content":"K=v"}`, wire.Deny, "secret files"},
		{"cursor preToolUse cannot ask", "cursor", `{"hook_event_name":"preToolUse","workspace_roots":["/w"],"tool_name":"Shell","tool_input":{"command":"rm -rf canary"}}`, wire.Deny, "cannot ask"},
		{"cursor unknown event", "cursor", `{"hook_event_name":"afterShellExecution","command":"ls"}`, wire.Deny, "could not check"},
		{"cline read", "cline", `{"clineVersion":"3.36.0","hookName":"PreToolUse","timestamp":"1","taskId":"t","workspaceRoots":["/w"],"userId":"u","preToolUse":{"toolName":"read_file","parameters":{"path":"README.md"}}}`, wire.Allow, ""},
		{"cline secret", "cline", `{"hookName":"PreToolUse","taskId":"t","workspaceRoots":["/w"],"preToolUse":{"toolName":"read_file","parameters":{"path":".env"}}}`, wire.Deny, "secret files"},
		{"cline delete", "cline", `{"hookName":"PreToolUse","taskId":"t","workspaceRoots":["/w"],"preToolUse":{"toolName":"execute_command","parameters":{"command":"rm -rf canary","requires_approval":"false"}}}`, wire.Deny, "cannot ask"},
		{"cline no preToolUse", "cline", `{"hookName":"PreToolUse"}`, wire.Deny, "could not check"},
		{"cline not JSON", "cline", `{`, wire.Deny, "could not check"},
		{"goose delete", "goose", `{"event":"PreToolUse","session_id":"s","tool_name":"developer__shell","tool_input":{"command":"rm -rf canary"},"working_dir":"/w"}`, wire.Deny, "cannot ask"},
		{"goose shell read", "goose", `{"event":"PreToolUse","session_id":"s","tool_name":"developer__shell","tool_input":{"command":"cat README.md"},"working_dir":"/w"}`, wire.Allow, ""},
		{"goose write of a secret", "goose", `{"event":"PreToolUse","session_id":"s","tool_name":"developer__write","tool_input":{"path":"/w/.env","content":"K=v"},"working_dir":"/w"}`, wire.Deny, "secret files"},
		{"windsurf secret", "windsurf", `{"agent_action_name":"pre_read_code","trajectory_id":"t","execution_id":"e","tool_info":{"file_path":"/w/.env"}}`, wire.Deny, "secret files"},
		{"windsurf read", "windsurf", `{"agent_action_name":"pre_read_code","trajectory_id":"t","execution_id":"e","tool_info":{"file_path":"/w/README.md"}}`, wire.Allow, "allows"},
		{"windsurf delete", "windsurf", `{"agent_action_name":"pre_run_command","trajectory_id":"t","execution_id":"e","tool_info":{"command_line":"rm -rf canary","cwd":"/w"}}`, wire.Deny, "cannot ask"},
		{"opencode read", "opencode", `{"hook_event_name":"PreToolUse","session_id":"ses_1","cwd":"/w","tool_name":"Read","tool_input":{"file_path":"README.md"},"tool_use_id":"call_1"}`, wire.Allow, "allows"},
		{"opencode delete cannot ask", "opencode", `{"hook_event_name":"PreToolUse","session_id":"ses_1","cwd":"/w","tool_name":"Bash","tool_input":{"command":"rm -rf canary"}}`, wire.Deny, "OpenCode cannot ask"},
		{"qwen-code read", "qwen-code", `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"read_file","tool_input":{"file_path":"README.md"}}`, wire.Allow, "allows"},
		{"qwen-code secret", "qwen-code", `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"read_file","tool_input":{"file_path":"/w/.env"}}`, wire.Deny, "secret files"},
		{"qwen-code delete asks", "qwen-code", `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"run_shell_command","tool_input":{"command":"rm -rf canary"}}`, wire.Ask, "approve"},
		{"amp read", "amp", `{"tool_name":"Read","tool_input":{"path":"/w/README.md"},"thread_id":"T-1","cwd":"/w"}`, wire.Allow, "allows"},
		{"amp secret", "amp", `{"tool_name":"Read","tool_input":{"path":"/w/.env"},"cwd":"/w"}`, wire.Deny, "secret files"},
		{"amp delete asks", "amp", `{"tool_name":"Bash","tool_input":{"cmd":"rm -rf canary"},"cwd":"/w"}`, wire.Ask, "approve"},
		{"amp no tool", "amp", `{"tool_input":{"cmd":"ls"}}`, wire.Deny, "could not check"},
		{"kiro delete", "kiro-cli", `{"hook_event_name":"preToolUse","cwd":"/w","tool_name":"execute_bash","tool_input":{"command":"rm -rf canary"}}`, wire.Deny, "cannot ask"},
		{"kiro read of two files is not a read", "kiro-cli", `{"hook_event_name":"preToolUse","cwd":"/w","tool_name":"read","tool_input":{"operations":[{"mode":"Line","path":"README.md"},{"mode":"Line","path":".env"}]}}`, wire.Deny, ""},
		{"kiro read of a secret through operations", "kiro-cli", `{"hook_event_name":"preToolUse","cwd":"/w","tool_name":"fs_read","tool_input":{"operations":[{"mode":"Line","path":".env"}]}}`, wire.Deny, "secret files"},
		{"kiro read", "kiro-cli", `{"hook_event_name":"preToolUse","cwd":"/w","tool_name":"fs_read","tool_input":{"path":"README.md"}}`, wire.Allow, "allows"},
		{"droid delete", "droid", `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Execute","tool_input":{"command":"rm -rf canary"}}`, wire.Deny, "cannot ask"},
		{"droid secret", "droid", `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/w/.env"}}`, wire.Deny, "secret files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "/v1/hooks/" + tc.runtime
			res := f.do(request{method: http.MethodPost, target: path, body: strings.NewReader(tc.body), header: bearer(runtimeSecret)})
			if res.status != http.StatusOK {
				t.Fatalf("status %d %s", res.status, res.raw)
			}
			if got := hookVerdict(t, path, res.raw); got != tc.want {
				t.Fatalf("got %s, want %s: %s", got, tc.want, res.raw)
			}
			if !strings.Contains(string(res.raw), tc.reason) {
				t.Errorf("answer %s lacks %q", res.raw, tc.reason)
			}
		})
	}
}
