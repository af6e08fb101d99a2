package wire

import (
	"reflect"
	"strings"
	"testing"
)

// Inputs an attacker steering the model can make a runtime send, which
// once reached the catalog without the argument its rules look at: each is
// read here into the argument the catalog checks, or refused.
func TestAttackedArgumentsReachTheRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		codec *Codec
		in    string
		want  map[string]any
	}{
		// Gemini CLI's grep_search filters files with include_pattern
		// (include in older versions), which is Grep's glob.
		{"gemini grep_search include_pattern", GeminiCLI,
			`{"hook_event_name":"BeforeTool","tool_name":"grep_search","tool_input":{"pattern":"KEY","include_pattern":".env"}}`,
			map[string]any{"pattern": "KEY", "glob": ".env"}},
		{"gemini search_file_content include", GeminiCLI,
			`{"hook_event_name":"BeforeTool","tool_name":"search_file_content","tool_input":{"pattern":"KEY","include":"**/.env"}}`,
			map[string]any{"pattern": "KEY", "glob": "**/.env"}},
		// Copilot CLI's grep and glob search paths: a string or a list.
		{"copilot grep paths, a string", CopilotCLI,
			`{"cwd":"/w","toolName":"grep","toolArgs":{"pattern":".","paths":"/home/u/.ssh","output_mode":"content"}}`,
			map[string]any{"pattern": ".", "path": "/home/u/.ssh", "output_mode": "content"}},
		{"copilot glob paths, a list of one", CopilotCLI,
			`{"cwd":"/w","toolName":"glob","toolArgs":"{\"pattern\":\"*\",\"paths\":[\"/home/u/.ssh\"]}"}`,
			map[string]any{"pattern": "*", "path": "/home/u/.ssh"}},
		{"copilot PascalCase Grep paths", CopilotCLI,
			`{"hook_event_name":"PreToolUse","cwd":"/w","tool_name":"Grep","tool_input":{"pattern":".","paths":[".env"]}}`,
			map[string]any{"pattern": ".", "path": ".env"}},
		{"copilot grep paths, an empty list is the workspace", CopilotCLI,
			`{"cwd":"/w","toolName":"grep","toolArgs":{"pattern":".","paths":[]}}`,
			map[string]any{"pattern": "."}},
		// Kiro: an Image operation names its files in image_paths, so its
		// list stays and the call names no file_path.
		{"kiro fs_read image operation keeps its list", KiroCLI,
			`{"hook_event_name":"preToolUse","cwd":"/w","tool_name":"fs_read","tool_input":{"operations":[{"mode":"Image","path":"README.md","image_paths":[".env"]}]}}`,
			map[string]any{"operations": []any{map[string]any{"mode": "Image", "path": "README.md", "image_paths": []any{".env"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c := parsed(t, tc.codec, tc.in); !reflect.DeepEqual(c.Input, tc.want) {
				t.Errorf("arguments %v, want %v", c.Input, tc.want)
			}
		})
	}
}

// Inputs whose arguments name two things where gated would decide one.
func TestAttackedAmbiguousArgumentsAreRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		codec *Codec
		in    string
		want  string
	}{
		{"copilot grep over two paths", CopilotCLI,
			`{"cwd":"/w","toolName":"grep","toolArgs":{"pattern":".","paths":["src","/home/u/.ssh"]}}`,
			"gives 2 paths"},
		{"copilot grep paths not strings", CopilotCLI,
			`{"cwd":"/w","toolName":"grep","toolArgs":{"pattern":".","paths":[{"p":".env"}]}}`,
			"wrong type"},
		{"copilot grep path and paths disagree", CopilotCLI,
			`{"cwd":"/w","toolName":"grep","toolArgs":{"pattern":".","path":"src","paths":".env"}}`,
			"twice with different values"},
		{"gemini grep include and include_pattern disagree", GeminiCLI,
			`{"hook_event_name":"BeforeTool","tool_name":"grep_search","tool_input":{"pattern":"K","include":"*.go","include_pattern":".env"}}`,
			"twice with different values"},
		{"kiro fs_read path beside operations", KiroCLI,
			`{"hook_event_name":"preToolUse","cwd":"/w","tool_name":"fs_read","tool_input":{"path":"README.md","operations":[{"mode":"Line","path":".env"}]}}`,
			"both a path and an operations list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused(t, tc.codec, tc.in, tc.want)
		})
	}
}

// An ask from gated's endpoint to a runtime that cannot ask (a gated of
// another version) is passed on as a deny: Codex and Droid reject "ask" as
// a failed hook and run the tool.
func TestAttackedAskToARuntimeThatCannotAskDenies(t *testing.T) {
	t.Parallel()
	for _, c := range []*Codec{Codex, Droid} {
		r, err := c.Read([]byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"approve?"}}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Body.(ClaudeOutput).HookSpecificOutput.PermissionDecision; got != "deny" {
			t.Errorf("%s: the command passes on %q, want deny", c.ID, got)
		}
	}
	// A runtime that can ask keeps it.
	r, err := ClaudeCode.Read([]byte(`{"hookSpecificOutput":{"permissionDecision":"ask"}}`))
	if err != nil || r.Body.(ClaudeOutput).HookSpecificOutput.PermissionDecision != "ask" {
		t.Errorf("claude-code: %+v %v, want its ask", r, err)
	}
}

