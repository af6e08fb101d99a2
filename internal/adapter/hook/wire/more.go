package wire

import (
	"fmt"
	"path"
	"reflect"
	"strings"
)

// goose: a PreToolUse hook in a plugin's hooks/hooks.json ({event,
// session_id, tool_name, tool_input, working_dir, tool_call_id}). It
// blocks on exit 2 (stderr the reason) or on {"decision": "block"} printed
// on stdout whatever the exit code; a hook that gives no decision (a
// crash, a timeout, unreadable output) runs the tool unless the hook sets
// on_failure: "block". A failure does both. It cannot ask.
var Goose = register(&Codec{
	ID: "goose", Name: "goose", failExit: 2, failPrints: true,
	parse: func(doc map[string]any) (*Call, error) {
		var c Call
		err := strs(doc, []field{{"event", &c.Event}, {"tool_name", &c.Tool}, {"session_id", &c.Session}, {"working_dir", &c.Cwd}, {"tool_call_id", &c.ToolUseID}})
		if err != nil {
			return nil, err
		}
		if c.Event != "PreToolUse" {
			return nil, fmt.Errorf("gated answers goose's PreToolUse hook only, not %q", c.Event)
		}
		if c.Input, err = object(doc, "tool_input"); err != nil {
			return nil, err
		}
		c.Tool, c.Input, err = gooseTools.Map(c.Tool, c.Input)
		return &c, err
	},
	encode: func(v Verdict, reason, _ string) Reply {
		if v == Allow {
			return Reply{Body: GooseOutput{Decision: "allow"}}
		}
		return Reply{Body: GooseOutput{Decision: "block", Reason: reason}}
	},
	read: func(raw []byte) (Verdict, string, error) {
		var a GooseOutput
		if err := decodeAnswer(raw, &a); err != nil {
			return "", "", err
		}
		switch a.Decision {
		case "allow":
			return Allow, a.Reason, nil
		case "block":
			return Deny, a.Reason, nil
		}
		return "", "", fmt.Errorf("gated's hook answer has no known decision (got %q)", a.Decision)
	},
})

// GooseOutput is goose's PreToolUse answer.
type GooseOutput struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
}

// gooseTools maps goose's developer extension onto the catalog's tools.
var gooseTools = Tools{
	"developer__shell": {Name: "Bash", Args: map[string][]string{argCommand: {"command"}}},
	"developer__write": {Name: "Write", Args: map[string][]string{argFilePath: {"path"}, argContent: {"content"}}},
	"developer__edit":  {Name: "Edit", Args: map[string][]string{argFilePath: {"path"}, argOld: {"before"}, argNew: {"after"}}},
}

// Windsurf Cascade: the pre_run_command, pre_read_code, pre_write_code and
// pre_mcp_tool_use hooks ({agent_action_name, trajectory_id, execution_id,
// tool_info}). Cascade reads only the exit code: 2 blocks, stderr the
// reason; any other failure runs the action. It cannot ask.
var Windsurf = register(&Codec{
	ID: "windsurf", Name: "Windsurf Cascade", failExit: 2,
	parse: func(doc map[string]any) (*Call, error) {
		var c Call
		err := strs(doc, []field{{"agent_action_name", &c.Event}, {"trajectory_id", &c.Session}, {"execution_id", &c.ToolUseID}})
		if err != nil {
			return nil, err
		}
		info, err := object(doc, "tool_info")
		if err != nil {
			return nil, err
		}
		if c.Cwd, err = str(info, "cwd"); err != nil {
			return nil, err
		}
		switch c.Event {
		case "pre_run_command":
			cmd, err := str(info, "command_line")
			if err != nil || cmd == "" {
				return nil, fmt.Errorf("the pre_run_command input has no command_line string")
			}
			c.Tool, c.Input = "Bash", map[string]any{argCommand: cmd}
		case "pre_read_code":
			path, err := str(info, "file_path")
			if err != nil || path == "" {
				return nil, fmt.Errorf("the pre_read_code input has no file_path string")
			}
			c.Tool, c.Input = "Read", map[string]any{argFilePath: path}
		case "pre_write_code":
			path, err := str(info, "file_path")
			if err != nil || path == "" {
				return nil, fmt.Errorf("the pre_write_code input has no file_path string")
			}
			c.Tool, c.Input = "MultiEdit", map[string]any{argFilePath: path, "edits": info["edits"]}
		case "pre_mcp_tool_use":
			server, err1 := str(info, "mcp_server_name")
			tool, err2 := str(info, "mcp_tool_name")
			if err1 != nil || err2 != nil || server == "" || tool == "" {
				return nil, fmt.Errorf("the pre_mcp_tool_use input names no MCP server or tool")
			}
			if c.Input, err = object(info, "mcp_tool_arguments"); err != nil {
				return nil, err
			}
			c.Tool = "mcp__" + server + "__" + tool
		default:
			return nil, fmt.Errorf("gated answers Windsurf's pre_run_command, pre_read_code, pre_write_code and pre_mcp_tool_use hooks only, not %q", c.Event)
		}
		return &c, nil
	},
	encode: exitCoded,
	read:   readDecision,
	rebase: rebaseWindsurf,
})

