package wire

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test input %s: %v", s, err)
	}
	return m
}

// parsed is what codec reads from in, which it must read.
func parsed(t *testing.T, codec *Codec, in string) *Call {
	t.Helper()
	c, err := codec.Parse(decode(t, in))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// refused checks that codec refuses in with an error saying want.
func refused(t *testing.T, codec *Codec, in, want string) {
	t.Helper()
	if c, err := codec.Parse(decode(t, in)); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("parsed %+v (error %v), want an error saying %q", c, err, want)
	}
}

// Each runtime's documented input, read into the catalog's terms.
func TestParseMapsToTheCatalog(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		codec *Codec
		in    string
		want  Call
	}{
		{"claude-code as it was", ClaudeCode,
			`{"session_id":"s1","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"a"},"tool_use_id":"toolu_1"}`,
			Call{Event: "PreToolUse", Tool: "Read", Input: map[string]any{"file_path": "a"}, Cwd: "/w", Session: "s1", ToolUseID: "toolu_1"}},
		{"codex keeps its names", Codex,
			`{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch"}}`,
			Call{Event: "PreToolUse", Tool: "apply_patch", Input: map[string]any{"command": "*** Begin Patch"}}},
		{"copilot-cli bash, toolArgs a JSON string", CopilotCLI,
			`{"timestamp":1704614600000,"cwd":"/w","toolName":"bash","toolArgs":"{\"command\":\"rm -rf dist\",\"description\":\"Clean\"}"}`,
			Call{Event: "preToolUse", Tool: "Bash", Input: map[string]any{"command": "rm -rf dist", "description": "Clean"}, Cwd: "/w"}},
		{"copilot-cli view", CopilotCLI,
			`{"timestamp":1,"cwd":"/w","toolName":"view","toolArgs":"{\"path\":\"/w/.env\"}"}`,
			Call{Event: "preToolUse", Tool: "Read", Input: map[string]any{"file_path": "/w/.env"}, Cwd: "/w"}},
		{"copilot-cli create", CopilotCLI,
			`{"timestamp":1,"cwd":"/w","toolName":"create","toolArgs":"{\"path\":\"a.go\",\"file_text\":\"package a\"}"}`,
			Call{Event: "preToolUse", Tool: "Write", Input: map[string]any{"file_path": "a.go", "content": "package a"}, Cwd: "/w"}},
		{"copilot-cli edit", CopilotCLI,
			`{"timestamp":1,"cwd":"/w","toolName":"edit","toolArgs":"{\"path\":\"a.go\",\"old_str\":\"x\",\"new_str\":\"y\"}"}`,
			Call{Event: "preToolUse", Tool: "Edit", Input: map[string]any{"file_path": "a.go", "old_string": "x", "new_string": "y"}, Cwd: "/w"}},
		{"copilot-cli toolArgs as an object (the SDK's shape)", CopilotCLI,
			`{"cwd":"/w","toolName":"BASH","toolArgs":{"command":"ls"}}`,
			Call{Event: "preToolUse", Tool: "Bash", Input: map[string]any{"command": "ls"}, Cwd: "/w"}},
		{"copilot-cli PascalCase: Claude's names, Copilot's arguments", CopilotCLI,
			`{"hook_event_name":"PreToolUse","session_id":"s1","timestamp":"2026-11-27T04:00:00Z","cwd":"/w","tool_name":"Read","tool_input":{"path":"/w/.env"}}`,
			Call{Event: "PreToolUse", Tool: "Read", Input: map[string]any{"file_path": "/w/.env"}, Cwd: "/w", Session: "s1"}},
		{"copilot-cli sessionId and toolArgs as an object", CopilotCLI,
			`{"sessionId":"s2","timestamp":1,"cwd":"/w","toolName":"create","toolArgs":{"path":"a","file_text":"b"}}`,
			Call{Event: "preToolUse", Tool: "Write", Input: map[string]any{"file_path": "a", "content": "b"}, Cwd: "/w", Session: "s2"}},
		{"copilot-cli unknown tool passes by name", CopilotCLI,
			`{"cwd":"/w","toolName":"powershell","toolArgs":"{\"command\":\"Remove-Item x\"}"}`,
			Call{Event: "preToolUse", Tool: "powershell", Input: map[string]any{"command": "Remove-Item x"}, Cwd: "/w"}},
		{"gemini run_shell_command", GeminiCLI,
			`{"session_id":"g1","transcript_path":"/t","cwd":"/w","hook_event_name":"BeforeTool","timestamp":"2026-01-01T00:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"ls","description":"list"}}`,
			Call{Event: "BeforeTool", Tool: "Bash", Input: map[string]any{"command": "ls", "description": "list"}, Cwd: "/w", Session: "g1"}},
		{"gemini shell elsewhere starts with cd", GeminiCLI,
			`{"hook_event_name":"BeforeTool","cwd":"/w","tool_name":"run_shell_command","tool_input":{"command":"cat passwd","dir_path":"/etc/it's"}}`,
			Call{Event: "BeforeTool", Tool: "Bash", Input: map[string]any{"command": `cd '/etc/it'\''s' && cat passwd`}, Cwd: "/w"}},
		{"gemini shell in the workspace stays as it is", GeminiCLI,
			`{"hook_event_name":"BeforeTool","cwd":"/w","tool_name":"run_shell_command","tool_input":{"command":"ls","directory":"."}}`,
			Call{Event: "BeforeTool", Tool: "Bash", Input: map[string]any{"command": "ls"}, Cwd: "/w"}},
		{"gemini read_file absolute_path (older)", GeminiCLI,
			`{"hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"absolute_path":"/w/.env"}}`,
			Call{Event: "BeforeTool", Tool: "Read", Input: map[string]any{"file_path": "/w/.env"}}},
		{"gemini read_file file_path (newer)", GeminiCLI,
			`{"hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"file_path":"README.md","offset":0}}`,
			Call{Event: "BeforeTool", Tool: "Read", Input: map[string]any{"file_path": "README.md", "offset": 0.0}}},
		{"gemini write_file", GeminiCLI,
			`{"hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":"a","content":"b"}}`,
			Call{Event: "BeforeTool", Tool: "Write", Input: map[string]any{"file_path": "a", "content": "b"}}},
		{"gemini MCP by its context", GeminiCLI,
			`{"hook_event_name":"BeforeTool","tool_name":"create_issue","tool_input":{"title":"t"},"mcp_context":{"server_name":"github","tool_name":"create_issue"}}`,
			Call{Event: "BeforeTool", Tool: "mcp__github__create_issue", Input: map[string]any{"title": "t"}}},
		{"cursor beforeShellExecution", Cursor,
			`{"hook_event_name":"beforeShellExecution","conversation_id":"c1","generation_id":"g","workspace_roots":["/w"],"command":"git status","cwd":"/w/sub"}`,
			Call{Event: "beforeShellExecution", Tool: "Bash", Input: map[string]any{"command": "git status"}, Cwd: "/w/sub", Session: "c1"}},
		{"cursor beforeReadFile drops the content", Cursor,
			`{"hook_event_name":"beforeReadFile","conversation_id":"c1","workspace_roots":["/w"],"file_path":"/w/.env","content":"API_KEY=x"}`,
			Call{Event: "beforeReadFile", Tool: "Read", Input: map[string]any{"file_path": "/w/.env"}, Cwd: "/w", Session: "c1"}},
		{"cursor beforeMCPExecution, tool_input a JSON string", Cursor,
			`{"hook_event_name":"beforeMCPExecution","workspace_roots":["/w"],"tool_name":"MCP:github:create_issue","tool_input":"{\"title\":\"t\"}","url":"http://localhost:3000"}`,
			Call{Event: "beforeMCPExecution", Tool: "mcp__github__create_issue", Input: map[string]any{"title": "t"}, Cwd: "/w"}},
		{"cursor beforeMCPExecution, plain tool name, still an MCP tool", Cursor,
			`{"hook_event_name":"beforeMCPExecution","tool_name":"database_query","tool_input":{"query":"SELECT 1"},"command":"npx mcp-server"}`,
			Call{Event: "beforeMCPExecution", Tool: "mcp__database_query", Input: map[string]any{"query": "SELECT 1"}}},
		{"cursor preToolUse Shell", Cursor,
			`{"hook_event_name":"preToolUse","conversation_id":"c1","workspace_roots":["/w"],"tool_name":"Shell","tool_input":{"command":"ls","working_directory":"/tmp"},"tool_use_id":"tu1"}`,
			Call{Event: "preToolUse", Tool: "Bash", Input: map[string]any{"command": "cd '/tmp' && ls"}, Cwd: "/w", Session: "c1", ToolUseID: "tu1"}},
		{"cursor preToolUse Write", Cursor,
			`{"hook_event_name":"preToolUse","tool_name":"Write","tool_input":{"file_path":"a.go","contents":"x"}}`,
			Call{Event: "preToolUse", Tool: "Write", Input: map[string]any{"file_path": "a.go", "content": "x"}}},
		{"cline execute_command", Cline,
			`{"clineVersion":"3.36.0","hookName":"PreToolUse","timestamp":"1","taskId":"t1","workspaceRoots":["/w"],"userId":"u","preToolUse":{"toolName":"execute_command","parameters":{"command":"rm -rf build","requires_approval":"false"}}}`,
			Call{Event: "PreToolUse", Tool: "Bash", Input: map[string]any{"command": "rm -rf build", "requires_approval": "false"}, Cwd: "/w", Session: "t1"}},
		{"cline read_file", Cline,
			`{"hookName":"PreToolUse","taskId":"t1","workspaceRoots":["/w"],"preToolUse":{"toolName":"read_file","parameters":{"path":".env"}}}`,
			Call{Event: "PreToolUse", Tool: "Read", Input: map[string]any{"file_path": ".env"}, Cwd: "/w", Session: "t1"}},
		{"cline write_to_file", Cline,
			`{"hookName":"PreToolUse","preToolUse":{"toolName":"write_to_file","parameters":{"path":"a.js","content":"x"}}}`,
			Call{Event: "PreToolUse", Tool: "Write", Input: map[string]any{"file_path": "a.js", "content": "x"}}},
		{"cline use_mcp_tool", Cline,
			`{"hookName":"PreToolUse","preToolUse":{"toolName":"use_mcp_tool","parameters":{"server_name":"github","tool_name":"create_issue","arguments":"{\"title\":\"t\"}"}}}`,
			Call{Event: "PreToolUse", Tool: "mcp__github__create_issue", Input: map[string]any{"title": "t"}}},
		{"goose shell", Goose,
			`{"event":"PreToolUse","session_id":"abc-123","matcher_context":"developer__shell","tool_name":"developer__shell","tool_input":{"command":"rm -rf canary"},"working_dir":"/w","tool_call_id":"call_1"}`,
			Call{Event: "PreToolUse", Tool: "Bash", Input: map[string]any{"command": "rm -rf canary"}, Cwd: "/w", Session: "abc-123", ToolUseID: "call_1"}},
		{"goose edit", Goose,
			`{"event":"PreToolUse","session_id":"s","tool_name":"developer__edit","tool_input":{"path":"a.go","before":"x","after":"y"},"working_dir":"/w"}`,
			Call{Event: "PreToolUse", Tool: "Edit", Input: map[string]any{"file_path": "a.go", "old_string": "x", "new_string": "y"}, Cwd: "/w", Session: "s"}},
		{"windsurf run command", Windsurf,
			`{"agent_action_name":"pre_run_command","trajectory_id":"t1","execution_id":"e1","timestamp":"2026-11-27T04:00:00Z","tool_info":{"command_line":"rm -rf canary","cwd":"/w"}}`,
			Call{Event: "pre_run_command", Tool: "Bash", Input: map[string]any{"command": "rm -rf canary"}, Cwd: "/w", Session: "t1", ToolUseID: "e1"}},
		{"windsurf read", Windsurf,
			`{"agent_action_name":"pre_read_code","trajectory_id":"t1","execution_id":"e2","tool_info":{"file_path":"/w/.env"}}`,
			Call{Event: "pre_read_code", Tool: "Read", Input: map[string]any{"file_path": "/w/.env"}, Session: "t1", ToolUseID: "e2"}},
		{"windsurf write", Windsurf,
			`{"agent_action_name":"pre_write_code","tool_info":{"file_path":"/w/a.go","edits":[{"old_string":"x","new_string":"y"}]}}`,
			Call{Event: "pre_write_code", Tool: "MultiEdit", Input: map[string]any{"file_path": "/w/a.go", "edits": []any{map[string]any{"old_string": "x", "new_string": "y"}}}}},
		{"windsurf MCP", Windsurf,
			`{"agent_action_name":"pre_mcp_tool_use","tool_info":{"mcp_server_name":"github","mcp_tool_name":"create_issue","mcp_tool_arguments":{"title":"t"}}}`,
			Call{Event: "pre_mcp_tool_use", Tool: "mcp__github__create_issue", Input: map[string]any{"title": "t"}}},
		{"kiro shell", KiroCLI,
			`{"hook_event_name":"preToolUse","cwd":"/w","tool_name":"execute_bash","tool_input":{"command":"ls"}}`,
			Call{Event: "preToolUse", Tool: "Bash", Input: map[string]any{"command": "ls"}, Cwd: "/w"}},
		{"kiro read", KiroCLI,
			`{"hook_event_name":"preToolUse","cwd":"/w","tool_name":"read","tool_input":{"path":".env"}}`,
			Call{Event: "preToolUse", Tool: "Read", Input: map[string]any{"file_path": ".env"}, Cwd: "/w"}},
		{"kiro read of one file through operations", KiroCLI,
			`{"hook_event_name":"preToolUse","cwd":"/w","tool_name":"fs_read","tool_input":{"operations":[{"mode":"Line","path":"/w/.env"}]}}`,
			Call{Event: "preToolUse", Tool: "Read", Input: map[string]any{"file_path": "/w/.env"}, Cwd: "/w"}},
		{"kiro read of two files keeps its list", KiroCLI,
			`{"hook_event_name":"preToolUse","cwd":"/w","tool_name":"read","tool_input":{"operations":[{"path":"a"},{"path":"b"}]}}`,
			Call{Event: "preToolUse", Tool: "Read", Input: map[string]any{"operations": []any{map[string]any{"path": "a"}, map[string]any{"path": "b"}}}, Cwd: "/w"}},
		{"droid Execute, snake_case", Droid,
			`{"session_id":"s","transcript_path":"/t","cwd":"/w","permission_mode":"auto-full","hook_event_name":"PreToolUse","tool_name":"Execute","tool_input":{"command":"rm -rf canary"}}`,
			Call{Event: "PreToolUse", Tool: "Bash", Input: map[string]any{"command": "rm -rf canary"}, Cwd: "/w", Session: "s"}},
		{"droid Create, camelCase common fields", Droid,
			`{"sessionId":"s","cwd":"/w","hookEventName":"PreToolUse","tool_name":"Create","tool_input":{"file_path":"a.go","content":"x"}}`,
			Call{Event: "PreToolUse", Tool: "Write", Input: map[string]any{"file_path": "a.go", "content": "x"}, Cwd: "/w", Session: "s"}},
		{"opencode as the plugin posts it", OpenCode,
			`{"hook_event_name":"PreToolUse","session_id":"ses_1","cwd":"/w","tool_name":"Read","tool_input":{"file_path":"a"},"tool_use_id":"call_1"}`,
			Call{Event: "PreToolUse", Tool: "Read", Input: map[string]any{"file_path": "a"}, Cwd: "/w", Session: "ses_1", ToolUseID: "call_1"}},
		{"qwen-code read_file", QwenCode,
			`{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"read_file","tool_input":{"file_path":".env"},"tool_use_id":"toolu_1","tool_call_id":"call_1"}`,
			Call{Event: "PreToolUse", Tool: "Read", Input: map[string]any{"file_path": ".env"}, Cwd: "/w", Session: "s", ToolUseID: "toolu_1"}},
		{"qwen-code edit", QwenCode,
			`{"hook_event_name":"PreToolUse","tool_name":"edit","tool_input":{"file_path":"a","old_string":"x","new_string":"y"}}`,
			Call{Event: "PreToolUse", Tool: "Edit", Input: map[string]any{"file_path": "a", "old_string": "x", "new_string": "y"}}},
		{"qwen-code shell in a directory", QwenCode,
			`{"hook_event_name":"PreToolUse","tool_name":"run_shell_command","tool_input":{"command":"ls","directory":"/etc"}}`,
			Call{Event: "PreToolUse", Tool: "Bash", Input: map[string]any{"command": "cd '/etc' && ls"}}},
		{"amp Bash in a directory", Amp,
			`{"tool_name":"Bash","tool_input":{"cmd":"ls","cwd":"core/src"},"thread_id":"T-1","cwd":"/w"}`,
			Call{Tool: "Bash", Input: map[string]any{"command": "cd 'core/src' && ls"}, Cwd: "/w", Session: "T-1"}},
		{"amp edit_file", Amp,
			`{"tool_name":"edit_file","tool_input":{"path":"a","old_str":"x","new_str":"y"}}`,
			Call{Tool: "Edit", Input: map[string]any{"file_path": "a", "old_string": "x", "new_string": "y"}}},
		{"amp glob", Amp,
			`{"tool_name":"glob","tool_input":{"filePattern":"**/*.go"}}`,
			Call{Tool: "Glob", Input: map[string]any{"pattern": "**/*.go"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parsed(t, tc.codec, tc.in); !reflect.DeepEqual(*got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", *got, tc.want)
			}
		})
	}
}