// Cursor's cwd is where a shell command runs, which the agent chooses: one
// outside every workspace root is not the workspace, and the command is
// decided as run there from the first root. Inside a root it stays.
func TestAttackedCursorShellOutsideTheWorkspace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     Call
	}{
		{"beforeShellExecution in /etc",
			`{"hook_event_name":"beforeShellExecution","workspace_roots":["/w"],"command":"cat passwd","cwd":"/etc"}`,
			Call{Event: "beforeShellExecution", Tool: "Bash", Input: map[string]any{"command": "cd '/etc' && cat passwd"}, Cwd: "/w"}},
		{"beforeShellExecution in a sibling with the root as prefix",
			`{"hook_event_name":"beforeShellExecution","workspace_roots":["/w/"],"command":"ls","cwd":"/w2"}`,
			Call{Event: "beforeShellExecution", Tool: "Bash", Input: map[string]any{"command": "cd '/w2' && ls"}, Cwd: "/w/"}},
		{"preToolUse Shell with cwd outside",
			`{"hook_event_name":"preToolUse","workspace_roots":["/w"],"cwd":"/home/u","tool_name":"Shell","tool_input":{"command":"cat .bash_history"}}`,
			Call{Event: "preToolUse", Tool: "Bash", Input: map[string]any{"command": "cd '/home/u' && cat .bash_history"}, Cwd: "/w"}},
		{"beforeShellExecution in a subdirectory stays",
			`{"hook_event_name":"beforeShellExecution","workspace_roots":["/a","/w"],"command":"ls","cwd":"/w/sub/.."}`,
			Call{Event: "beforeShellExecution", Tool: "Bash", Input: map[string]any{"command": "ls"}, Cwd: "/w/sub/.."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c := parsed(t, Cursor, tc.in); !reflect.DeepEqual(*c, tc.want) {
				t.Errorf("got %+v, want %+v", *c, tc.want)
			}
		})
	}
}