// rebaseWindsurf moves a call whose tool_info.cwd lies outside the
// workspace onto it, as Codex's calls are moved (withRebase). Cascade's
// run_command takes its Cwd from the model, and its hooks carry no other
// folder, so that cwd cannot be taken for the workspace: a command runs
// there from the workspace (cd '<cwd>' && …), a relative file path is
// joined to it. The hook runs where Cascade starts it: if that is not the
// workspace either, the move still never widens what was decided before (a
// hook started in / moves nothing), and --workspace names the workspace
// outright.
func rebaseWindsurf(doc map[string]any, workspace string) bool {
	info, _ := doc["tool_info"].(map[string]any)
	cwd, _ := info["cwd"].(string)
	if cwd == "" || within(cwd, workspace) {
		return false
	}
	moved := make(map[string]any, len(info))
	for k, v := range info {
		moved[k] = v
	}
	switch doc["agent_action_name"] {
	case "pre_run_command":
		cmd, isStr := info["command_line"].(string)
		if !isStr {
			return false
		}
		moved["command_line"] = inDir(cwd, cmd)
	case "pre_read_code", "pre_write_code":
		file, isStr := info["file_path"].(string)
		if !isStr {
			return false
		}
		if !path.IsAbs(file) {
			moved["file_path"] = path.Join(cwd, file)
		}
	default:
		return false
	}
	moved["cwd"] = workspace
	doc["tool_info"] = moved
	return true
}

// Kiro CLI: the preToolUse hook of an agent configuration
// ({hook_event_name, cwd, tool_name, tool_input}). Exit 2 blocks, stderr
// the reason; any other exit code is a warning and the tool runs. It
// cannot ask.
var KiroCLI = register(&Codec{
	ID: "kiro-cli", Name: "Kiro CLI", failExit: 2,
	parse: func(doc map[string]any) (*Call, error) {
		c, err := parseSnake(doc, "preToolUse", "Kiro CLI's preToolUse")
		if err != nil {
			return nil, err
		}
		if c.Input, err = kiroSingleRead(c.Tool, c.Input); err != nil {
			return nil, err
		}
		c.Tool, c.Input, err = kiroTools.Map(c.Tool, c.Input)
		return c, err
	},
	encode: exitCoded,
	read:   readDecision,
})

