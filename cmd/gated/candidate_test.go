package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/testgated"
	"github.com/gatedhq/gated/internal/testwait"
)

// weatherActions catalogs the weather tool as an action policies can grant.
const weatherActions = "actions:\n  - name: get_weather\n    description: Read the public weather forecast.\n" +
	"    command: [\"weather\"]\n    inputSchema: { type: object }\n    annotations: { readOnlyHint: true }\n"

// weatherPolicy grants the weather tool to principals, and nothing else.
func weatherPolicy(t *testing.T, dir string, principals ...string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("---\nschema: policy/v1\nid: \"@test/weather\"\ndefault: deny\ngrants:\n")
	for _, p := range principals {
		b.WriteString("  - principal: \"" + p + "\"\n    actions: [{action: \"get_weather\"}]\n")
	}
	b.WriteString("---\n")
	if err := os.WriteFile(filepath.Join(dir, "POLICY.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestServeCandidate runs a real gated with a candidate policy beside the
// live one: the candidate agrees on one caller, would refuse another
// (narrower) and let a third through (wider), while every answer stays
// the live policy's; its routes are counted, stored beside the records,
// summed up, and follow the candidate's edits and SIGHUP.
func TestServeCandidate(t *testing.T) {
	t.Parallel()
	_, dbURL := pgtest.Fresh(t)
	catDir, livePol, candPol := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(catDir, "ACTIONS.yaml"), weatherActions)
	weatherPolicy(t, livePol, "bot://agent-a", "bot://agent-b")
	weatherPolicy(t, candPol, "bot://agent-a", "bot://agent-c")
	secrets := map[string]string{"a": "candidate-token-a-0123456789", "b": "candidate-token-b-0123456789", "c": "candidate-token-c-0123456789",
		"reader": "candidate-token-reader-0123456789"}
	tokens := tokensFile(t,
		token{"a", secrets["a"], "[pre_tool_check]", "[bot://agent-a]"},
		token{"b", secrets["b"], "[pre_tool_check]", "[bot://agent-b]"},
		token{"c", secrets["c"], "[pre_tool_check]", "[bot://agent-c]"},
		token{"reader", secrets["reader"], "[decisions_read, metrics]", ""})
	g := testgated.Start(t, "--database-url", dbURL, "--audit-hmac-key", testHMACKey, "--audit-durability", "sync", "--tokens", tokens,
		"--catalog", catDir, "--policy", livePol, "--candidate", candPol)
	as := func(name string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + secrets[name]}
	}
	reader := as("reader")
	decide := func(name string) map[string]any {
		t.Helper()
		code, d := post(t, g.URL+"/pre-tool-check", `{"tool_name":"get_weather","tool_category":"public_read","authorization_state":"none",
			"evidence_refs":[],"risk_domain":"public_information","proposed_arguments":{"city":"Lisbon"},"recommended_route":"accept"}`, as(name))
		if code != http.StatusOK {
			t.Fatalf("decision for %s: %d %v", name, code, d)
		}
		return d
	}
	want := map[string]string{"a": "accept", "b": "accept", "c": "refuse"} // the live policy's routes
	ids := map[string]string{}
	for _, name := range []string{"a", "b", "c"} {
		d := decide(name)
		if d["route"] != want[name] {
			t.Fatalf("%s: route %v blockers %v, want the live policy's %s", name, d["route"], d["hard_blockers"], want[name])
		}
		ids[name] = d["decision_id"].(string)
	}

	var sum map[string]any
	// The process's counts are read before the stored rows, so a row
	// written between the two reads shows in one and not yet the other:
	// wait for both.
	testwait.Until(t, "the candidate's three rows", func() bool {
		_, sum = get(t, g.URL+"/v1/candidate", reader)
		st, _ := sum["stored"].(map[string]any)
		return st != nil && st["decided"] == float64(3) && sum["decided"] == float64(3)
	})
	st := sum["stored"].(map[string]any)
	if st["same"] != float64(1) || st["wider"] != float64(1) || st["narrower"] != float64(1) || sum["decided"] != float64(3) || sum["skipped"] != float64(0) {
		t.Fatalf("GET /v1/candidate: %v", sum)
	}
	for name, route := range map[string]string{"a": "accept", "b": "refuse", "c": "accept"} {
		_, rec := get(t, g.URL+"/v1/decisions/"+ids[name], reader)
		cand, _ := rec["candidate"].(map[string]any)
		if rec["final_route"] != want[name] || cand == nil || cand["route"] != route || cand["live_route"] != want[name] {
			t.Fatalf("%s's record: route %v, candidate %v", name, rec["final_route"], cand)
		}
	}
	_, rec := get(t, g.URL+"/v1/decisions/"+ids["b"], reader)
	if cand := rec["candidate"].(map[string]any); cand["direction"] != "narrower" || !strings.Contains(stringsOf(cand["hard_blockers"]), "policy_no_grant") ||
		cand["policy_revision"] != sum["policy_revision"] || cand["policy_revision"] == rec["policy_revision"] {
		t.Fatalf("b's candidate row: %v (live policy %v)", cand, rec["policy_revision"])
	}
	_, m := send(t, http.MethodGet, g.URL+"/metrics", nil, reader)
	for _, series := range []string{`gated_candidate_decisions_total{candidate="refuse",live="accept"} 1`,
		`gated_candidate_decisions_total{candidate="accept",live="refuse"} 1`, `gated_candidate_decisions_total{candidate="accept",live="accept"} 1`,
		`gated_candidate_skipped_total 0`} {
		if !strings.Contains(string(m), series) {
			t.Errorf("metrics lack %s", series)
		}
	}

	// An edit swaps the candidate: now it agrees with the live policy on b.
	weatherPolicy(t, candPol, "bot://agent-a", "bot://agent-b")
	testwait.Until(t, "the candidate's new revision", func() bool {
		_, s := get(t, g.URL+"/v1/candidate", reader)
		return s["policy_revision"] != sum["policy_revision"]
	})
	id := decide("b")["decision_id"].(string)
	testwait.Until(t, "b's row on the new candidate", func() bool {
		_, rec := get(t, g.URL+"/v1/decisions/"+id, reader)
		cand, _ := rec["candidate"].(map[string]any)
		return cand != nil && cand["direction"] == "same"
	})

	// SIGHUP reloads the candidate with the live sources.
	reloads := func() int { return strings.Count(g.Logs(), `"logger":"candidate","msg":"policy reloaded"`) }
	before := reloads()
	g.Hangup()
	testwait.Until(t, "the candidate to reload on SIGHUP", func() bool { return reloads() > before })
}

func stringsOf(v any) string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return strings.Join(out, ",")
}