// Arguments sent as JSON text (Copilot CLI's toolArgs, Cline's MCP
// arguments, Cursor's MCP tool_input) that give a key twice are refused,
// as a body that does is: gated would decide the last, and a parser that
// keeps the first would run the other.
func TestAttackedRepeatedKeysInArgumentText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		codec *Codec
		in    string
	}{
		{"copilot toolArgs", CopilotCLI,
			`{"cwd":"/w","toolName":"view","toolArgs":"{\"path\":\"/w/.env\",\"path\":\"README.md\"}"}`},
		{"copilot toolArgs, nested", CopilotCLI,
			`{"cwd":"/w","toolName":"x","toolArgs":"{\"a\":[{\"b\":1},{\"c\":{\"d\":1,\"d\":2}}]}"}`},
		{"cline MCP arguments", Cline,
			`{"hookName":"PreToolUse","preToolUse":{"toolName":"use_mcp_tool","parameters":{"server_name":"s","tool_name":"t","arguments":"{\"q\":\"a\",\"q\":\"b\"}"}}}`},
		{"cursor MCP tool_input, an escaped repeat", Cursor,
			`{"hook_event_name":"beforeMCPExecution","tool_name":"MCP:s:t","tool_input":"{\"q\":1,\"\\u0071\":2}"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused(t, tc.codec, tc.in, "more than once")
		})
	}
	// The same key in two objects is no repeat.
	c, err := CopilotCLI.Parse(decode(t, `{"cwd":"/w","toolName":"x","toolArgs":"{\"a\":{\"k\":1},\"b\":{\"k\":1},\"c\":[{\"k\":1},{\"k\":2}],\"k\":[]}"}`))
	if err != nil {
		t.Fatalf("sibling objects with one key each refused: %v", err)
	}
	if len(c.Input) != 4 {
		t.Errorf("arguments %v", c.Input)
	}
}

// Codex 0.169.0 reports exec_command {cmd: "cat passwd", workdir: "/etc"}
// as this input (seen driving it with a scripted model): cwd is the
// workdir the model chose. The hook runs in the session's folder, the
// workspace, so the call is moved there: cd '/etc' && cat passwd is no read
// inside the workspace, as cat passwd in a workspace /etc was.
const codexInEtc = `{"session_id":"01a21b62-4b21-7f72-812e-447692d205b5","turn_id":"01a21b62-4b45-7d32-95fe-0dbeb36f8d25","transcript_path":null,"cwd":"/etc","hook_event_name":"PreToolUse","model":"gpt-5.5","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"cat passwd"},"tool_use_id":"call_1795755756465"}`

func TestAttackedCodexWorkdirIsNotTheWorkspace(t *testing.T) {
	t.Parallel()
	doc := decode(t, codexInEtc)
	if !Codex.Rebase(doc, "/home/u/project") {
		t.Fatal("a Bash call in /etc was not moved onto the workspace")
	}
	c, err := Codex.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if c.Cwd != "/home/u/project" || c.Input["command"] != "cd '/etc' && cat passwd" {
		t.Errorf("got cwd %q, command %q", c.Cwd, c.Input["command"])
	}
	for name, tc := range map[string]struct {
		codec     *Codec
		in, where string
	}{
		"in the workspace":       {Codex, strings.Replace(codexInEtc, `"/etc"`, `"/home/u/project/sub"`, 1), "/home/u/project"},
		"not a shell call":       {Codex, strings.Replace(codexInEtc, `"Bash"`, `"apply_patch"`, 1), "/home/u/project"},
		"claude-code keeps cwd":  {ClaudeCode, codexInEtc, "/home/u/project"},
		"no workspace to rebase": {Codex, codexInEtc, ""},
	} {
		if tc.codec.Rebase(decode(t, tc.in), tc.where) {
			t.Errorf("%s: moved", name)
		}
	}
}

// Windsurf's hooks carry only tool_info.cwd, which Cascade's run_command
// takes from the model: a command run in /etc, or a relative file read
// there, is moved onto the workspace the hook runs in, as Codex's is.
func TestAttackedWindsurfCwdIsNotTheWorkspace(t *testing.T) {
	t.Parallel()
	const inEtc = `{"agent_action_name":"pre_run_command","trajectory_id":"t-1","execution_id":"e-1","tool_info":{"command_line":"cat passwd","cwd":"/etc"}}`
	doc := decode(t, inEtc)
	if !Windsurf.Rebase(doc, "/home/u/project") {
		t.Fatal("a command run in /etc was not moved onto the workspace")
	}
	c, err := Windsurf.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if c.Cwd != "/home/u/project" || c.Input["command"] != "cd '/etc' && cat passwd" {
		t.Errorf("got cwd %q, command %q", c.Cwd, c.Input["command"])
	}
	// A relative file path is read from where the model said: joined to it.
	read := decode(t, `{"agent_action_name":"pre_read_code","tool_info":{"file_path":"passwd","cwd":"/etc"}}`)
	if !Windsurf.Rebase(read, "/home/u/project") {
		t.Fatal("a read in /etc was not moved onto the workspace")
	}
	if c, err := Windsurf.Parse(read); err != nil || c.Cwd != "/home/u/project" || c.Input["file_path"] != "/etc/passwd" {
		t.Errorf("read: %+v %v", c, err)
	}
	for name, tc := range map[string]struct{ in, where string }{
		"in the workspace":          {strings.Replace(inEtc, `"/etc"`, `"/home/u/project/sub"`, 1), "/home/u/project"},
		"an MCP tool":               {`{"agent_action_name":"pre_mcp_tool_use","tool_info":{"mcp_server_name":"s","mcp_tool_name":"t","cwd":"/etc"}}`, "/home/u/project"},
		"a hook started in /":       {inEtc, "/"},
		"no workspace to rebase":    {inEtc, ""},
		"command_line not a string": {strings.Replace(inEtc, `"cat passwd"`, `["cat","passwd"]`, 1), "/home/u/project"},
	} {
		if Windsurf.Rebase(decode(t, tc.in), tc.where) {
			t.Errorf("%s: moved", name)
		}
	}
}

// The forwarding command passes the text on as it came unless the call
// moves, and refuses a text that repeats a key rather than re-encoding it.
func TestAttackedCodexRebaseBody(t *testing.T) {
	t.Parallel()
	same := strings.Replace(codexInEtc, `"/etc"`, `"/w"`, 1)
	if got, err := Codex.RebaseBody([]byte(same), "/w"); err != nil || string(got) != same {
		t.Errorf("an unmoved input changed: %s %v", got, err)
	}
	got, err := Codex.RebaseBody([]byte(codexInEtc), "/w")
	if err != nil || !strings.Contains(string(got), `"command":"cd '/etc' \u0026\u0026 cat passwd"`) || !strings.Contains(string(got), `"cwd":"/w"`) {
		t.Errorf("moved input %s %v", got, err)
	}
	dup := strings.Replace(codexInEtc, `"tool_name":"Bash"`, `"tool_name":"Bash","tool_name":"Bash"`, 1)
	if _, err := Codex.RebaseBody([]byte(dup), "/w"); err == nil || !strings.Contains(err.Error(), "more than once") {
		t.Errorf("a repeated key was re-encoded away: %v", err)
	}
}

// beforeMCPExecution is an MCP call whatever its tool is called: a server's
// tool named as a built-in is not decided as the catalog's Read.
func TestAttackedCursorMCPToolNamedAsABuiltIn(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"hook_event_name":"beforeMCPExecution","workspace_roots":["/w"],"tool_name":"Read","tool_input":"{\"file_path\":\"README.md\"}","url":"http://evil.example"}`: "mcp__Read",
		`{"hook_event_name":"beforeMCPExecution","workspace_roots":["/w"],"tool_name":"MCP:github:create_issue","tool_input":{}}`:                                       "mcp__github__create_issue",
	} {
		c, err := Cursor.Parse(decode(t, in))
		if err != nil || c.Tool != want {
			t.Errorf("tool %v (error %v), want %s", c, err, want)
		}
	}
}