// What cannot be read is an error, which the caller denies: never a call
// that slips through under another name or without its arguments.
func TestParseRefusesWhatItCannotRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		codec *Codec
		in    string
		want  string
	}{
		{"claude-code other event", ClaudeCode, `{"hook_event_name":"PostToolUse","tool_name":"Read"}`, "PreToolUse hooks only"},
		{"claude-code tool_input a string", ClaudeCode, `{"tool_name":"Bash","tool_input":"{\"command\":\"ls\"}"}`, "wrong type"},
		{"claude-code no tool", ClaudeCode, `{"hook_event_name":"PreToolUse","tool_input":{}}`, "names no tool"},
		{"claude-code session a number", ClaudeCode, `{"tool_name":"Read","session_id":5}`, "wrong type"},
		{"copilot-cli toolArgs not JSON", CopilotCLI, `{"toolName":"bash","toolArgs":"rm -rf /"}`, "not a JSON object"},
		{"copilot-cli toolArgs a JSON array", CopilotCLI, `{"toolName":"bash","toolArgs":"[\"rm\"]"}`, "not a JSON object"},
		{"copilot-cli toolArgs a number", CopilotCLI, `{"toolName":"bash","toolArgs":7}`, "wrong type"},
		{"copilot-cli other event", CopilotCLI, `{"hookEventName":"postToolUse","toolName":"bash","toolArgs":"{}"}`, "preToolUse hook only"},
		{"copilot-cli PascalCase input of another event", CopilotCLI, `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, "PreToolUse"},
		{"copilot-cli PascalCase input without its event", CopilotCLI, `{"tool_name":"Bash","tool_input":{"command":"ls"}}`, "PreToolUse"},
		{"copilot-cli no tool", CopilotCLI, `{"toolArgs":"{}"}`, "names no tool"},
		{"copilot-cli blank tool", CopilotCLI, `{"toolName":"  ","toolArgs":"{}"}`, "names no tool"},
		{"copilot-cli view with two paths", CopilotCLI, `{"toolName":"view","toolArgs":"{\"path\":\"README.md\",\"file_path\":\".env\"}"}`, "twice with different values"},
		{"gemini no event", GeminiCLI, `{"tool_name":"read_file","tool_input":{"file_path":"a"}}`, "BeforeTool hook only"},
		{"gemini AfterTool", GeminiCLI, `{"hook_event_name":"AfterTool","tool_name":"read_file"}`, "BeforeTool hook only"},
		{"gemini event in another case", GeminiCLI, `{"hook_event_name":"beforetool","tool_name":"read_file"}`, "BeforeTool hook only"},
		{"gemini two different paths", GeminiCLI, `{"hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"file_path":"README.md","absolute_path":"/w/.env"}}`, "twice with different values"},
		{"gemini dir_path not a string", GeminiCLI, `{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls","dir_path":["/etc"]}}`, "wrong type"},
		{"gemini tool_input a list", GeminiCLI, `{"hook_event_name":"BeforeTool","tool_name":"x","tool_input":[1]}`, "wrong type"},
		{"cursor unknown event", Cursor, `{"hook_event_name":"afterFileEdit","file_path":"a"}`, "not \"afterFileEdit\""},
		{"cursor no event", Cursor, `{"command":"ls"}`, "not \"\""},
		{"cursor shell without a command", Cursor, `{"hook_event_name":"beforeShellExecution","cwd":"/w"}`, "no command"},
		{"cursor read without a path", Cursor, `{"hook_event_name":"beforeReadFile","content":"x"}`, "no file_path"},
		{"cursor command not a string", Cursor, `{"hook_event_name":"beforeShellExecution","command":["rm","-rf"]}`, "wrong type"},
		{"cursor MCP input not JSON", Cursor, `{"hook_event_name":"beforeMCPExecution","tool_name":"q","tool_input":"{oops"}`, "not a JSON object"},
		{"cursor MCP without a tool", Cursor, `{"hook_event_name":"beforeMCPExecution","tool_input":{}}`, "names no tool"},
		{"cline other hook", Cline, `{"hookName":"PostToolUse","preToolUse":{"toolName":"read_file"}}`, "PreToolUse hook only"},
		{"cline no hook name", Cline, `{"preToolUse":{"toolName":"read_file"}}`, "PreToolUse hook only"},
		{"cline no preToolUse", Cline, `{"hookName":"PreToolUse"}`, "no preToolUse object"},
		{"cline MCP arguments not JSON", Cline, `{"hookName":"PreToolUse","preToolUse":{"toolName":"use_mcp_tool","parameters":{"server_name":"s","tool_name":"t","arguments":"nope"}}}`, "not a JSON object"},
		{"goose other event", Goose, `{"event":"PostToolUse","tool_name":"developer__shell","tool_input":{}}`, "PreToolUse hook only"},
		{"goose no event", Goose, `{"tool_name":"developer__shell","tool_input":{"command":"ls"}}`, "PreToolUse hook only"},
		{"windsurf post hook", Windsurf, `{"agent_action_name":"post_run_command","tool_info":{"command_line":"ls"}}`, "not \"post_run_command\""},
		{"windsurf command not a string", Windsurf, `{"agent_action_name":"pre_run_command","tool_info":{"command_line":["rm","-rf"]}}`, "no command_line"},
		{"windsurf no tool_info", Windsurf, `{"agent_action_name":"pre_read_code"}`, "no file_path"},
		{"windsurf MCP without a server", Windsurf, `{"agent_action_name":"pre_mcp_tool_use","tool_info":{"mcp_tool_name":"x"}}`, "no MCP server"},
		{"kiro PascalCase event", KiroCLI, `{"hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{}}`, "preToolUse hook only"},
		{"kiro postToolUse", KiroCLI, `{"hook_event_name":"postToolUse","tool_name":"shell","tool_input":{}}`, "preToolUse hook only"},
		{"droid two event spellings", Droid, `{"hookEventName":"PostToolUse","hook_event_name":"PreToolUse","tool_name":"Execute"}`, "different values"},
		{"droid other event", Droid, `{"hookEventName":"PostToolUse","tool_name":"Execute"}`, "PreToolUse hooks only"},
		{"qwen-code PostToolUse", QwenCode, `{"hook_event_name":"PostToolUse","tool_name":"read_file","tool_input":{}}`, "PreToolUse hooks only"},
		{"qwen-code two different paths", QwenCode, `{"hook_event_name":"PreToolUse","tool_name":"read_file","tool_input":{"file_path":"README.md","absolute_path":"/w/.env"}}`, "twice with different values"},
		{"opencode another event", OpenCode, `{"hook_event_name":"PostToolUse","tool_name":"Read"}`, "PreToolUse hooks only"},
		{"amp no tool", Amp, `{"tool_input":{"cmd":"ls"}}`, "names no tool"},
		{"amp arguments a list", Amp, `{"tool_name":"Bash","tool_input":["ls"]}`, "wrong type"},
		{"amp cwd not a string", Amp, `{"tool_name":"Bash","tool_input":{"cmd":"ls","cwd":1}}`, "wrong type"},
		{"cline MCP without a server", Cline, `{"hookName":"PreToolUse","preToolUse":{"toolName":"use_mcp_tool","parameters":{"tool_name":"t"}}}`, "no server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused(t, tc.codec, tc.in, tc.want)
		})
	}
}

