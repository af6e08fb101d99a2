package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/audit/chain"
	"github.com/gatedhq/gated/internal/audit/file"
	"github.com/gatedhq/gated/internal/bundle/bundletest"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/pgtest"
)

// gated records into a file with a signing key given as a secret's PEM;
// `gated audit verify` says the chain holds to the signed checkpoint, a
// decision's receipt checks offline with the public key, and a changed
// record is named.
func TestAuditVerifyReceiptCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, pub, keys := signedTrail(t, 5)
	priv := filepath.Join(filepath.Dir(path), "key.pem")
	if err := os.WriteFile(priv, keys.PrivPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	gated := func(stdin io.Reader, args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"gated", "audit"}, args...), func(string) string { return "" }, stdin, &out, io.Discard)
		return out.String(), err
	}

	out, err := gated(nil, "verify", "--audit-file", path, "--public-key", pub)
	if err != nil || !strings.Contains(out, "5 record(s), seq 1–5 hold up to the checkpoint signed at") {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	receipt, err := gated(nil, "receipt", "--audit-file", path, "dec-000003")
	if err != nil {
		t.Fatalf("receipt: %v", err)
	}
	out, err = gated(strings.NewReader(receipt), "verify-receipt", "--public-key", pub)
	if err != nil || !strings.HasPrefix(out, "the receipt holds: decision dec-000003") {
		t.Fatalf("verify-receipt: %v\n%s", err, out)
	}
	// jq reads the route forged, while encoding/json, folding case, took
	// the one the checkpoint signs from the member in capitals after it.
	ambiguous := strings.Replace(receipt, `"final_route": "`, `"final_route": "forged", "FINAL_ROUTE": "`, 1)
	if ambiguous == receipt {
		t.Fatal("the test's edit changed nothing")
	}
	if out, err := gated(strings.NewReader(ambiguous), "verify-receipt", "--public-key", pub); err == nil || strings.Contains(out, "holds") {
		t.Fatalf("verify-receipt of a receipt with FINAL_ROUTE: %v\n%s", err, out)
	}
	out, err = gated(nil, "public-key", "--audit-signing-key", priv)
	if err != nil || !strings.HasPrefix(out, string(keys.PublicPEM)) {
		t.Fatalf("public-key: %v\n%s", err, out)
	}

	data, _ := os.ReadFile(path)
	tampered := strings.Replace(string(data), `"request_id":"req-3"`, `"request_id":"req-33"`, 1)
	if tampered == string(data) {
		t.Fatal("the test's edit changed nothing")
	}
	if err := os.WriteFile(path, []byte(tampered), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = gated(nil, "verify", "--audit-file", path, "--public-key", pub)
	if code := exitCode(err); code != 1 || !strings.Contains(out, "BROKEN: modified at seq 3 (decision dec-000003)") {
		t.Fatalf("verify of a changed file: exit %d\n%s", code, out)
	}
	out, err = gated(strings.NewReader(strings.Replace(receipt, "req-3", "req-33", 1)), "verify-receipt", "--public-key", pub)
	if code := exitCode(err); code != 1 {
		t.Fatalf("verify-receipt of a changed receipt: exit %d\n%s", code, out)
	}
}

// With a database: gated's recorder and its retention sign with the key
// given as a file, `gated audit verify` reads the table back, and a row
// deleted by hand is named.
func TestAuditVerifyDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, dbURL := pgtest.Fresh(t)
	keys := bundletest.NewKeys(t)
	dir := t.TempDir()
	pub, priv := filepath.Join(dir, "pub.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(pub, keys.PublicPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(priv, keys.PrivPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	af := auditFlags{databaseURL: dbURL, spoolDir: filepath.Join(dir, "spool"), durability: "sync", fail: "closed",
		hmacKey: strings.Repeat("k", minHMACKey), retention: time.Hour, signingKey: priv, checkpoint: time.Hour}
	db, err := openDatabase(ctx, &af)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rec, _, _, err := openAudit(ctx, &af, db, zap.NewNop(), metrics.New("test"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := 1; i <= 5; i++ {
		if _, err := rec.Record(ctx, audittest.Record(i, now)); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	verify := func() (string, error) {
		var out bytes.Buffer
		err := run(ctx, []string{"gated", "audit", "verify", "--public-key", pub}, func(k string) string {
			if k == "GATED_DATABASE_URL" {
				return dbURL
			}
			return ""
		}, nil, &out, io.Discard)
		return out.String(), err
	}
	if out, err := verify(); err != nil || !strings.Contains(out, "seq 1–5 hold up to the checkpoint signed at") {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	// A second row of a decision (another decided_at, another chain) is
	// named, whatever its chain says.
	pgtest.ExecOn(t, dbURL, `CREATE TABLE forged AS SELECT * FROM audit_decisions WHERE decision_id = 'dec-000003';
		UPDATE forged SET decided_at = decided_at - interval '1 second', chain_id = 'fake', chain_seq = 1, final_route = 'accept';
		INSERT INTO audit_decisions SELECT * FROM forged`)
	if out, err := verify(); exitCode(err) != 1 || !strings.Contains(out, "duplicated: 1 decision(s)") || !strings.Contains(out, "dec-000003") {
		t.Fatalf("verify with a decision stored twice: exit %d\n%s", exitCode(err), out)
	}
	pgtest.ExecOn(t, dbURL, "DELETE FROM audit_decisions WHERE chain_id = 'fake'")
	pgtest.ExecOn(t, dbURL, "DELETE FROM audit_decisions WHERE decision_id = 'dec-000002'")
	if out, err := verify(); exitCode(err) != 1 || !strings.Contains(out, "BROKEN: deleted at seq 2") {
		t.Fatalf("verify after a deletion: exit %d\n%s", exitCode(err), out)
	}
}

// Without a signing key records are still chained, and verify says the
// chain holds but is unsigned.
func TestAuditVerifyUnsigned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	af := auditFlags{file: path, spoolDir: filepath.Join(dir, "spool"), durability: "sync", fail: "closed", checkpoint: time.Hour}
	rec, _, _, err := openAudit(ctx, &af, nil, zap.NewNop(), metrics.New("test"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		if _, err := rec.Record(ctx, audittest.Record(i, time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = run(ctx, []string{"gated", "audit", "verify", "--audit-file", path}, func(string) string { return "" }, nil, &out, io.Discard)
	if err != nil || !strings.Contains(out.String(), "2 record(s), seq 1–2 hold; unsigned:") {
		t.Fatalf("verify: %v\n%s", err, out.String())
	}
}

// Signed records copied into a chain of their own with the route changed,
// relinked and appended, make verify fail with --public-key alone (each
// decision is stored twice); a relinked chain of decisions of its own
// passes plain verify, unsigned, but not --require-signed.
func TestAuditVerifyForgedChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, pub, _ := signedTrail(t, 3)
	dir := filepath.Dir(path)
	signed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// forge appends the file's records to a copy of it as chain "fake",
	// relinked, each changed by edit.
	forge := func(name string, edit func(*audit.Record)) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, signed, 0o600); err != nil {
			t.Fatal(err)
		}
		var recs []*audit.Record
		var prev chain.Hash
		if err := file.Read(path, func(_ int, f audit.Frame) error {
			if f.Checkpoint != nil {
				return nil
			}
			r := *f.Record
			edit(&r)
			r.ChainID, r.ChainSeq = "fake", int64(len(recs)+1)
			prev = chain.Link(r.ChainID, r.ChainSeq, prev, audit.ContentHash(&r))
			r.LinkHash = prev.String()
			recs = append(recs, &r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		sink, err := file.Open(p, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := sink.Write(ctx, audit.Batch{Records: recs}); err != nil {
			t.Fatal(err)
		}
		if err := sink.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	verify := func(args ...string) (string, int) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"gated", "audit", "verify", "--public-key", pub}, args...), func(string) string { return "" }, nil, &out, io.Discard)
		return out.String(), exitCode(err)
	}

	copied := forge("copied.jsonl", func(r *audit.Record) { r.FinalRoute = "accept" })
	if out, code := verify("--audit-file", copied); code != 1 || !strings.Contains(out, "duplicated: 3 decision(s)") || !strings.Contains(out, "dec-000002") {
		t.Fatalf("verify of copied records: exit %d\n%s", code, out)
	}

	own := forge("own.jsonl", func(r *audit.Record) { r.DecisionID += "-forged"; r.DecidedAt = r.DecidedAt.Add(-time.Hour) })
	if out, code := verify("--audit-file", own); code != 0 || !strings.Contains(out, "chain fake: 3 record(s), seq 1–3 hold; unsigned") {
		t.Fatalf("plain verify of a chain of its own: exit %d\n%s", code, out)
	}
	if out, code := verify("--audit-file", own, "--require-signed"); code != 1 || !strings.Contains(out, "unsigned: chain fake holds 3 record(s)") {
		t.Fatalf("--require-signed of a chain of its own: exit %d\n%s", code, out)
	}
	// The writer's own head, unsigned yet, is within the grace.
	if out, code := verify("--audit-file", own, "--require-signed", "--signed-grace", "2h"); code != 0 {
		t.Fatalf("--require-signed within the grace: exit %d\n%s", code, out)
	}
	if out, code := verify("--audit-file", path, "--require-signed"); code != 0 {
		t.Fatalf("--require-signed of the signed file: exit %d\n%s", code, out)
	}
}

// signedTrail records n records into a signed audit file of the test's own
// through the audit gated serve opens, and returns the file, the public
// key's file and the keys.
func signedTrail(t *testing.T, n int) (path, pub string, keys bundletest.Keys) {
	t.Helper()
	ctx := context.Background()
	keys = bundletest.NewKeys(t)
	dir := t.TempDir()
	path, pub = filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "pub.pem")
	if err := os.WriteFile(pub, keys.PublicPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	af := auditFlags{file: path, spoolDir: filepath.Join(dir, "spool"), durability: "sync", fail: "closed",
		signingKey: string(keys.PrivPEM), checkpoint: time.Hour}
	rec, _, _, err := openAudit(ctx, &af, nil, zap.NewNop(), metrics.New("test"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := 1; i <= n; i++ {
		if _, err := rec.Record(ctx, audittest.Record(i, now)); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return path, pub, keys
}
