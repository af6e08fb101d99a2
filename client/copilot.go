package client

import (
	"context"
	"encoding/json"
	"fmt"
)

// CopilotInput is the GitHub Copilot SDK's pre-tool-use input: the fields
// gated reads of its PreToolUseHookInput (JSON names as the SDKs send them).
type CopilotInput struct {
	SessionID        string `json:"sessionId"`
	WorkingDirectory string `json:"cwd"`
	ToolName         string `json:"toolName"`
	ToolArgs         any    `json:"toolArgs"`
}

// CopilotOutput is the answer in the Copilot SDK's PreToolUseHookOutput
// shape: allow, ask or deny, with a reason.
type CopilotOutput struct {
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

// Copilot asks gated about one Copilot tool call, through /v1/hooks/copilot
// where gated's catalog gives the tool its category. It never fails: on any
// failure the answer is deny, because the Copilot SDK runs the tool when a
// handler errs.
func (c *Client) Copilot(ctx context.Context, in CopilotInput) CopilotOutput {
	args, ok := in.ToolArgs.(map[string]any)
	if !ok && in.ToolArgs != nil {
		args = map[string]any{"input": in.ToolArgs}
	}
	body, err := json.Marshal(map[string]any{
		"hook_event_name": "PreToolUse", "session_id": in.SessionID, "cwd": in.WorkingDirectory,
		"tool_name": in.ToolName, "tool_input": args,
	})
	if err != nil {
		return copilotDeny(&Error{BlockerBadAnswer, fmt.Errorf("the tool arguments cannot be encoded as JSON: %w", err)})
	}
	a, err := c.Hook(ctx, "copilot", body)
	if err != nil {
		return copilotDeny(err)
	}
	return CopilotOutput{PermissionDecision: a.HookSpecificOutput.PermissionDecision,
		PermissionDecisionReason: a.HookSpecificOutput.PermissionDecisionReason}
}

func copilotDeny(err error) CopilotOutput {
	return CopilotOutput{PermissionDecision: "deny", PermissionDecisionReason: "gated could not check this call, so it is blocked: " + err.Error()}
}

// CopilotPreToolUse returns a handler for the GitHub Copilot SDK's
// OnPreToolUse hook, typed as the SDK's own so it can be assigned directly,
// without gated depending on the SDK:
//
//	hooks := &copilot.SessionHooks{OnPreToolUse: client.CopilotPreToolUse[
//		copilot.PreToolUseHookInput, copilot.HookInvocation, copilot.PreToolUseHookOutput](c)}
//
// In and Inv are read, and Out filled, through their JSON field names
// (sessionId, cwd, toolName, toolArgs; permissionDecision,
// permissionDecisionReason). Every failure answers deny.
func CopilotPreToolUse[In, Inv, Out any](c *Client) func(In, Inv) (*Out, error) {
	return func(in In, inv Inv) (*Out, error) {
		var ci CopilotInput
		var session struct {
			SessionID string `json:"sessionId"`
		}
		ans := copilotDeny(fmt.Errorf("the Copilot input could not be read"))
		if raw, err := json.Marshal(in); err == nil && json.Unmarshal(raw, &ci) == nil {
			if raw, err := json.Marshal(inv); err == nil && json.Unmarshal(raw, &session) == nil && ci.SessionID == "" {
				ci.SessionID = session.SessionID
			}
			ans = c.Copilot(context.Background(), ci)
		}
		var out Out
		raw, _ := json.Marshal(ans)
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("the Copilot output type cannot hold gated's answer: %w", err)
		}
		return &out, nil
	}
}