// Every codec's failure blocks: by exit 2, or by a deny printed on stdout
// where the runtime reads only that; and what it sends reads back as a
// deny.
func TestEveryFailureBlocks(t *testing.T) {
	t.Parallel()
	for id, c := range Codecs {
		r := c.Fail("gated is unreachable", "")
		if r.Exit != 2 && !(r.Exit == 0 && !r.Quiet) {
			t.Errorf("%s: a failure exits %d, quiet %v", id, r.Exit, r.Quiet)
		}
		if !strings.Contains(r.Stderr, "gated is unreachable") {
			t.Errorf("%s: stderr %q lacks the reason", id, r.Stderr)
		}
		raw, _ := json.Marshal(r.Body)
		if v, _, err := c.Verdict(raw); err != nil || v != Deny {
			t.Errorf("%s: a failure answers %s (%v): %s", id, v, err, raw)
		}
		if back, err := c.Read(raw); err != nil || back.Exit == 0 && back.Quiet {
			t.Errorf("%s: a failure forwarded over HTTP reads back as %+v, %v", id, back, err)
		}
	}
}

// Each verdict in each runtime's words, ask only where the runtime can ask
// for that event; the reason reaches the person or the agent.
func TestAnswersInEachRuntimesWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		codec *Codec
		event string
		want  map[Verdict]string // the answer's JSON per verdict
	}{
		{ClaudeCode, "PreToolUse", map[Verdict]string{
			Allow: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"r"}}`,
			Ask:   `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"r"}}`,
			Deny:  `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"}}`}},
		{Codex, "PreToolUse", map[Verdict]string{
			Ask: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"}}`}},
		{CopilotCLI, "preToolUse", map[Verdict]string{
			Allow: `{"permissionDecision":"allow","permissionDecisionReason":"r"}`,
			Ask:   `{"permissionDecision":"deny","permissionDecisionReason":"r"}`,
			Deny:  `{"permissionDecision":"deny","permissionDecisionReason":"r"}`}},
		{GeminiCLI, "BeforeTool", map[Verdict]string{
			Allow: `{"decision":"allow","reason":"r"}`,
			Ask:   `{"decision":"deny","reason":"r"}`,
			Deny:  `{"decision":"deny","reason":"r"}`}},
		{Cursor, "beforeShellExecution", map[Verdict]string{
			Allow: `{"permission":"allow","user_message":"r","agent_message":"r"}`,
			Ask:   `{"permission":"ask","user_message":"r","agent_message":"r"}`,
			Deny:  `{"permission":"deny","user_message":"r","agent_message":"r"}`}},
		{Cursor, "beforeMCPExecution", map[Verdict]string{
			Ask: `{"permission":"ask","user_message":"r","agent_message":"r"}`}},
		{Cursor, "beforeReadFile", map[Verdict]string{
			Ask: `{"permission":"deny","user_message":"r","agent_message":"r"}`}},
		{Cursor, "preToolUse", map[Verdict]string{
			Ask: `{"permission":"deny","user_message":"r","agent_message":"r"}`}},
		{Goose, "PreToolUse", map[Verdict]string{
			Allow: `{"decision":"allow"}`,
			Ask:   `{"decision":"block","reason":"r"}`,
			Deny:  `{"decision":"block","reason":"r"}`}},
		{Droid, "PreToolUse", map[Verdict]string{
			Ask: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"}}`}},
		{QwenCode, "PreToolUse", map[Verdict]string{
			Ask: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"r"}}`}},
		{OpenCode, "PreToolUse", map[Verdict]string{
			Ask: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"}}`}},
		{Cline, "PreToolUse", map[Verdict]string{
			Allow: `{"cancel":false}`,
			Ask:   `{"cancel":true,"errorMessage":"r"}`,
			Deny:  `{"cancel":true,"errorMessage":"r"}`}},
	} {
		for v, want := range tc.want {
			r := tc.codec.Answer(v, "r", tc.event)
			got, _ := json.Marshal(r.Body)
			if string(got) != want || r.Exit != 0 {
				t.Errorf("%s %s %s: exit %d %s, want %s", tc.codec.ID, tc.event, v, r.Exit, got, want)
			}
		}
	}
}

