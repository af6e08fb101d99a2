package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/pgtest"
)

const testHMACKey = "0123456789abcdef0123456789abcdef"

// Canaries planted in everything a caller can send; none may be stored or
// logged. Each is shaped like what it stands for.
var canaries = map[string]string{
	"argument value":   "canary-argument-7d1f9a",
	"argument secret":  "sk-canaryArgSecret42xyz",
	"evidence summary": "canary-summary-5b2e11",
	"evidence url":     "https://canary-url-9c3d.example/x",
	"bearer token":     "canary-bearer-token-4e8a0c",
	"cookie":           "canary-cookie-2f6b",
	"request id":       "sk-canaryRequestId99abc",
}

// token is one entry of a test's tokens file, with its plaintext.
type token struct {
	name, plain string
	scopes      string // YAML flow list: "[pre_tool_check, shadow]"
	principals  string // YAML flow list, "" for none
}

// tokensFile writes a tokens file of entries (hashes only, as gated reads
// them) into a directory of the test's own and returns its path.
func tokensFile(t *testing.T, entries ...token) string {
	t.Helper()
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "- name: %s\n  sha256: %s\n  scopes: %s\n", e.name, auth.Hash(e.plain), e.scopes)
		if e.principals != "" {
			fmt.Fprintf(&b, "  principals: %s\n", e.principals)
		}
	}
	p := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeTokens(t *testing.T) string {
	t.Helper()
	return tokensFile(t, token{"agent", canaries["bearer token"], "[pre_tool_check, decisions_read]", ""})
}

// TestAuditCanariesThroughHTTP drives decisions through the real server
// into a real PostgreSQL and proves that no planted canary appears anywhere
// in the database (pg_dump) or in the logs.
func TestAuditCanariesThroughHTTP(t *testing.T) {
	t.Parallel()
	name, dbURL := pgtest.Fresh(t)
	base, logs := startServe(t, []string{"--database-url", dbURL, "--audit-hmac-key", testHMACKey,
		"--audit-durability", "sync", "--tokens", writeTokens(t), "--log-level", "debug"}, nil)
	hdr := map[string]string{
		"Authorization": "Bearer " + canaries["bearer token"],
		"Cookie":        "session=" + canaries["cookie"],
		"X-Request-Id":  canaries["request id"],
	}
	ev := `{"tool_name":"get_account_statement","tool_category":"private_read","authorization_state":"authenticated",
		"evidence_refs":[{"source_id":"auth.session","kind":"auth_event","trust_tier":"verified","redaction_status":"redacted",
			"summary":"` + canaries["evidence summary"] + `","citation_url":"` + canaries["evidence url"] + `",
			"freshness":{"status":"fresh"},"provenance":"connector"}],
		"risk_domain":"finance","proposed_arguments":{"account_id":"` + canaries["argument value"] + `","password":"` + canaries["argument secret"] + `"},
		"recommended_route":"accept"}`
	var ids []string
	for i := 0; i < 3; i++ {
		code, d := post(t, base+"/pre-tool-check", ev, hdr)
		if code != http.StatusOK {
			t.Fatalf("status %d: %v", code, d)
		}
		a, _ := d["audit"].(map[string]any)
		if a["sink"] != "postgres" || a["status"] != "written" {
			t.Fatalf("sync mode must answer after the record is written: audit = %v", d["audit"])
		}
		ids = append(ids, d["decision_id"].(string))
	}

	// The record reads back, with keys but no values.
	code, rec := get(t, base+"/v1/decisions/"+ids[0], hdr)
	if code != http.StatusOK || rec["decision_id"] != ids[0] || rec["token_name"] != "agent" {
		t.Fatalf("GET decision: %d %v", code, rec)
	}
	keys, _ := json.Marshal(rec["argument_keys"])
	if !strings.Contains(string(keys), "account_id") || strings.Contains(string(keys), `"password"`) {
		t.Errorf("argument_keys = %s: want account_id, and password masked", keys)
	}
	if code, _ := get(t, base+"/v1/decisions/01a1fafc-0000-7000-8000-000000000000", hdr); code != http.StatusNotFound {
		t.Errorf("unknown id: status %d, want 404", code)
	}
	code, page := get(t, base+"/v1/decisions?tool_name=get_account_statement&limit=2", hdr)
	if recs, _ := page["records"].([]any); code != http.StatusOK || len(recs) != 2 || page["next_cursor"] == nil {
		t.Fatalf("list: %d %v", code, page)
	}
	for _, q := range []string{"agent_id=nobody", "blocker=no_such_blocker"} {
		if code, page := get(t, base+"/v1/decisions?"+q, hdr); code != http.StatusOK || len(page["records"].([]any)) != 0 {
			t.Errorf("list ?%s: %d %v, want no records", q, code, page)
		}
	}
	if code, _ := get(t, base+"/v1/decisions?since=yesterday", hdr); code != http.StatusBadRequest {
		t.Errorf("bad since: status %d, want 400", code)
	}

	dump, err := exec.Command("pg_dump", "--no-owner", pgtest.WithDatabase(t, pgtest.AdminURL(), name)).CombinedOutput()
	if err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, dump)
	}
	if !strings.Contains(string(dump), ids[0]) {
		t.Fatal("pg_dump does not hold the decision: the canary check would prove nothing")
	}
	for what, c := range canaries {
		if strings.Contains(string(dump), c) {
			t.Errorf("%s canary found in the database", what)
		}
		if strings.Contains(logs.String(), c) {
			t.Errorf("%s canary found in the logs", what)
		}
	}
}

func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	_, dbURL := pgtest.Fresh(t)
	migrate := func(args ...string) string {
		t.Helper()
		var out strings.Builder
		if err := run(context.Background(), append([]string{"gated", "migrate"}, args...), env(nil), nil, &out, io.Discard); err != nil {
			t.Fatalf("migrate %v: %v\n%s", args, err, out.String())
		}
		return out.String()
	}
	migrate("up", "--database-url", dbURL)
	if status := migrate("status", "--database-url", dbURL); !strings.Contains(status, "00001") || !strings.Contains(strings.ToLower(status), "applied") {
		t.Fatalf("status after up:\n%s", status)
	}
	migrate("down", "--database-url", dbURL)
	if status := migrate("status", "--database-url", dbURL); !strings.Contains(strings.ToLower(status), "pending") {
		t.Fatalf("status after down:\n%s", status)
	}
	// The URL may come from the environment; without one it is a usage error.
	var out strings.Builder
	if err := run(context.Background(), []string{"gated", "migrate", "up"}, env(map[string]string{"GATED_DATABASE_URL": dbURL}), nil, &out, io.Discard); err != nil {
		t.Fatalf("migrate up from GATED_DATABASE_URL: %v", err)
	}
	for _, args := range [][]string{{"gated", "migrate"}, {"gated", "migrate", "sideways"}, {"gated", "migrate", "up"}} {
		if got := exitCode(run(context.Background(), args, env(nil), nil, io.Discard, io.Discard)); got != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, got, exitUsage)
		}
	}
}
