package main

import (
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/adapter/hook/wire"
)

// Attacks on the runtimes' hook inputs, decided by the example catalog
// in-process: each is a read that Claude Code's shape of the same call
// (Grep with a glob or path on .env or ~/.ssh, Read of .env, cat
// /etc/passwd) is refused or asked for, and each once got the runtime's
// allow.
func TestAttackedHookInputsAreNotAllowed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ runtime, name, in string }{
		{"gemini-cli", "grep_search include_pattern .env",
			`{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"grep_search","tool_input":{"pattern":"KEY","include_pattern":".env"}}`},
		{"gemini-cli", "search_file_content include .env",
			`{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"search_file_content","tool_input":{"pattern":"KEY","include":"**/.env"}}`},
		{"copilot-cli", "grep paths ~/.ssh",
			`{"sessionId":"s","cwd":"/w","toolName":"grep","toolArgs":"{\"pattern\":\".\",\"paths\":[\"/home/u/.ssh\"],\"output_mode\":\"content\"}"}`},
		{"copilot-cli", "glob paths ~/.ssh",
			`{"sessionId":"s","cwd":"/w","toolName":"glob","toolArgs":{"pattern":"*","paths":"/home/u/.ssh"}}`},
		{"copilot-cli", "PreToolUse Grep paths .env",
			`{"session_id":"s","hook_event_name":"PreToolUse","cwd":"/w","tool_name":"Grep","tool_input":{"pattern":"KEY","paths":".env","output_mode":"content"}}`},
		{"kiro-cli", "fs_read path README.md, operations .env",
			`{"hook_event_name":"preToolUse","cwd":"/w","tool_name":"fs_read","tool_input":{"path":"README.md","operations":[{"mode":"Line","path":".env"}]}}`},
		{"kiro-cli", "fs_read Image operation of .env",
			`{"hook_event_name":"preToolUse","cwd":"/w","tool_name":"fs_read","tool_input":{"operations":[{"mode":"Image","path":"README.md","image_paths":[".env"]}]}}`},
		// Cursor's cwd is where the agent runs the command: /etc is not the
		// workspace, so cat passwd is no read inside it.
		{"cursor", "beforeShellExecution cat passwd in /etc",
			`{"hook_event_name":"beforeShellExecution","conversation_id":"c","workspace_roots":["/w"],"command":"cat passwd","cwd":"/etc"}`},
		// An MCP server's tool named Read is the server's, not the catalog's.
		{"cursor", "beforeMCPExecution of a tool named Read",
			`{"hook_event_name":"beforeMCPExecution","conversation_id":"c","workspace_roots":["/w"],"tool_name":"Read","tool_input":{"file_path":"README.md"},"url":"http://mcp.example"}`},
	} {
		t.Run(tc.runtime+"/"+tc.name, func(t *testing.T) {
			code, v, out := runAgentHook(t, tc.runtime, tc.in, "--catalog", claudeCatalog)
			if v == wire.Allow || (v == "" && code == 0) {
				t.Errorf("exit %d, printed %q: the runtime runs the call", code, out)
			}
		})
	}
}

// Codex's cwd is the workdir the model chose (Codex 0.169.0 reported
// exec_command {cmd: "cat passwd", workdir: "/etc"} this way): the hook's
// workspace is the folder it runs in (here --workspace), and cat passwd in
// /etc is no read inside it, in-process and through a real gated alike.
func TestAttackedCodexWorkdirOutsideTheWorkspace(t *testing.T) {
	t.Parallel()
	base, _ := startServe(t, []string{"--catalog", claudeCatalog}, nil)
	in := `{"session_id":"01a21b62-4b21-7f72-812e-447692d205b5","turn_id":"t","transcript_path":null,"cwd":"/etc","hook_event_name":"PreToolUse","model":"gpt-5.5","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"cat passwd"},"tool_use_id":"call_1"}`
	for _, args := range [][]string{{"--catalog", claudeCatalog}, {"--url", base}} {
		if code, v, out := runAgentHook(t, "codex", in, append(args, "--workspace", "/home/u/project")...); code != 0 || v != wire.Deny {
			t.Errorf("%v: exit %d, %s", args, code, out)
		}
	}
	// The control: the same line in the workspace is a read.
	inWS := strings.Replace(in, `"/etc"`, `"/home/u/project"`, 1)
	if code, v, out := runAgentHook(t, "codex", inWS, "--catalog", claudeCatalog, "--workspace", "/home/u/project"); code != 0 || v != wire.Allow {
		t.Errorf("the same line in the workspace: exit %d, %s", code, out)
	}
}
