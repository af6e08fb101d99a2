package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/auth"
)

// TestAANAReferenceClientRequests sends the exact requests of the AANA
// reference's Python AANAClient (aana/sdk.py) and TypeScript AanaClient
// (sdk/typescript/src/index.ts) to a real gated and reads the answers the
// way those clients and their execution-policy helpers do.
func TestAANAReferenceClientRequests(t *testing.T) {
	t.Parallel()
	const token = "aana-reference-client-token-0123"
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	// Scope shadow: the reference clients' shadow_mode=true needs it.
	if err := os.WriteFile(tokens, []byte("- name: aana\n  sha256: "+auth.Hash(token)+"\n  scopes: [pre_tool_check, shadow]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	base, _ := startServe(t, []string{"--tokens", tokens, "--audit-file", auditFile, "--audit-durability", "sync"}, nil)

	// Both clients send content-type and a bearer token; the reference's
	// server also takes X-AANA-Token (AANAClient's default_headers).
	bearer := map[string]string{"content-type": "application/json", "authorization": "Bearer " + token}
	xToken := map[string]string{"content-type": "application/json", "X-AANA-Token": token}

	for _, tc := range []struct {
		name, query, event string
		hdr                map[string]string
		route              string
		allowed            bool
	}{
		{"tool_precheck accept", "", readExample(t, "send_refund_accept.json"), bearer, "accept", true},
		{"tool_precheck ask", "", readExample(t, "send_email_ask.json"), bearer, "ask", false},
		{"tool_precheck defer with X-AANA-Token", "", readExample(t, "transactions_defer.json"), xToken, "defer", false},
		{"tool_precheck shadow_mode=true", "?shadow_mode=true", readExample(t, "send_email_ask.json"), bearer, "ask", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, res := post(t, base+"/tool-precheck"+tc.query, tc.event, tc.hdr)
			if status != http.StatusOK {
				t.Fatalf("status %d: %v", status, res)
			}
			arch, _ := res["architecture_decision"].(map[string]any)
			policy, _ := res["execution_policy"].(map[string]any)
			if res["route"] != tc.route || arch["route"] != tc.route || res["recommended_action"] != tc.route {
				t.Fatalf("route %v, architecture_decision.route %v, recommended_action %v; want %s",
					res["route"], arch["route"], res["recommended_action"], tc.route)
			}
			if policy["execution_allowed"] != tc.allowed {
				t.Fatalf("execution_policy.execution_allowed %v, want %v", policy["execution_allowed"], tc.allowed)
			}
			// The reference's should_execute_tool: pass, accept, accept, no
			// hard blockers, no validation errors.
			blockers, _ := res["hard_blockers"].([]any)
			enforce := res["gate_decision"] == "pass" && res["recommended_action"] == "accept" &&
				arch["route"] == "accept" && len(blockers) == 0 && res["validation_errors"] == nil
			if enforce != (tc.route == "accept") {
				t.Fatalf("the reference's enforcement check says %v for route %s (blockers %v)", enforce, tc.route, blockers)
			}
			if (tc.route == "accept") != (len(blockers) == 0) {
				t.Fatalf("route %s with hard blockers %v", tc.route, blockers)
			}
		})
	}

	t.Run("validate_tool_precheck valid", func(t *testing.T) {
		status, res := post(t, base+"/validate-tool-precheck", readExample(t, "send_email_ask.json"), bearer)
		errs, _ := res["errors"].([]any)
		if status != http.StatusOK || res["valid"] != true || len(errs) != 0 || res["schema_version"] != "aana.agent_tool_precheck.v1" {
			t.Fatalf("status %d: %v", status, res)
		}
	})
	t.Run("validate_tool_precheck invalid", func(t *testing.T) {
		status, res := post(t, base+"/validate-tool-precheck", `{"tool_name":"send_email","tool_category":"write"}`, bearer)
		errs, _ := res["errors"].([]any)
		if status != http.StatusOK || res["valid"] != false || len(errs) == 0 {
			t.Fatalf("status %d: %v", status, res)
		}
		first, _ := errs[0].(map[string]any)
		if p, _ := first["path"].(string); !strings.HasPrefix(p, "$") || first["message"] == "" {
			t.Fatalf("error %v lacks a JSON path and a message", first)
		}
	})
	t.Run("validate_tool_precheck needs the token", func(t *testing.T) {
		status, res := post(t, base+"/validate-tool-precheck", readExample(t, "send_email_ask.json"), nil)
		if status != http.StatusUnauthorized || res["route"] != "refuse" {
			t.Fatalf("status %d: %v", status, res)
		}
	})
	for _, path := range []string{"/ready", "/health"} {
		t.Run("GET "+path, func(t *testing.T) {
			// The TypeScript client sends no content-type on a GET.
			status, res := get(t, base+path, map[string]string{"authorization": "Bearer " + token})
			if status != http.StatusOK || res["status"] == nil {
				t.Fatalf("status %d: %v", status, res)
			}
		})
	}

	// Four decisions were made; validation recorded nothing.
	deadline := time.Now().Add(5 * time.Second)
	for {
		raw, _ := os.ReadFile(auditFile)
		n := strings.Count(string(raw), "\n")
		if n == 4 {
			break
		}
		if n > 4 || time.Now().After(deadline) {
			t.Fatalf("audit file holds %d records, want 4 (validation must not record)", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
