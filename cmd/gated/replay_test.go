package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/testtree"
)

// TestReplayThroughServe records decisions through a real gated serve on
// PostgreSQL, sealed to an age key, then replays them with a changed
// policy: the report counts the change, the exit status gates on the
// widening, and the sealed column holds no argument value in the clear.
func TestReplayThroughServe(t *testing.T) {
	t.Parallel()
	const canary = "CANARY-REPLAY-BODY-5d1e"
	grant := func(who string) string {
		return testtree.Write(t, t.TempDir(), map[string]string{"POLICY.md": "---\nschema: policy/v1\nid: \"@replay/p\"\ngrants:\n  - principal: \"" + who +
			"\"\n    actions:\n      - action: \"messaging:send-email\"\n---\n"})
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	identity := filepath.Join(t.TempDir(), "key.txt")
	if err := os.WriteFile(identity, []byte(id.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	name, dbURL := pgtest.Fresh(t)
	tokens := tokensFile(t, token{"support", "support-token-0123456789abcdef", "[pre_tool_check]", "[bot://support-agent]"},
		token{"other", "other-token-0123456789abcdef012", "[pre_tool_check]", "[bot://other]"})
	base, _ := startServe(t, []string{"--database-url", dbURL, "--audit-hmac-key", testHMACKey, "--audit-durability", "sync",
		"--tokens", tokens, "--catalog", "../../examples/catalog", "--policy", grant("bot://support-agent"),
		"--audit-seal-to", id.Recipient().String()}, nil)
	email := `{"tool_name":"send_email","tool_category":"write","authorization_state":"confirmed",
		"evidence_refs":[{"source_id":"approval.1","kind":"approval","trust_tier":"verified","redaction_status":"redacted","freshness":{"status":"fresh"},"provenance":"connector"}],
		"risk_domain":"customer_support","proposed_arguments":{"to":"c@example.com","subject":"Hi","body":"` + canary + `","ticket_id":"T-42"},"recommended_route":"accept"}`
	for tok, want := range map[string]string{"support-token-0123456789abcdef": "accept", "other-token-0123456789abcdef012": "refuse"} {
		if code, d := post(t, base+"/pre-tool-check", email, map[string]string{"Authorization": "Bearer " + tok}); code != http.StatusOK || d["route"] != want {
			t.Fatalf("recording: %d %v, want %s", code, d, want)
		}
	}

	dump, err := exec.Command("pg_dump", "--no-owner", pgtest.WithDatabase(t, pgtest.AdminURL(), name)).CombinedOutput()
	if err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, dump)
	}
	if strings.Contains(string(dump), canary) || !strings.Contains(string(dump), "bot://other") {
		t.Fatal("the argument value is stored in the clear, or the principals are not stored")
	}

	replayCmd := func(extra ...string) (string, error) {
		var out bytes.Buffer
		args := append([]string{"gated", "replay", "--database-url", dbURL, "--since", "1h", "--catalog", "../../examples/catalog",
			"--policy", grant("bot://other")}, extra...)
		err := run(context.Background(), args, env(nil), strings.NewReader(""), &out, io.Discard)
		return out.String(), err
	}

	out, err := replayCmd("--format", "json", "--seal-identity", identity, "--allow-unseen-widening")
	if exitCode(err) != exitBlocked {
		t.Fatalf("a seen widening: exit %d (%v), want %d", exitCode(err), err, exitBlocked)
	}
	var rep struct {
		Replayed, Changed, Widened, Sealed int
		WidenedUnseen                      int `json:"widened_unseen"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Replayed != 2 || rep.Changed != 2 || rep.Widened != 1 ||
		rep.Sealed != 2 || rep.WidenedUnseen != 0 {
		t.Fatalf("report %+v (%v):\n%s", rep, err, out)
	}
	if strings.Contains(out, canary) {
		t.Error("the report prints an argument value")
	}
	if _, err := replayCmd("--allow-unseen-widening"); exitCode(err) != 0 {
		t.Errorf("without the identity the widening rests on unseen arguments: exit %d (%v), want 0", exitCode(err), err)
	}
	out, err = replayCmd("--format", "markdown", "--allow-widening")
	if exitCode(err) != 0 || !strings.Contains(out, "### Replay") || !strings.Contains(out, "refuse → accept (widened)") {
		t.Errorf("--allow-widening: exit %d (%v)\n%s", exitCode(err), err, out)
	}
	for _, bad := range [][]string{{"--format", "yaml"}, {"--audit-file", "x.jsonl"}, {"--until", "2h"}, {"--seal-identity", tokens}} {
		if _, err := replayCmd(bad...); exitCode(err) != exitUsage {
			t.Errorf("%v: exit %d (%v), want %d", bad, exitCode(err), err, exitUsage)
		}
	}
}

// A recipient that is not one, or a file that is not there, is a usage
// error before serve records anything.
func TestServeBadSealRecipient(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, to := range []string{"age1notarecipient", filepath.Join(dir, "missing.txt")} {
		err := run(context.Background(), []string{"gated", "serve", "--addr", "127.0.0.1:0", "--audit-file", filepath.Join(dir, "a.jsonl"),
			"--spool-dir", filepath.Join(dir, "spool"), "--audit-seal-to", to}, env(nil), nil, io.Discard, io.Discard)
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "--audit-seal-to") {
			t.Errorf("--audit-seal-to %s: %v, want a usage error naming the flag", to, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.jsonl")); !os.IsNotExist(err) {
		t.Errorf("serve opened its audit file before refusing the flag: %v", err)
	}
}

// A replay given --unknown-tools or --argument-validation on its command
// line judges that choice, so records of the same revisions are decided
// again; without them, serve's choice is taken as recorded.
func TestReplayJudgesServeFlagsWhenGiven(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		env  map[string]string
		want bool
	}{
		{nil, nil, false},
		{[]string{"--catalog", "x"}, nil, false},
		{[]string{"--unknown-tools", "allow"}, nil, true},
		{[]string{"--argument-validation=off"}, nil, true},
		// The environment is serve's as often as the operator's choice.
		{nil, map[string]string{"GATED_UNKNOWN_TOOLS": "allow"}, false},
	} {
		fs := newFlagSet("replay", io.Discard)
		var sf sourceFlags
		sf.register(fs)
		if err := parseFlags(fs, c.args, env(c.env)); err != nil {
			t.Fatal(err)
		}
		if got := choosesServeFlags(fs); got != c.want {
			t.Errorf("%v %v: choosesServeFlags %v, want %v", c.args, c.env, got, c.want)
		}
	}
}