// Windsurf and Kiro read only the exit code: an allow exits 0 quietly, a
// deny or an ask exits 2 with the reason on stderr.
func TestExitCodeRuntimes(t *testing.T) {
	t.Parallel()
	for _, c := range []*Codec{Windsurf, KiroCLI} {
		if r := c.Answer(Allow, "fine", ""); r.Exit != 0 || !r.Quiet || r.Stderr != "" {
			t.Errorf("%s allow: %+v", c.ID, r)
		}
		for _, v := range []Verdict{Ask, Deny} {
			if r := c.Answer(v, "no", ""); r.Exit != 2 || !r.Quiet || r.Stderr != "no" {
				t.Errorf("%s %s: %+v", c.ID, v, r)
			}
		}
		if r, err := c.Read([]byte(`{"decision":"deny","reason":"no"}`)); err != nil || r.Exit != 2 || r.Stderr != "no" {
			t.Errorf("%s: a forwarded deny reads back as %+v, %v", c.ID, r, err)
		}
	}
}

// Amp reads only the exit code of its delegate: 0 allows, 1 asks the
// operator, 2 rejects with stderr shown to the model; over HTTP each
// travels as {decision, reason} and reads back the same.
func TestAmpExitCodes(t *testing.T) {
	t.Parallel()
	for v, exit := range map[Verdict]int{Allow: 0, Ask: 1, Deny: 2} {
		r := Amp.Answer(v, "why", "")
		if r.Exit != exit || !r.Quiet || (exit != 0) != (r.Stderr == "why") {
			t.Errorf("%s: %+v, want exit %d", v, r, exit)
		}
		raw, _ := json.Marshal(r.Body)
		if back, err := Amp.Read(raw); err != nil || back.Exit != exit {
			t.Errorf("%s forwarded reads back as %+v, %v", v, back, err)
		}
	}
}