// Without a database the candidate's rows go to the file beside the audit
// file, one JSON object a line, and the audit file keeps only records.
func TestServeCandidateWithoutDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	catDir, livePol, candPol := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(catDir, "ACTIONS.yaml"), weatherActions)
	weatherPolicy(t, livePol, "bot://agent-a")
	weatherPolicy(t, candPol, "bot://nobody")
	const secret = "candidate-file-token-0123456789"
	auditFile := filepath.Join(dir, "audit.jsonl")
	g := testgated.Start(t, "--audit-file", auditFile, "--tokens", tokensFile(t, token{"a", secret, "[pre_tool_check]", "[bot://agent-a]"}),
		"--catalog", catDir, "--policy", livePol, "--candidate", candPol)
	code, d := post(t, g.URL+"/pre-tool-check", `{"tool_name":"get_weather","tool_category":"public_read","authorization_state":"none",
		"evidence_refs":[],"risk_domain":"public_information","proposed_arguments":{"city":"Lisbon"},"recommended_route":"accept"}`,
		map[string]string{"Authorization": "Bearer " + secret})
	if code != http.StatusOK || d["route"] != "accept" {
		t.Fatalf("decision: %d %v", code, d)
	}
	var row map[string]any
	testwait.Until(t, "the candidate's line", func() bool {
		data, err := os.ReadFile(auditFile + ".candidates")
		return err == nil && json.Unmarshal(data, &row) == nil
	})
	if row["decision_id"] != d["decision_id"] || row["live_route"] != "accept" || row["route"] != "refuse" || row["direction"] != "narrower" {
		t.Fatalf("the candidate's line: %v", row)
	}
	testwait.Until(t, "the decision's record", func() bool {
		data, err := os.ReadFile(auditFile)
		return err == nil && strings.Contains(string(data), d["decision_id"].(string))
	})
	if data, _ := os.ReadFile(auditFile); strings.Contains(string(data), `"live_route"`) {
		t.Fatal("the audit file holds a candidate line")
	}
}
