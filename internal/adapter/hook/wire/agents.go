package wire

import (
	"fmt"
	"strings"
)

// The argument names of the catalog's tools (examples/claude-code/catalog,
// Claude Code's names), which every table maps onto.
const (
	argCommand  = "command"
	argFilePath = "file_path"
	argContent  = "content"
	argOld      = "old_string"
	argNew      = "new_string"
	argPattern  = "pattern"
	argPath     = "path"
	argGlob     = "glob" // Grep's file filter, which names files as a path does
)

// GitHub Copilot CLI (@github/copilot): the preToolUse command hook. Its
// input is camelCase ({sessionId, timestamp, cwd, toolName, toolArgs},
// toolArgs a JSON string in older versions) when the hook is configured
// under preToolUse, and snake_case with Claude Code's tool names when
// configured under PreToolUse; the answer is {permissionDecision,
// permissionDecisionReason} for both. Older documentation says a failed
// hook never blocks and only a printed "deny" is processed, so every
// failure prints a deny on stdout and exits 0 (current versions deny on a
// non-zero exit too; a timeout runs the tool in all of them). It cannot
// ask: older versions ignore "ask", and in a run with nobody at the
// keyboard (copilot -p) nobody would answer.
var CopilotCLI = register(&Codec{
	ID: "copilot-cli", Name: "GitHub Copilot CLI", failPrints: true,
	parse: func(doc map[string]any) (*Call, error) {
		if _, snake := doc["tool_name"]; snake {
			c, err := parseSnake(doc, "PreToolUse", "Copilot CLI's preToolUse (or PreToolUse)")
			if err != nil {
				return nil, err
			}
			c.Tool, c.Input, err = copilotClaudeTools.Map(c.Tool, c.Input)
			return c, err
		}
		var c Call
		var err error
		for _, k := range []string{"hookEventName", "hook_event_name"} {
			ev, err := str(doc, k)
			if err != nil {
				return nil, err
			}
			if ev != "" && ev != "preToolUse" {
				return nil, fmt.Errorf("gated answers Copilot CLI's preToolUse hook only, not %q", ev)
			}
		}
		c.Event = "preToolUse"
		if err = strs(doc, []field{{"toolName", &c.Tool}, {"cwd", &c.Cwd}, {"sessionId", &c.Session}}); err != nil {
			return nil, err
		}
		if c.Input, err = object(doc, "toolArgs"); err != nil {
			return nil, err
		}
		c.Tool, c.Input, err = copilotTools.Map(c.Tool, c.Input)
		return &c, err
	},
	encode: func(v Verdict, reason, _ string) Reply {
		return Reply{Body: CopilotCLIOutput{PermissionDecision: string(v), PermissionDecisionReason: reason}}
	},
	read: func(raw []byte) (Verdict, string, error) {
		var a CopilotCLIOutput
		if err := decodeAnswer(raw, &a); err != nil {
			return "", "", err
		}
		v, err := checkVerdict(a.PermissionDecision, Allow, Deny)
		return v, a.PermissionDecisionReason, err
	},
})

