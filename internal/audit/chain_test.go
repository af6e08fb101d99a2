package audit_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/audit/chain"
	"github.com/gatedhq/gated/internal/audit/file"
	"github.com/gatedhq/gated/internal/audit/postgres"
	"github.com/gatedhq/gated/internal/pgtest"
)

// chainRecords is how many records the chain tests store; the tampering
// happens at tamperSeq.
const (
	chainRecords = 20
	tamperSeq    = 7
)

func signer(t testing.TB) *chain.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return chain.NewSigner(priv)
}

// recordChain stores chainRecords records through r, one at a time (sync),
// so the chain's seqs follow the records' numbers, and closes r.
func recordChain(t *testing.T, r audit.Recorder) []*audit.Record {
	t.Helper()
	now := time.Now()
	recs := make([]*audit.Record, chainRecords)
	for i := range recs {
		recs[i] = audittest.Record(i+1, now)
		if _, err := r.Record(context.Background(), recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	closeRec(t, r)
	return recs
}

func chainConfig(s *chain.Signer) audit.Config {
	// A checkpoint with every batch, besides the one Close signs.
	return audit.Config{Durability: audit.Sync, Signer: s, CheckpointInterval: time.Nanosecond}
}

// holds asserts the trail verifies, every chain signed to its end.
func holds(t *testing.T, tr *audit.Trail, keys chain.Keys) {
	t.Helper()
	v := tr.Verify(keys)
	if !v.OK() || len(v.Chains) == 0 {
		t.Fatalf("the untouched trail does not verify: %+v", v)
	}
	for _, c := range v.Chains {
		if c.Signed != c.Through || c.Through == 0 {
			t.Fatalf("chain %s verified through %d, signed through %d: %+v", c.Chain, c.Through, c.Signed, c)
		}
	}
}

// broken asserts the trail's one chain breaks with kind at seq.
func broken(t *testing.T, tr *audit.Trail, keys chain.Keys, kind string, seq int64) {
	t.Helper()
	v := tr.Verify(keys)
	if v.OK() {
		t.Fatalf("tampering went unnoticed: %+v", v)
	}
	p := v.Chains[0].Problem
	if p == nil || p.Kind != kind || p.Seq != seq {
		t.Fatalf("got %v, want %s at seq %d", p, kind, seq)
	}
}

// Each of the four things done to a JSON-lines audit file is reported at
// the first record it touched; the untouched file holds to its last
// signed checkpoint.
func TestChainFileTampering(t *testing.T) {
	t.Parallel()
	s := signer(t)
	keys := chain.NewKeys(s.Public())
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	recordChain(t, openFile(t, path, chainConfig(s)))
	tr, err := file.ReadTrail(path)
	if err != nil {
		t.Fatal(err)
	}
	holds(t, tr, keys)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(orig, []byte("\n"))
	at := func(seq int64) int { // the line holding link seq
		for i, l := range lines {
			var f audit.Frame
			if json.Unmarshal(l, &f) == nil && f.Record != nil && f.ChainSeq == seq {
				return i
			}
		}
		t.Fatalf("no line holds seq %d", seq)
		return 0
	}
	edit := func(line []byte, fn func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		fn(m)
		b, _ := json.Marshal(m)
		return append(b, '\n')
	}
	cases := map[string]struct {
		tamper func(ls [][]byte) [][]byte
		kind   string
		seq    int64
	}{
		"deleted": {func(ls [][]byte) [][]byte {
			i := at(tamperSeq)
			return append(ls[:i:i], ls[i+1:]...)
		}, chain.Deleted, tamperSeq},
		"modified": {func(ls [][]byte) [][]byte {
			i := at(tamperSeq)
			ls[i] = edit(ls[i], func(m map[string]any) { m["reasons"] = []string{"edited"} })
			return ls
		}, chain.Modified, tamperSeq},
		"reordered": {func(ls [][]byte) [][]byte {
			i, j := at(tamperSeq), at(tamperSeq+1)
			ls[i], ls[j] = ls[j], ls[i]
			return ls
		}, chain.Reordered, tamperSeq},
		"inserted": {func(ls [][]byte) [][]byte {
			i := at(tamperSeq)
			forged := edit(ls[i], func(m map[string]any) { m["decision_id"] = "forged" })
			return append(ls[:i+1:i+1], append([][]byte{forged}, ls[i+1:]...)...)
		}, chain.Inserted, tamperSeq},
		// A forger who knows the algorithm links the inserted record in
		// with a hash of its own: the chain goes on from the genuine one.
		"inserted with a computed link": {func(ls [][]byte) [][]byte {
			i := at(tamperSeq)
			var prev audit.Frame
			if err := json.Unmarshal(ls[at(tamperSeq-1)], &prev); err != nil {
				t.Fatal(err)
			}
			var f audit.Frame
			if err := json.Unmarshal(ls[i], &f); err != nil {
				t.Fatal(err)
			}
			f.DecisionID, f.FinalRoute = "forged", "accept"
			p, _ := chain.ParseHash(prev.LinkHash)
			f.LinkHash = chain.Link(f.ChainID, f.ChainSeq, p, audit.ContentHash(f.Record)).String()
			b, _ := json.Marshal(f)
			return append(ls[:i:i], append([][]byte{append(b, '\n')}, ls[i:]...)...)
		}, chain.Inserted, tamperSeq},
		// The tail cut off, up to and past the checkpoints that signed it.
		"tail deleted": {func(ls [][]byte) [][]byte {
			kept := slices.Clone(ls[:at(chainRecords-2)])
			return append(kept, ls[len(ls)-2:]...) // the last checkpoint stays
		}, chain.Deleted, chainRecords - 2},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ls := make([][]byte, len(lines))
			for i, l := range lines {
				ls[i] = bytes.Clone(l)
			}
			p := filepath.Join(t.TempDir(), "tampered.jsonl")
			if err := os.WriteFile(p, bytes.Join(c.tamper(ls), nil), 0o600); err != nil {
				t.Fatal(err)
			}
			tr, err := file.ReadTrail(p)
			if err != nil {
				t.Fatal(err)
			}
			broken(t, tr, keys, c.kind, c.seq)
		})
	}
}

