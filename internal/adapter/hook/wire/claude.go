package wire

import (
	"fmt"
	"maps"
	"strings"
)

// Claude Code's PreToolUse shape, which Codex's command hook and the
// Copilot SDK handlers of gated's SDKs speak too: snake_case input, the
// answer under hookSpecificOutput, exit 2 to block on a failure (Claude
// Code and Codex run the tool on any other non-zero exit).
var (
	ClaudeCode = register(claudeShaped("claude-code", "Claude Code", true, nil))
	Codex      = register(withRebase(claudeShaped("codex", "Codex", false, nil)))
	CopilotSDK = register(claudeShaped("copilot", "GitHub Copilot", true, nil))
	// OpenCode's plugin (sdk/typescript, @gatedhq/gated/opencode) maps
	// OpenCode's tools to Claude Code's and posts this shape; it has its own
	// runtime so its decisions are audited as OpenCode's. A plugin throwing
	// is OpenCode's only block, and it cannot ask.
	OpenCode = register(claudeShaped("opencode", "OpenCode", false, nil))
	// Qwen Code (@qwen-code/qwen-code) documents Claude Code's PreToolUse
	// input and answer with Gemini CLI's tool names: exit 2 blocks, other
	// exit codes are non-blocking errors; an "ask" in a run that cannot
	// prompt (--prompt, background subagents) is a deny.
	QwenCode = register(claudeShaped("qwen-code", "Qwen Code", true, qwenTools))
)

// qwenTools maps Qwen Code's tools: Gemini CLI's, with edit for replace
// (Qwen's newer name), web_fetch and web_search.
var qwenTools = func() Tools {
	t := maps.Clone(geminiTools)
	t["edit"] = Tool{Name: "Edit", Args: map[string][]string{argFilePath: {"file_path", "absolute_path"}, argOld: {"old_string"}, argNew: {"new_string"}}}
	t["web_fetch"] = Tool{Name: "WebFetch", Args: map[string][]string{"url": {"url"}}}
	t["web_search"] = Tool{Name: "WebSearch", Args: map[string][]string{"query": {"query"}}}
	return t
}()

// ClaudeOutput is the answer: {"hookSpecificOutput": {…}}.
type ClaudeOutput struct {
	HookSpecificOutput ClaudeSpecific `json:"hookSpecificOutput"`
}

// ClaudeSpecific is the PreToolUse part of the answer.
type ClaudeSpecific struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

// claudeShaped is a runtime speaking Claude Code's PreToolUse format with
// its own tool table. canAsk is false for a runtime that rejects "ask"
// (Codex: a rejected answer is a failed hook, and Codex runs the tool).
func claudeShaped(id, name string, canAsk bool, tools Tools) *Codec {
	c := &Codec{ID: id, Name: name, failExit: 2}
	if canAsk {
		c.asks = map[string]bool{"": true, "PreToolUse": true}
	}
	c.parse = func(doc map[string]any) (*Call, error) { return parseClaude(doc, tools) }
	c.encode = func(v Verdict, reason, _ string) Reply {
		return Reply{Body: ClaudeOutput{ClaudeSpecific{HookEventName: "PreToolUse", PermissionDecision: string(v), PermissionDecisionReason: reason}}}
	}
	c.read = func(raw []byte) (Verdict, string, error) {
		var a ClaudeOutput
		if err := decodeAnswer(raw, &a); err != nil {
			return "", "", err
		}
		v, err := checkVerdict(a.HookSpecificOutput.PermissionDecision, Allow, Ask, Deny)
		return v, a.HookSpecificOutput.PermissionDecisionReason, err
	}
	return c
}

// parseClaude reads {session_id, cwd, hook_event_name, tool_name,
// tool_input, tool_use_id}; an event other than PreToolUse is not one gated
// can decide.
func parseClaude(doc map[string]any, tools Tools) (*Call, error) {
	var c Call
	err := strs(doc, snakeFields(&c))
	if err != nil {
		return nil, err
	}
	if c.Event != "" && c.Event != "PreToolUse" {
		return nil, fmt.Errorf("gated answers PreToolUse hooks only, not %q", c.Event)
	}
	if v, ok := doc["tool_input"]; ok && v != nil {
		m, isObj := v.(map[string]any)
		if !isObj {
			return nil, fmt.Errorf("the hook input's tool_input has the wrong type (want an object)")
		}
		c.Input = m
	}
	if c.Tool, c.Input, err = tools.Map(c.Tool, c.Input); err != nil {
		return nil, err
	}
	return &c, nil
}

// withRebase gives a Claude-shaped runtime Rebase. Codex 0.169.0 reports
// exec_command {cmd, workdir} as Bash {command} with cwd set to the
// workdir the model chose, and runs its hooks in the session's folder: seen
// driving it with a scripted model (workdir /etc gave cwd "/etc" and the
// hook's own working directory the workspace).
func withRebase(c *Codec) *Codec {
	c.rebase = func(doc map[string]any, workspace string) bool {
		cwd, _ := doc["cwd"].(string)
		tool, _ := doc["tool_name"].(string)
		in, _ := doc["tool_input"].(map[string]any)
		cmd, isStr := in["command"].(string)
		if cwd == "" || within(cwd, workspace) || !strings.EqualFold(strings.TrimSpace(tool), "Bash") || !isStr {
			return false
		}
		moved := make(map[string]any, len(in))
		for k, v := range in {
			moved[k] = v
		}
		moved["command"] = inDir(cwd, cmd)
		doc["tool_input"], doc["cwd"] = moved, workspace
		return true
	}
	return c
}
