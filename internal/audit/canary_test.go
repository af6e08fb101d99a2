package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/redact/redacttest"
	"github.com/gatedhq/gated/internal/route"
)

// Canaries: argument values and evidence text may be anything, so plain
// markers; identifiers only get fingerprinted when they look like a secret
// or personal data, so those canaries do.
var (
	plainCanaries = []string{"CANARY-ARG-VALUE-1f2e", "CANARY-NESTED-9a8b", "CANARY-SUMMARY-77c1",
		"canary-citation.example", "canary-retrieval.example", "CANARY-SUBJECT-REF"}
	secretCanaries = []string{"sk-canaryAAAAbbbbCCCC1234", "AKIACANARY0000000001", "canary.person@example.com",
		"password=canaryHunter2!", "4111 1111 1111 1111", "123-45-6789"}
)

// issue25Canaries are the secret forms of issue 25 §3, each planted in an
// evidence source_id ("ticket:ghp_…"), a reason and an argument value.
var issue25Canaries = func() []string {
	var out []string
	for _, c := range redacttest.Canaries {
		out = append(out, c.Secret)
	}
	return out
}()

// canary is a record full of canaries before Redact, with the raw parts
// it is derived from.
type canary struct {
	rec *audit.Record
	raw audit.Raw
}

func canaryInput(id string) canary {
	in := canaryInputBase(id)
	for i, c := range redacttest.Canaries {
		in.raw.Evidence = append(in.raw.Evidence, route.EvidenceRef{SourceID: "ticket:" + c.Text, Kind: "tool_result", TrustTier: "verified", RedactionStatus: "redacted"})
		in.rec.Reasons = append(in.rec.Reasons, "saw "+c.Text)
		in.raw.Arguments.(map[string]any)["form_"+strconv.Itoa(i)] = c.Text
	}
	return in
}

// canaryRecord is c redacted by rd.
func canaryRecord(rd *audit.Redactor, c canary) *audit.Record {
	rd.Redact(c.rec, c.raw)
	return c.rec
}

func canaryInputBase(id string) canary {
	return canary{rec: &audit.Record{
		DecisionID: id, DecidedAt: time.Now(),
		RequestID: secretCanaries[0], AgentID: secretCanaries[2], ToolName: "send_email",
		RiskDomain: "customer_support", FinalRoute: "refuse", GateDecision: "fail",
		HardBlockers: []string{"evidence_contains_secret"}, Reasons: []string{"saw " + secretCanaries[3]},
		TokenName: "ci-token", GatedVersion: "test",
	}, raw: audit.Raw{
		Evidence: []route.EvidenceRef{{
			SourceID: "crm:" + secretCanaries[2], Kind: "tool_result", TrustTier: "verified", RedactionStatus: "sensitive",
			Summary: plainCanaries[2] + " " + secretCanaries[4], CitationURL: "https://" + plainCanaries[3] + "/x",
			RetrievalURL: "https://" + plainCanaries[4] + "/y", Provenance: plainCanaries[2],
			Freshness: route.Freshness{Status: "fresh"},
		}, {SourceID: secretCanaries[1], Kind: "policy", TrustTier: "runtime", RedactionStatus: "public"}},
		Arguments: map[string]any{
			"to":                secretCanaries[2],
			"body":              plainCanaries[0],
			"api_key":           secretCanaries[0],
			secretCanaries[1]:   "key that is itself a secret",
			"nested":            map[string]any{"deep": []any{plainCanaries[1], secretCanaries[5]}},
			"authorization":     "Bearer " + plainCanaries[5],
			"customer_password": secretCanaries[3],
		},
	}}
}

func assertNoCanary(t *testing.T, where string, data []byte) {
	t.Helper()
	for _, c := range slices.Concat(plainCanaries, secretCanaries, issue25Canaries) {
		if bytes.Contains(data, []byte(c)) {
			t.Errorf("canary %q found in %s", c, where)
		}
	}
}

func TestRedactionCanaries(t *testing.T) {
	t.Parallel()
	pgDump, err := exec.LookPath("pg_dump")
	if err != nil {
		t.Fatal("pg_dump not installed: the canary proof needs it")
	}
	name, u := migratedDB(t)
	core, logs := observer.New(zapcore.DebugLevel)
	rd := audit.NewRedactor([]byte("canary-test-key"))

	// Through the spool (the database is down) and then replayed into it.
	p := newProxy(t, upstream(t))
	p.Cut()
	cfg := testConfig(p.URL(t, u), t)
	cfg.Durability, cfg.Logger = audit.Sync, zap.New(core)
	r := open(t, cfg)
	if res, err := r.Record(context.Background(), canaryRecord(rd, canaryInput("canary-spooled"))); err != nil || res.Status != audit.StatusSpooled {
		t.Fatalf("spooled: %+v %v", res, err)
	}
	segs, _ := filepath.Glob(filepath.Join(cfg.SpoolDir, "*", "seg-*.log"))
	if len(segs) == 0 {
		t.Fatal("no spool segment: the grep below would prove nothing")
	}
	for _, s := range segs {
		b, _ := os.ReadFile(s)
		assertNoCanary(t, "spool segment", b)
	}
	p.Restore()
	// And straight into PostgreSQL.
	if res, err := r.Record(context.Background(), canaryRecord(rd, canaryInput("canary-direct"))); err != nil || res.Status == audit.StatusDropped {
		t.Fatalf("direct: %+v %v", res, err)
	}
	waitSpoolEmpty(t, r)
	closeRec(t, r)
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions WHERE decision_id LIKE 'canary-%'"); n != 2 {
		t.Fatalf("%d canary records stored, want 2", n)
	}

	var dump bytes.Buffer
	cmd := exec.Command(pgDump, "--data-only", "--dbname", u)
	cmd.Stdout = &dump
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pg_dump %s: %v", name, err)
	}
	if !bytes.Contains(dump.Bytes(), []byte("canary-direct")) || !bytes.Contains(dump.Bytes(), []byte(audit.MaskedKey)) {
		t.Fatal("dump does not hold the records: the grep below would prove nothing")
	}
	assertNoCanary(t, "pg_dump", dump.Bytes())

	var logText strings.Builder
	for _, e := range logs.All() {
		b, _ := json.Marshal(e.ContextMap())
		logText.WriteString(e.Message + " " + string(b) + "\n")
	}
	if logs.Len() == 0 {
		t.Fatal("no logs captured: the outage should have logged")
	}
	assertNoCanary(t, "logs", []byte(logText.String()))

	// The file sink stores the same redacted record.
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	fr := openFile(t, path, audit.Config{Durability: audit.Sync})
	if _, err := fr.Record(context.Background(), canaryRecord(rd, canaryInput("canary-file"))); err != nil {
		t.Fatal(err)
	}
	closeRec(t, fr)
	b, _ := os.ReadFile(path)
	if !bytes.Contains(b, []byte("canary-file")) {
		t.Fatal("file sink wrote nothing")
	}
	assertNoCanary(t, "audit file", b)
}