// The amp command builds its input from AGENT_TOOL_NAME, AMP_THREAD_ID,
// its directory and stdin; without a tool name, or with arguments that are
// not an object, there is no call to decide.
func TestAmpWrap(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	raw, err := Amp.Wrap(env(map[string]string{"AGENT_TOOL_NAME": "Read", "AMP_THREAD_ID": "T-1"}), "/w", []byte(`{"path":".env"}`))
	if err != nil {
		t.Fatal(err)
	}
	call, err := Amp.Parse(decode(t, string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Call{Tool: "Read", Input: map[string]any{"file_path": ".env"}, Cwd: "/w", Session: "T-1"}); !reflect.DeepEqual(*call, want) {
		t.Errorf("got %+v, want %+v", *call, want)
	}
	for name, c := range map[string]struct {
		env   map[string]string
		stdin string
		want  string
	}{
		"no AGENT_TOOL_NAME": {nil, `{"path":"a"}`, "AGENT_TOOL_NAME is not set"},
		"stdin not JSON":     {map[string]string{"AGENT_TOOL_NAME": "Read"}, `{"path":`, "not a JSON object"},
		"stdin a list":       {map[string]string{"AGENT_TOOL_NAME": "Read"}, `["a"]`, "not a JSON object"},
		"stdin null":         {map[string]string{"AGENT_TOOL_NAME": "Read"}, `null`, "not a JSON object"},
	} {
		if _, err := Amp.Wrap(env(c.env), "/w", []byte(c.stdin)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
	if got, err := ClaudeCode.Wrap(env(map[string]string{"AGENT_TOOL_NAME": "Bash"}), "/w", []byte(`{"x":1}`)); err != nil || string(got) != `{"x":1}` {
		t.Errorf("claude-code's input is stdin as it came, got %s, %v", got, err)
	}
}

// An answer gated's endpoint sent that is not the runtime's is no answer.
func TestReadRefusesStrangeAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		codec *Codec
		raw   string
	}{
		{ClaudeCode, `{"permissionDecision":"allow"}`},
		{ClaudeCode, `{"hookSpecificOutput":{"permissionDecision":"allow"}}{"x":1}`},
		{ClaudeCode, `{"hookSpecificOutput":{"permissionDecision":"yes"}}`},
		{CopilotCLI, `{"permissionDecision":"ask"}`},
		{CopilotCLI, `{"hookSpecificOutput":{"permissionDecision":"allow"}}`},
		{GeminiCLI, `{"decision":"block"}`},
		{GeminiCLI, `[]`},
		{Cursor, `{"permission":"maybe"}`},
		{Cline, `{"errorMessage":"x"}`},
		{Cline, `{"cancel":"false"}`},
		{Cline, `not json`},
		{Goose, `{"decision":"deny"}`},
		{Windsurf, `{"decision":"ask"}`},
		{KiroCLI, `{}`},
		{Amp, `{"decision":"block"}`},
		{QwenCode, `{"decision":"allow"}`},
	} {
		if a, err := tc.codec.Read([]byte(tc.raw)); err == nil {
			t.Errorf("%s read %s as %+v", tc.codec.ID, tc.raw, a)
		}
	}
}

// The sample inputs under examples/<runtime>/ are what the runtimes send,
// and each reads.
func TestExampleInputsParse(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../../../examples/*/hook-*.json")
	seen := map[string]bool{}
	for _, f := range files {
		id := filepath.Base(filepath.Dir(f))
		c, ok := Lookup(id)
		if !ok {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Amp's sample is its stdin; the tool name comes in the environment.
		raw, err = c.Wrap(func(string) string { return "Read" }, "/w", raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := c.Parse(decode(t, string(raw))); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		seen[id] = true
	}
	for _, id := range []string{"copilot-cli", "gemini-cli", "qwen-code", "cursor", "cline", "goose", "windsurf", "kiro-cli", "droid", "amp"} {
		if !seen[id] {
			t.Errorf("no examples/%s/hook-*.json sample", id)
		}
	}
}

// FuzzParse: whatever a runtime sends, every codec either refuses it or
// reads a call that names a tool, and its deny always reads back as one.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../../../examples/*/hook-*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"toolName":"view","toolArgs":"{\"path\":\".env\",\"file_path\":\"a\"}"}`))
	f.Add([]byte(`{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls","dir_path":"'; rm -rf /"}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var doc map[string]any
		if json.Unmarshal(raw, &doc) != nil {
			return
		}
		for id, c := range Codecs {
			call, err := c.Parse(doc)
			if err == nil && (strings.TrimSpace(call.Tool) == "" || call.Input == nil) {
				t.Fatalf("%s read %s as %+v", id, raw, call)
			}
			body, _ := json.Marshal(c.Fail("x", "").Body)
			if v, _, err := c.Verdict(body); err != nil || v != Deny {
				t.Fatalf("%s: its deny reads back as %s, %v", id, v, err)
			}
		}
	})
}