// A forger who rewrites every link after the one they changed keeps the
// chain consistent, but not with what was signed.
func TestChainRewrittenLinksBreakTheCheckpoint(t *testing.T) {
	t.Parallel()
	s := signer(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	recordChain(t, openFile(t, path, audit.Config{Durability: audit.Sync, Signer: s})) // one checkpoint, at Close
	orig, _ := os.ReadFile(path)
	var out []byte
	var prev chain.Hash
	for l := range bytes.Lines(orig) {
		var f audit.Frame
		if err := json.Unmarshal(l, &f); err != nil {
			t.Fatal(err)
		}
		if f.Checkpoint == nil {
			if f.ChainSeq == tamperSeq {
				f.Reasons = []string{"edited"}
			}
			prev = chain.Link(f.ChainID, f.ChainSeq, prev, audit.ContentHash(f.Record))
			f.LinkHash = prev.String()
		}
		b, _ := json.Marshal(f)
		out = append(append(out, b...), '\n')
	}
	p := filepath.Join(t.TempDir(), "rewritten.jsonl")
	if err := os.WriteFile(p, out, 0o600); err != nil {
		t.Fatal(err)
	}
	tr, err := file.ReadTrail(p)
	if err != nil {
		t.Fatal(err)
	}
	broken(t, tr, chain.NewKeys(s.Public()), chain.Modified, chainRecords)
}

// Each of the four things done to the PostgreSQL table is reported at the
// first record it touched.
func TestChainPostgresTampering(t *testing.T) {
	t.Parallel()
	s := signer(t)
	keys := chain.NewKeys(s.Public())
	cases := map[string]struct {
		sql  string
		kind string
	}{
		"deleted":  {"DELETE FROM audit_decisions WHERE chain_seq = $1", chain.Deleted},
		"modified": {"UPDATE audit_decisions SET reasons = array_append(reasons, 'edited') WHERE chain_seq = $1", chain.Modified},
		"reordered": {`UPDATE audit_decisions SET chain_seq = CASE chain_seq WHEN $1::bigint THEN $1::bigint + 1 ELSE $1::bigint END
			WHERE chain_seq IN ($1::bigint, $1::bigint + 1)`, chain.Reordered},
		"inserted": {`INSERT INTO audit_decisions (` + strings.Join(recordColumns, ", ") + `)
			SELECT ` + strings.Replace(strings.Join(recordColumns, ", "), "decision_id", "'forged'", 1) + `
			FROM audit_decisions WHERE chain_seq = $1`, chain.Inserted},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, u := migratedDB(t)
			r := openSigned(t, u, s)
			recordChain(t, r)
			db := pgtest.DB(t, u)
			tr, err := postgres.ReadTrail(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			holds(t, tr, keys)
			pgtest.ExecOn(t, u, c.sql, int64(tamperSeq))
			if tr, err = postgres.ReadTrail(context.Background(), db); err != nil {
				t.Fatal(err)
			}
			broken(t, tr, keys, c.kind, tamperSeq)
		})
	}
}

// recordColumns are audit_decisions' columns, as the tampering SQL names them.
var recordColumns = func() []string {
	b, _ := json.Marshal(&audit.Record{ChainID: "x", ChainSeq: 1, LinkHash: "x", Supersedes: 1})
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	cols := make([]string, 0, len(m))
	for k := range m {
		cols = append(cols, k)
	}
	return cols
}()

