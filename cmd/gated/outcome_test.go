package main

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/pgtest"
)

// TestOutcomeThroughServe reports an outcome to a real gated on a real
// PostgreSQL: serve wires the store and the audit key, the decision links
// the outcome, the metric counts it, and the output is nowhere in the
// database (pg_dump) or the logs.
func TestOutcomeThroughServe(t *testing.T) {
	t.Parallel()
	const secret, canary = "outcome-agent-token-0123456789", "canary-output-8b7e2c"
	name, dbURL := pgtest.Fresh(t)
	tokens := tokensFile(t, token{"agent", secret, "[pre_tool_check, decisions_read, metrics]", ""})
	base, logs := startServe(t, []string{"--database-url", dbURL, "--audit-hmac-key", testHMACKey,
		"--audit-durability", "sync", "--tokens", tokens, "--log-level", "debug"}, nil)
	hdr := map[string]string{"Authorization": "Bearer " + secret}
	code, d := post(t, base+"/pre-tool-check", `{"tool_name":"get_weather","tool_category":"public_read","authorization_state":"none",
		"evidence_refs":[],"risk_domain":"public_information","proposed_arguments":{"city":"Lisbon"},"recommended_route":"accept"}`, hdr)
	if code != http.StatusOK || d["route"] != "accept" {
		t.Fatalf("decision: %d %v", code, d)
	}
	id := d["decision_id"].(string)

	code, o := post(t, base+"/v1/decisions/"+id+"/outcome",
		`{"status":"reverted","rollback":{"attempted":true,"ok":true},"output":{"error":"`+canary+`"}}`, hdr)
	if code != http.StatusCreated || o["status"] != "reverted" || o["token_name"] != "agent" {
		t.Fatalf("outcome: %d %v", code, o)
	}
	code, rec := get(t, base+"/v1/decisions/"+id, hdr)
	if got, _ := rec["outcome"].(map[string]any); code != http.StatusOK || got["output_fingerprint"] != o["output_fingerprint"] {
		t.Fatalf("GET decision: %d %v", code, rec)
	}
	_, metrics := send(t, http.MethodGet, base+"/metrics", nil, hdr)
	if !strings.Contains(string(metrics), `gated_outcomes_total{status="reverted"} 1`) {
		t.Error("gated_outcomes_total does not count the outcome")
	}

	dump, err := exec.Command("pg_dump", "--no-owner", pgtest.WithDatabase(t, pgtest.AdminURL(), name)).CombinedOutput()
	if err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, dump)
	}
	if !strings.Contains(string(dump), o["output_fingerprint"].(string)) {
		t.Fatal("pg_dump does not hold the outcome: the canary check would prove nothing")
	}
	if strings.Contains(string(dump), canary) || strings.Contains(logs.String(), canary) {
		t.Error("the output is stored or logged")
	}
}