// CopilotCLIOutput is Copilot CLI's preToolUse answer.
type CopilotCLIOutput struct {
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

// copilotTools maps Copilot CLI's built-in tools (bash, view, create, edit,
// glob, grep, web_fetch) onto the catalog's; grep and glob search paths,
// one or a list (1.0.102's schema), the catalog's path. powershell is not a Bash
// line, and MCP tools are named server-tool, which cannot be split
// reliably: both pass by their own names, and the catalog declares them
// unknown unless it names them.
var copilotTools = Tools{
	"bash":      {Name: "Bash", Args: map[string][]string{argCommand: {"command"}}},
	"view":      {Name: "Read", Args: map[string][]string{argFilePath: {"path"}}},
	"create":    {Name: "Write", Args: map[string][]string{argFilePath: {"path"}, argContent: {"file_text"}}},
	"edit":      {Name: "Edit", Args: map[string][]string{argFilePath: {"path"}, argOld: {"old_str"}, argNew: {"new_str"}}},
	"glob":      {Name: "Glob", Args: map[string][]string{argPattern: {"pattern"}, argPath: {"path", "paths"}}, Single: []string{"paths"}},
	"grep":      {Name: "Grep", Args: map[string][]string{argPattern: {"pattern"}, argPath: {"path", "paths"}}, Single: []string{"paths"}},
	"web_fetch": {Name: "WebFetch", Args: map[string][]string{"url": {"url"}}},
}

// copilotClaudeTools maps the PascalCase PreToolUse input, where Copilot
// CLI names its tools as Claude Code does but keeps its own arguments.
var copilotClaudeTools = Tools{
	"bash":  {Name: "Bash", Args: map[string][]string{argCommand: {"command"}}},
	"read":  {Name: "Read", Args: map[string][]string{argFilePath: {"path"}}},
	"write": {Name: "Write", Args: map[string][]string{argFilePath: {"path"}, argContent: {"file_text"}}},
	"edit":  {Name: "Edit", Args: map[string][]string{argFilePath: {"path"}, argOld: {"old_str"}, argNew: {"new_str"}}},
	"grep":  {Name: "Grep", Args: map[string][]string{argPattern: {"pattern"}, argPath: {"path", "paths"}}, Single: []string{"paths"}},
	"glob":  {Name: "Glob", Args: map[string][]string{argPattern: {"pattern"}, argPath: {"path", "paths"}}, Single: []string{"paths"}},
}

// Gemini CLI (@google/gemini-cli): the BeforeTool command hook, input in
// Claude Code's snake_case, answer {"decision": "deny", "reason": …}. Exit
// 2 blocks with stderr as the reason; any other non-zero exit is a warning
// and the tool runs, so a failure exits 2 (and prints the deny as well).
var GeminiCLI = register(&Codec{
	ID: "gemini-cli", Name: "Gemini CLI", failExit: 2, failPrints: true,
	parse: func(doc map[string]any) (*Call, error) {
		c, err := parseSnake(doc, "BeforeTool", "Gemini CLI's BeforeTool")
		if err != nil {
			return nil, err
		}
		if mcp, ok := doc["mcp_context"].(map[string]any); ok {
			server, _ := mcp["server_name"].(string)
			tool, _ := mcp["tool_name"].(string)
			if server != "" && tool != "" {
				c.Tool = "mcp__" + server + "__" + tool
			}
		}
		c.Tool, c.Input, err = geminiTools.Map(c.Tool, c.Input)
		return c, err
	},
	encode: func(v Verdict, reason, _ string) Reply {
		return Reply{Body: DecisionOutput{Decision: string(v), Reason: reason}}
	},
	read: readDecision,
})

// DecisionOutput is Gemini CLI's answer to BeforeTool, and the form in
// which gated's endpoint sends the verdict of a runtime that reads only
// exit codes.
type DecisionOutput struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// readDecision reads a DecisionOutput that may allow or deny.
var readDecision = decisionReader(Allow, Deny)

// decisionReader reads a DecisionOutput whose decision is one of want.
func decisionReader(want ...Verdict) func(raw []byte) (Verdict, string, error) {
	return func(raw []byte) (Verdict, string, error) {
		var a DecisionOutput
		if err := decodeAnswer(raw, &a); err != nil {
			return "", "", err
		}
		v, err := checkVerdict(a.Decision, want...)
		return v, a.Reason, err
	}
}

// geminiTools maps Gemini CLI's built-in tools onto the catalog's. Older
// versions name read_file's path absolute_path, newer ones file_path; a
// shell command's dir_path (directory in older versions) runs it elsewhere;
// grep's file filter is include_pattern (0.61.0; include before), the
// catalog's glob.
var geminiTools = Tools{
	"run_shell_command":   {Name: "Bash", Args: map[string][]string{argCommand: {"command"}}, Workdir: []string{"dir_path", "directory"}},
	"read_file":           {Name: "Read", Args: map[string][]string{argFilePath: {"file_path", "absolute_path", "path"}}},
	"write_file":          {Name: "Write", Args: map[string][]string{argFilePath: {"file_path", "absolute_path"}, argContent: {"content"}}},
	"replace":             {Name: "Edit", Args: map[string][]string{argFilePath: {"file_path", "absolute_path"}, argOld: {"old_string"}, argNew: {"new_string"}}},
	"glob":                {Name: "Glob", Args: map[string][]string{argPattern: {"pattern"}, argPath: {"dir_path", "path"}}},
	"search_file_content": {Name: "Grep", Args: map[string][]string{argPattern: {"pattern"}, argPath: {"dir_path", "path"}, argGlob: {"include", "include_pattern"}}},
	"grep_search":         {Name: "Grep", Args: map[string][]string{argPattern: {"pattern"}, argPath: {"dir_path", "path"}, argGlob: {"include", "include_pattern"}}},
	"google_web_search":   {Name: "WebSearch", Args: map[string][]string{"query": {"query"}}},
}

// parseSnake reads the snake_case input Gemini CLI and others share, and
// requires the runtime's one pre-tool event by name.
func parseSnake(doc map[string]any, event, what string) (*Call, error) {
	var c Call
	err := strs(doc, snakeFields(&c))
	if err != nil {
		return nil, err
	}
	if c.Event != event {
		return nil, fmt.Errorf("gated answers %s hook only, not %q", what, c.Event)
	}
	if c.Input, err = object(doc, "tool_input"); err != nil {
		return nil, err
	}
	return &c, nil
}

// Cursor (hooks.json): beforeShellExecution, beforeMCPExecution,
// beforeReadFile and preToolUse, answered {permission, user_message,
// agent_message}. Exit 2 denies; any other failure runs the tool unless the
// hook sets failClosed, so a failure exits 2 and prints the deny as well.
// Only the shell and MCP events can ask.
var Cursor = register(&Codec{
	ID: "cursor", Name: "Cursor", failExit: 2, failPrints: true,
	asks: map[string]bool{"beforeShellExecution": true, "beforeMCPExecution": true},
	parse: func(doc map[string]any) (*Call, error) {
		var c Call
		err := strs(doc, []field{{"hook_event_name", &c.Event}, {"conversation_id", &c.Session}, {"cwd", &c.Cwd}, {"tool_use_id", &c.ToolUseID}})
		if err != nil {
			return nil, err
		}
		roots := cursorRoots(doc)
		if c.Cwd == "" && len(roots) > 0 {
			c.Cwd = roots[0]
		}
		switch c.Event {
		case "beforeShellExecution":
			cmd, err := required(doc, c.Event, "command")
			if err != nil {
				return nil, err
			}
			c.Tool, c.Input = "Bash", map[string]any{argCommand: cmd}
		case "beforeReadFile":
			// The file's content is in the input too; it is not an argument
			// of the read, and gated never needs it.
			file, err := required(doc, c.Event, "file_path")
			if err != nil {
				return nil, err
			}
			c.Tool, c.Input = "Read", map[string]any{argFilePath: file}
		case "beforeMCPExecution", "preToolUse":
			if c.Tool, err = str(doc, "tool_name"); err != nil {
				return nil, err
			}
			if c.Input, err = object(doc, "tool_input"); err != nil {
				return nil, err
			}
			c.Tool = cursorMCPName(c.Tool)
			if c.Event == "preToolUse" {
				c.Tool, c.Input, err = cursorTools.Map(c.Tool, c.Input)
			} else if strings.TrimSpace(c.Tool) != "" && !strings.HasPrefix(c.Tool, "mcp__") {
				// An MCP tool named as a built-in (Read, Bash) is still the
				// server's tool, and must not be decided as the catalog's.
				c.Tool = "mcp__" + c.Tool
			}
		default:
			return nil, fmt.Errorf("gated answers Cursor's beforeShellExecution, beforeMCPExecution, beforeReadFile and preToolUse hooks only, not %q", c.Event)
		}
		if err == nil && c.Tool == "Bash" {
			outsideRoots(&c, roots)
		}
		return &c, err
	},
	encode: func(v Verdict, reason, _ string) Reply {
		return Reply{Body: CursorOutput{Permission: string(v), UserMessage: reason, AgentMessage: reason}}
	},
	read: func(raw []byte) (Verdict, string, error) {
		var a CursorOutput
		if err := decodeAnswer(raw, &a); err != nil {
			return "", "", err
		}
		v, err := checkVerdict(a.Permission, Allow, Ask, Deny)
		return v, a.AgentMessage, err
	},
})

// CursorOutput is Cursor's answer to its before-hooks.
type CursorOutput struct {
	Permission   string `json:"permission"`
	UserMessage  string `json:"user_message"`
	AgentMessage string `json:"agent_message"`
}

// required reads a string field the event's input must give.
func required(doc map[string]any, event, key string) (string, error) {
	s, err := str(doc, key)
	if err == nil && s == "" {
		err = fmt.Errorf("the %s input has no %s", event, key)
	}
	return s, err
}

// cursorRoots reads the workspace roots Cursor sends with every event.
func cursorRoots(doc map[string]any) []string {
	list, _ := doc["workspace_roots"].([]any)
	var roots []string
	for _, r := range list {
		if s, ok := r.(string); ok && s != "" {
			roots = append(roots, s)
		}
	}
	return roots
}

// outsideRoots decides a shell command whose cwd is in none of the
// workspace roots as run there from the first root: cwd is where the
// command runs, which the agent chooses (Shell's working_directory), so it
// cannot be the workspace a read must stay in.
func outsideRoots(c *Call, roots []string) {
	if len(roots) == 0 || c.Cwd == "" {
		return
	}
	for _, r := range roots {
		if within(c.Cwd, r) {
			return
		}
	}
	cmd, _ := c.Input[argCommand].(string)
	c.Input[argCommand] = inDir(c.Cwd, cmd)
	c.Cwd = roots[0]
}

// cursorMCPName writes Cursor's "MCP:server:tool" as the catalog's
// mcp__server__tool; any other name is kept.
func cursorMCPName(name string) string {
	rest, ok := strings.CutPrefix(name, "MCP:")
	if !ok {
		return name
	}
	server, tool, ok := strings.Cut(rest, ":")
	if !ok || server == "" || tool == "" {
		return name
	}
	return "mcp__" + server + "__" + tool
}

// cursorTools maps the tool names of Cursor's preToolUse onto the catalog's.
var cursorTools = Tools{
	"shell":      {Name: "Bash", Args: map[string][]string{argCommand: {"command"}}, Workdir: []string{"working_directory", "cwd"}},
	"read":       {Name: "Read", Args: map[string][]string{argFilePath: {"file_path", "path", "target_file"}}},
	"write":      {Name: "Write", Args: map[string][]string{argFilePath: {"file_path", "path", "target_file"}, argContent: {"content", "contents"}}},
	"strreplace": {Name: "Edit", Args: map[string][]string{argFilePath: {"file_path", "path", "target_file"}, argOld: {"old_string"}, argNew: {"new_string"}}},
	"edit":       {Name: "Edit", Args: map[string][]string{argFilePath: {"file_path", "path", "target_file"}, argOld: {"old_string"}, argNew: {"new_string"}}},
	"grep":       {Name: "Grep", Args: map[string][]string{argPattern: {"pattern"}, argPath: {"path"}}},
	"glob":       {Name: "Glob", Args: map[string][]string{argPattern: {"pattern", "glob_pattern"}, argPath: {"path", "target_directory"}}},
}

// Cline: the PreToolUse hook script ({hookName, taskId, workspaceRoots,
// preToolUse: {toolName, parameters}}), answered {cancel, errorMessage}.
// Cline blocks on cancel: true, a non-zero exit, invalid JSON or a
// timeout, and runs the tool when the hook prints no JSON, so every
// failure prints cancel: true (and exits 0, as the answer says it all).
// It cannot ask.
var Cline = register(&Codec{
	ID: "cline", Name: "Cline", failPrints: true,
	parse: func(doc map[string]any) (*Call, error) {
		var c Call
		var err error
		if c.Event, err = str(doc, "hookName"); err != nil {
			return nil, err
		}
		if c.Event != "PreToolUse" {
			return nil, fmt.Errorf("gated answers Cline's PreToolUse hook only, not %q", c.Event)
		}
		if c.Session, err = str(doc, "taskId"); err != nil {
			return nil, err
		}
		if roots, ok := doc["workspaceRoots"].([]any); ok && len(roots) > 0 {
			c.Cwd, _ = roots[0].(string)
		}
		pre, ok := doc["preToolUse"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("the hook input has no preToolUse object")
		}
		if c.Tool, err = str(pre, "toolName"); err != nil {
			return nil, err
		}
		if c.Input, err = object(pre, "parameters"); err != nil {
			return nil, err
		}
		if strings.EqualFold(c.Tool, "use_mcp_tool") {
			if c.Tool, c.Input, err = clineMCP(c.Input); err != nil {
				return nil, err
			}
		}
		c.Tool, c.Input, err = clineTools.Map(c.Tool, c.Input)
		return &c, err
	},
	encode: func(v Verdict, reason, _ string) Reply {
		if v == Allow {
			return Reply{Body: ClineOutput{}}
		}
		return Reply{Body: ClineOutput{Cancel: true, ErrorMessage: reason}}
	},
	read: func(raw []byte) (Verdict, string, error) {
		var a struct {
			Cancel       *bool  `json:"cancel"`
			ErrorMessage string `json:"errorMessage"`
		}
		if err := decodeAnswer(raw, &a); err != nil {
			return "", "", err
		}
		switch {
		case a.Cancel == nil:
			return "", "", fmt.Errorf("gated's hook answer has no cancel field")
		case *a.Cancel:
			return Deny, a.ErrorMessage, nil
		}
		return Allow, "", nil
	},
})

// ClineOutput is Cline's PreToolUse answer.
type ClineOutput struct {
	Cancel       bool   `json:"cancel"`
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// clineMCP names an MCP call by its server and tool, as the catalog does
// (mcp__server__tool), with its arguments (a JSON string in Cline) read.
func clineMCP(p map[string]any) (string, map[string]any, error) {
	server, err := str(p, "server_name")
	if err != nil {
		return "", nil, err
	}
	tool, err := str(p, "tool_name")
	if err != nil {
		return "", nil, err
	}
	if server == "" || tool == "" {
		return "", nil, fmt.Errorf("the use_mcp_tool call names no server or no tool")
	}
	args, err := object(p, "arguments")
	if err != nil {
		return "", nil, err
	}
	return "mcp__" + server + "__" + tool, args, nil
}

// clineTools maps Cline's tools onto the catalog's.
var clineTools = Tools{
	"execute_command": {Name: "Bash", Args: map[string][]string{argCommand: {"command"}}},
	"read_file":       {Name: "Read", Args: map[string][]string{argFilePath: {"path"}}},
	"write_to_file":   {Name: "Write", Args: map[string][]string{argFilePath: {"path"}, argContent: {"content"}}},
	"replace_in_file": {Name: "Edit", Args: map[string][]string{argFilePath: {"path"}}},
	"search_files":    {Name: "Grep", Args: map[string][]string{argPattern: {"regex"}, argPath: {"path"}, argGlob: {"file_pattern"}}},
	"web_fetch":       {Name: "WebFetch", Args: map[string][]string{"url": {"url"}}},
}