// kiroSingleRead gives a read of one file through Kiro's operations list
// ({operations: [{mode, path}]}) the path of that file; a read of several,
// or an operation naming files otherwise (Image mode's image_paths), keeps
// its list, names no file_path, and so is not accepted. A path beside the
// list is refused: gated would decide the one and Kiro read the other.
func kiroSingleRead(tool string, in map[string]any) (map[string]any, error) {
	if t := strings.ToLower(strings.TrimSpace(tool)); t != "read" && t != "fs_read" {
		return in, nil
	}
	ops, has := in["operations"]
	if !has {
		return in, nil
	}
	if _, both := in["path"]; both {
		return nil, fmt.Errorf("the %s call gives both a path and an operations list", tool)
	}
	list, ok := ops.([]any)
	if !ok || len(list) != 1 {
		return in, nil
	}
	op, ok := list[0].(map[string]any)
	if !ok {
		return in, nil
	}
	for k := range op {
		if !kiroOpFields[k] {
			return in, nil
		}
	}
	out := make(map[string]any, len(in)+1)
	for k, v := range in {
		out[k] = v
	}
	delete(out, "operations")
	out["path"] = op["path"]
	return out, nil
}

// kiroOpFields are the fields of a Line, Directory or Search operation,
// which read only the file or directory at its path.
var kiroOpFields = map[string]bool{"mode": true, "path": true, "start_line": true, "end_line": true, "depth": true, "pattern": true, "context_lines": true}

// kiroTools maps Kiro CLI's built-in tools (by their current and their
// older names) onto the catalog's.
var kiroTools = Tools{
	"shell":        {Name: "Bash", Args: map[string][]string{argCommand: {"command"}}},
	"execute_bash": {Name: "Bash", Args: map[string][]string{argCommand: {"command"}}},
	"read":         {Name: "Read", Args: map[string][]string{argFilePath: {"path"}}},
	"fs_read":      {Name: "Read", Args: map[string][]string{argFilePath: {"path"}}},
	"write":        {Name: "Write", Args: map[string][]string{argFilePath: {"path"}, argContent: {"file_text"}}},
	"fs_write":     {Name: "Write", Args: map[string][]string{argFilePath: {"path"}, argContent: {"file_text"}}},
	"glob":         {Name: "Glob", Args: map[string][]string{argPattern: {"pattern"}, argPath: {"path"}}},
	"grep":         {Name: "Grep", Args: map[string][]string{argPattern: {"pattern"}, argPath: {"path"}}},
}

// Factory Droid: Claude Code's PreToolUse format (exit 2 blocks), with its
// own tool names, and the common fields in camelCase in some versions. It
// is not asked: droid exec has nobody at the keyboard.
var Droid = register(func() *Codec {
	c := claudeShaped("droid", "Factory Droid", false, droidTools)
	parse := c.parse
	c.parse = func(doc map[string]any) (*Call, error) {
		doc, err := snakeCommon(doc)
		if err != nil {
			return nil, err
		}
		return parse(doc)
	}
	return c
}())

// droidTools maps Droid's tools onto the catalog's.
var droidTools = Tools{
	"execute": {Name: "Bash", Args: map[string][]string{argCommand: {"command"}}},
	"create":  {Name: "Write", Args: map[string][]string{argFilePath: {"file_path", "path"}, argContent: {"content"}}},
	"edit":    {Name: "Edit", Args: map[string][]string{argFilePath: {"file_path", "path"}, argOld: {"old_str", "old_string"}, argNew: {"new_str", "new_string"}}},
	"read":    {Name: "Read", Args: map[string][]string{argFilePath: {"file_path", "path"}}},
}

// snakeCommon gives a copy of doc with the common fields some runtimes
// send in camelCase under their snake_case names. Both spellings of one
// field with different values make the input unreadable.
func snakeCommon(doc map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	for camel, snake := range map[string]string{"hookEventName": "hook_event_name", "sessionId": "session_id", "toolName": "tool_name", "toolInput": "tool_input", "toolUseId": "tool_use_id"} {
		v, ok := doc[camel]
		if !ok {
			continue
		}
		if w, both := doc[snake]; both && !reflect.DeepEqual(v, w) {
			return nil, fmt.Errorf("the hook input gives %s and %s with different values", camel, snake)
		}
		out[snake] = v
	}
	return out, nil
}