func openSigned(t *testing.T, u string, s *chain.Signer) audit.Recorder {
	t.Helper()
	cfg := testConfig(u, t)
	cfg.Config.Durability, cfg.Signer, cfg.CheckpointInterval = audit.Sync, s, time.Nanosecond
	return open(t, cfg)
}

// A receipt proves one decision against the signed checkpoint with the
// public key alone, and fails once anything in it is changed.
func TestReceipt(t *testing.T) {
	t.Parallel()
	s := signer(t)
	keys := chain.NewKeys(s.Public())
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	// One checkpoint, at Close: the receipt carries the links after it.
	recs := recordChain(t, openFile(t, path, audit.Config{Durability: audit.Sync, Signer: s}))
	id := recs[tamperSeq-1].DecisionID
	rc, err := file.Receipt(path, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rc.Following); got != chainRecords-tamperSeq {
		t.Fatalf("receipt carries %d following hashes, want %d", got, chainRecords-tamperSeq)
	}
	// Offline: what travels is the JSON.
	b, _ := json.Marshal(rc)
	var back audit.Receipt
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := audit.VerifyReceipt(&back, keys); err != nil {
		t.Fatalf("a true receipt fails: %v", err)
	}
	for _, other := range recs {
		if other.DecisionID != id && bytes.Contains(b, []byte(other.DecisionID)) {
			t.Fatalf("the receipt reveals another record (%s)", other.DecisionID)
		}
	}
	other := chain.NewKeys(signer(t).Public())
	tampered := map[string]struct {
		fn   func(r *audit.Receipt)
		keys chain.Keys
	}{
		"record changed":     {func(r *audit.Receipt) { r.Record.Reasons = []string{"edited"} }, keys},
		"following changed":  {func(r *audit.Receipt) { r.Following[0] = strings.Repeat("0", 64) }, keys},
		"checkpoint changed": {func(r *audit.Receipt) { r.Checkpoint.Hash = r.Following[0] }, keys},
		"another key":        {func(*audit.Receipt) {}, other},
	}
	for name, c := range tampered {
		var r audit.Receipt
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		c.fn(&r)
		if err := audit.VerifyReceipt(&r, c.keys); err == nil {
			t.Errorf("%s: the receipt still verifies", name)
		}
	}
}

