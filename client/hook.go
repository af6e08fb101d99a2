package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
)

// HookAnswer is gated's answer to a coding agent's PreToolUse hook.
type HookAnswer struct {
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`

	Raw json.RawMessage `json:"-"`
}

// Hook forwards a runtime's PreToolUse hook input, as the runtime sent it,
// to gated's /v1/hooks/{runtime} (e.g. claude-code), where gated maps it to
// an event with its catalog and decides. It fails closed: on any failure,
// or an answer that is not allow, ask or deny, it returns an error and no
// answer, and the caller must block the tool.
func (c *Client) Hook(ctx context.Context, runtime string, input []byte) (*HookAnswer, error) {
	raw, err := c.HookRaw(ctx, runtime, input)
	if err != nil {
		return nil, err
	}
	var a HookAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, &Error{BlockerBadAnswer, fmt.Errorf("gated's hook answer is not JSON: %w", err)}
	}
	switch a.HookSpecificOutput.PermissionDecision {
	case "allow", "ask", "deny":
	default:
		return nil, &Error{BlockerBadAnswer, fmt.Errorf("gated's hook answer has no known permissionDecision (got %q)", a.HookSpecificOutput.PermissionDecision)}
	}
	a.Raw = raw
	return &a, nil
}

// HookRaw forwards a hook input as Hook does and returns gated's answer as
// it came, in the runtime's own format, for a caller that checks it (each
// runtime's answer has its own shape). It fails closed as Hook does on any
// failure; it does not read the answer.
func (c *Client) HookRaw(ctx context.Context, runtime string, input []byte) (json.RawMessage, error) {
	raw, err := c.post(ctx, c.path("/v1/hooks/"+url.PathEscape(runtime)), input)
	if err != nil {
		return nil, err
	}
	return raw, nil
}
