package client_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/client"
)

// The GitHub Copilot Go SDK's hook types, as github.com/github/copilot-sdk/go
// declares them (copied shapes, so gated does not depend on the SDK):
// CopilotPreToolUse must produce a func assignable to its PreToolUseHandler.
type (
	copilotInput struct {
		SessionID        string    `json:"sessionId"`
		Timestamp        time.Time `json:"-"`
		WorkingDirectory string    `json:"cwd"`
		ToolName         string    `json:"toolName"`
		ToolArgs         any       `json:"toolArgs"`
	}
	copilotInvocation struct{ SessionID string }
	copilotOutput     struct {
		PermissionDecision       string `json:"permissionDecision,omitempty"`
		PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
		ModifiedArgs             any    `json:"modifiedArgs,omitempty"`
		AdditionalContext        string `json:"additionalContext,omitempty"`
		SuppressOutput           bool   `json:"suppressOutput,omitempty"`
	}
	copilotHandler func(input copilotInput, invocation copilotInvocation) (*copilotOutput, error)
)

type copilotVectors struct {
	Copilot struct {
		Calls []struct {
			Name       string          `json:"name"`
			Input      json.RawMessage `json:"input"`
			Invocation json.RawMessage `json:"invocation"`
			Want       struct {
				PermissionDecision string `json:"permissionDecision"`
				ReasonContains     string `json:"reason_contains"`
			} `json:"want"`
		} `json:"calls"`
	} `json:"copilot"`
	Failures []struct {
		Name          string `json:"name"`
		CopilotReason string `json:"copilot_reason"`
	} `json:"failures"`
}

func TestConformanceCopilot(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	var cv copilotVectors
	raw, _ := json.Marshal(v.raw)
	if err := json.Unmarshal(raw, &cv); err != nil {
		t.Fatal(err)
	}
	g := startGated(t, v)
	var handler copilotHandler = client.CopilotPreToolUse[copilotInput, copilotInvocation, copilotOutput](
		client.New(g.URL, client.WithToken(v.Tokens["valid"])))
	for _, tc := range cv.Copilot.Calls {
		t.Run(tc.Name, func(t *testing.T) {
			var in copilotInput
			var inv copilotInvocation
			if json.Unmarshal(tc.Input, &in) != nil || json.Unmarshal(tc.Invocation, &inv) != nil {
				t.Fatal("unreadable vector")
			}
			out, err := handler(in, inv)
			if err != nil || out.PermissionDecision != tc.Want.PermissionDecision || !strings.Contains(out.PermissionDecisionReason, tc.Want.ReasonContains) {
				t.Fatalf("got %+v, %v; want %s with %q", out, err, tc.Want.PermissionDecision, tc.Want.ReasonContains)
			}
		})
	}
	in := copilotInput{SessionID: "s", ToolName: "Read", ToolArgs: map[string]any{"file_path": "README.md"}}
	for i, f := range v.Failures {
		t.Run("failure/"+f.Name, func(t *testing.T) {
			out, err := client.CopilotPreToolUse[copilotInput, copilotInvocation, copilotOutput](failingClient(t, v, g, i))(in, copilotInvocation{})
			if err != nil || out.PermissionDecision != "deny" || !strings.Contains(out.PermissionDecisionReason, cv.Failures[i].CopilotReason) {
				t.Fatalf("got %+v, %v; want deny naming %s", out, err, cv.Failures[i].CopilotReason)
			}
		})
	}
}