// A corrected decision stays verifiable in PostgreSQL: its row shows the
// correction, a link of its own, and the record it superseded is kept so
// its link still checks; the receipt of the decision is the correction's.
func TestChainCorrectionPostgres(t *testing.T) {
	t.Parallel()
	s := signer(t)
	keys := chain.NewKeys(s.Public())
	_, u := migratedDB(t)
	db := pgtest.DB(t, u)
	sink := postgres.New(db, postgres.Config{})
	ctx := context.Background()
	id := "gated.test"
	var prev chain.Hash
	link := func(r *audit.Record, seq int64) {
		prev = chain.Link(id, seq, prev, audit.ContentHash(r))
		r.ChainID, r.ChainSeq, r.LinkHash = id, seq, prev.String()
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	var recs []*audit.Record
	for i := 1; i <= 5; i++ {
		r := audittest.Record(i, now)
		link(r, int64(i))
		recs = append(recs, r)
	}
	if err := sink.Write(ctx, audit.Batch{Records: recs}); err != nil {
		t.Fatal(err)
	}
	if recs[0].FinalRoute != "accept" {
		t.Fatalf("test record 1 has route %s, want accept", recs[0].FinalRoute)
	}
	fix := *recs[0]
	fix.FinalRoute, fix.Execute, fix.Supersedes = "refuse", false, recs[0].ChainSeq
	link(&fix, 6)
	cp := s.Checkpoint(chain.KindHead, id, 6, prev, now)
	if err := sink.Write(ctx, audit.Batch{Fixes: []audit.Fix{{Record: &fix, Superseded: recs[0]}}, Checkpoints: []chain.Checkpoint{cp}}); err != nil {
		t.Fatal(err)
	}
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions WHERE decision_id = $1 AND final_route = 'refuse' AND chain_seq = 6", fix.DecisionID); n != 1 {
		t.Fatal("the row does not show the correction")
	}
	tr, err := postgres.ReadTrail(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	holds(t, tr, keys)
	rc, err := postgres.Receipt(ctx, db, fix.DecisionID)
	if err != nil {
		t.Fatal(err)
	}
	if err := audit.VerifyReceipt(rc, keys); err != nil || rc.Record.Supersedes != 1 {
		t.Fatalf("the corrected decision's receipt: %v (supersedes %d)", err, rc.Record.Supersedes)
	}
	// The superseded record is checked too.
	pgtest.ExecOn(t, u, `UPDATE audit_superseded SET record = jsonb_set(record, '{final_route}', '"refuse"')`)
	if tr, err = postgres.ReadTrail(ctx, db); err != nil {
		t.Fatal(err)
	}
	broken(t, tr, keys, chain.Modified, 1)
	// A member the record does not name, or a name in another case, would
	// be read by no hash: refused, not decoded.
	for _, edit := range []string{`record || '{"approved_by": "alice"}'`, `(record - 'final_route') || '{"FINAL_ROUTE": "accept"}'`} {
		pgtest.ExecOn(t, u, `UPDATE audit_superseded SET record = `+edit)
		if _, err := postgres.ReadTrail(ctx, db); err == nil {
			t.Errorf("a superseded record edited with %s was read", edit)
		}
	}
}

// Retention drops a day's partition and signs where each chain now
// starts, dropping with it a link below that point stored in the next day
// (decided just after midnight, linked before the day's last): the chain
// still verifies, from there, and a row put back below it is inserted.
func TestChainPurgeSignsTheNewStart(t *testing.T) {
	t.Parallel()
	s := signer(t)
	keys := chain.NewKeys(s.Public())
	_, u := migratedDB(t)
	db := pgtest.DB(t, u)
	sink := postgres.New(db, postgres.Config{Retention: 24 * time.Hour, Signer: s})
	ctx := context.Background()
	id := "gated.test"
	var prev chain.Hash
	old, fresh := time.Date(2026, 11, 8, 12, 0, 0, 0, time.UTC), time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
	leftover := time.Date(2026, 11, 9, 0, 0, 0, 500000, time.UTC) // in a day retention keeps
	var recs []*audit.Record
	for i := 1; i <= 6; i++ {
		at := old
		switch {
		case i == 2:
			at = leftover
		case i > 3:
			at = fresh
		}
		r := audittest.Record(i, at)
		prev = chain.Link(id, int64(i), prev, audit.ContentHash(r))
		r.ChainID, r.ChainSeq, r.LinkHash = id, int64(i), prev.String()
		recs = append(recs, r)
	}
	cp := s.Checkpoint(chain.KindHead, id, 6, prev, fresh)
	if err := sink.Write(ctx, audit.Batch{Records: recs, Checkpoints: []chain.Checkpoint{cp}}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Maintain(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions"); n != 3 {
		t.Fatalf("%d records left after the purge, want 3", n)
	}
	tr, err := postgres.ReadTrail(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	holds(t, tr, keys)
	if v := tr.Verify(keys); v.Chains[0].From != 4 {
		t.Fatalf("the chain starts at %d after the purge, want 4", v.Chains[0].From)
	}
	// A row put back below the purge point is read by the API and replay:
	// verify names it.
	pgtest.ExecOn(t, u, `CREATE TABLE below AS SELECT * FROM audit_decisions WHERE chain_seq = 5;
		UPDATE below SET chain_seq = 2, decision_id = 'forged', final_route = 'accept';
		INSERT INTO audit_decisions SELECT * FROM below`)
	if tr, err = postgres.ReadTrail(ctx, db); err != nil {
		t.Fatal(err)
	}
	broken(t, tr, keys, chain.Inserted, 2)
	pgtest.ExecOn(t, u, "DELETE FROM audit_decisions WHERE decision_id = 'forged'")
	// A record deleted at the new start is still noticed.
	pgtest.ExecOn(t, u, "DELETE FROM audit_decisions WHERE chain_seq = 4")
	if tr, err = postgres.ReadTrail(ctx, db); err != nil {
		t.Fatal(err)
	}
	broken(t, tr, keys, chain.Deleted, 4)
}

// A record another transaction stored (an approval's spending) is linked
// by the writer afterwards: its row takes its place in the chain.
func TestChainLinksRecordsStoredElsewhere(t *testing.T) {
	t.Parallel()
	s := signer(t)
	_, u := migratedDB(t)
	db := pgtest.DB(t, u)
	r := openSigned(t, u, s)
	ctx := context.Background()
	now := time.Now()
	if _, err := r.Record(ctx, audittest.Record(1, now)); err != nil {
		t.Fatal(err)
	}
	spent := audittest.Record(2, now)
	if err := postgres.EnsurePartition(ctx, db.Pool(), spent.DecidedAt); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := postgres.InsertRecords(ctx, tx, []*audit.Record{spent}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r.Stored(spent)
	if _, err := r.Record(ctx, audittest.Record(3, now)); err != nil {
		t.Fatal(err)
	}
	closeRec(t, r)
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions WHERE decision_id = $1 AND chain_id <> ''", spent.DecisionID); n != 1 {
		t.Fatal("the record stored elsewhere took no link")
	}
	tr, err := postgres.ReadTrail(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	holds(t, tr, chain.NewKeys(s.Public()))
}
