package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/chain"
	"github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/strictjson"
)

// writeRest stores what a batch holds besides new records: corrections,
// the links of rows another transaction stored, and checkpoints.
func writeRest(ctx context.Context, tx pgx.Tx, b audit.Batch) error {
	if err := applyFixes(ctx, tx, b.Fixes); err != nil {
		return err
	}
	if len(b.Linked)+len(b.Checkpoints) == 0 {
		return nil
	}
	q := &pgx.Batch{}
	for _, r := range b.Linked {
		// Only a row without a link takes one: a replay changes nothing.
		q.Queue(`UPDATE audit_decisions SET chain_id = $3, chain_seq = $4, link_hash = $5
			WHERE decided_at = $1 AND decision_id = $2 AND chain_id = ''`,
			r.DecidedAt, r.DecisionID, r.ChainID, r.ChainSeq, r.LinkHash)
	}
	for _, c := range b.Checkpoints {
		queueCheckpoint(q, c)
	}
	if err := tx.SendBatch(ctx, q).Close(); err != nil {
		return fmt.Errorf("store audit chain links and checkpoints: %w", err)
	}
	return nil
}

func queueCheckpoint(q *pgx.Batch, c chain.Checkpoint) {
	q.Queue(`INSERT INTO audit_checkpoints (chain_id, kind, chain_seq, link_hash, signed_at, key_id, signature)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
		c.Chain, c.Kind, c.Seq, c.Hash, c.At, c.KeyID, c.Signature)
}

// purge drops partition name (of the days before end) and, in the same
// transaction, signs for each chain it held links of the point where that
// chain now starts: the last link it dropped. Superseded records of the
// dropped days go with them, and so do the chain's links at or below that
// point stored in the next day — records decided just before end but
// linked after ones decided just before midnight (leftoverSlack) — so a
// chain holds nothing at or below its purge point and verify can report
// any such row as inserted.
func (s *Sink) purge(ctx context.Context, name string, end, before time.Time) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT DISTINCT ON (chain_id) chain_id, chain_seq, link_hash FROM `+
			pgx.Identifier{name}.Sanitize()+` WHERE chain_id <> '' ORDER BY chain_id, chain_seq DESC`)
		if err != nil {
			return fmt.Errorf("find the chains' last links in %s: %w", name, err)
		}
		var id, link string
		var seq int64
		q := &pgx.Batch{}
		now := time.Now()
		_, err = pgx.ForEachRow(rows, []any{&id, &seq, &link}, func() error {
			h, err := chain.ParseHash(link)
			if err != nil {
				return fmt.Errorf("chain %s, seq %d: %w", id, seq, err)
			}
			queueCheckpoint(q, s.signer.Checkpoint(chain.KindPurge, id, seq, h, now))
			q.Queue(`DELETE FROM audit_decisions WHERE decided_at >= $1 AND decided_at < $2 AND chain_id = $3 AND chain_seq <= $4`,
				end, end.Add(leftoverSlack), id, seq)
			q.Queue(`DELETE FROM audit_superseded WHERE chain_id = $1 AND chain_seq <= $2`, id, seq)
			return nil
		})
		if err != nil {
			return fmt.Errorf("find the chains' last links in %s: %w", name, err)
		}
		q.Queue("DROP TABLE IF EXISTS " + pgx.Identifier{name}.Sanitize())
		q.Queue("DELETE FROM audit_superseded WHERE decided_at < $1", before)
		return tx.SendBatch(ctx, q).Close()
	})
}

// leftoverSlack bounds how long after a dropped day a record linked
// before that day's last link can have been decided: a batch is linked in
// the order it was taken, far within it.
const leftoverSlack = time.Hour

// ReadTrail reads every chain of the database back for
// audit.Trail.Verify, in chain and seq order, the records corrections
// superseded in their places.
func ReadTrail(ctx context.Context, db *postgres.DB) (*audit.Trail, error) {
	pool := db.Pool()
	superseded, err := readSuperseded(ctx, pool, "")
	if err != nil {
		return nil, err
	}
	t := audit.NewTrail()
	// Superseded records of a chain go in before the first row past them.
	flush := func(id string, upto int64) {
		rest := superseded[id]
		for len(rest) > 0 && (upto < 0 || rest[0].ChainSeq < upto) {
			t.Add(rest[0])
			rest = rest[1:]
		}
		superseded[id] = rest
	}
	rows, err := pool.Query(ctx, selectRecords+" ORDER BY chain_id, chain_seq, decided_at, decision_id")
	if err != nil {
		return nil, fmt.Errorf("read the audit chains: %w", err)
	}
	rec, last := new(audit.Record), ""
	_, err = pgx.ForEachRow(rows, scanTargets(rec), func() error {
		if rec.ChainID != last {
			flush(last, -1)
			last = rec.ChainID
		}
		flush(rec.ChainID, rec.ChainSeq)
		r := *rec
		t.Add(&r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the audit chains: %w", err)
	}
	flush(last, -1)
	for id := range superseded {
		flush(id, -1) // chains whose rows are all gone
	}
	cps, err := readCheckpoints(ctx, pool, "")
	if err != nil {
		return nil, err
	}
	for _, c := range cps {
		t.AddCheckpoint(c)
	}
	return t, nil
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// readSuperseded returns the superseded records by chain, in seq order:
// of every chain, or of chain id only.
func readSuperseded(ctx context.Context, db querier, id string) (map[string][]*audit.Record, error) {
	rows, err := db.Query(ctx, `SELECT record FROM audit_superseded WHERE $1 = '' OR chain_id = $1 ORDER BY chain_id, chain_seq`, id)
	if err != nil {
		return nil, fmt.Errorf("read superseded audit records: %w", err)
	}
	out := map[string][]*audit.Record{}
	var doc []byte
	_, err = pgx.ForEachRow(rows, []any{&doc}, func() error {
		r := new(audit.Record)
		if err := strictjson.Unmarshal(doc, r); err != nil {
			return err
		}
		out[r.ChainID] = append(out[r.ChainID], r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read superseded audit records: %w", err)
	}
	return out, nil
}

// readCheckpoints returns the checkpoints of every chain, or of chain id.
func readCheckpoints(ctx context.Context, db querier, id string) ([]chain.Checkpoint, error) {
	rows, err := db.Query(ctx, `SELECT chain_id, kind, chain_seq, link_hash, signed_at, key_id, signature
		FROM audit_checkpoints WHERE $1 = '' OR chain_id = $1 ORDER BY chain_id, chain_seq`, id)
	if err != nil {
		return nil, fmt.Errorf("read audit checkpoints: %w", err)
	}
	cps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (chain.Checkpoint, error) {
		var c chain.Checkpoint
		err := row.Scan(&c.Chain, &c.Kind, &c.Seq, &c.Hash, &c.At, &c.KeyID, &c.Signature)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("read audit checkpoints: %w", err)
	}
	return cps, nil
}

// Receipt builds the receipt of decision id from the database: its
// stored record (a correction, if it was corrected) linked to the first
// signed checkpoint after it.
func Receipt(ctx context.Context, db *postgres.DB, id string) (*audit.Receipt, error) {
	pool := db.Pool()
	rec := new(audit.Record)
	err := pool.QueryRow(ctx, selectRecords+" WHERE decision_id = $1 ORDER BY decided_at DESC LIMIT 1", id).Scan(scanTargets(rec)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("decision %s: %w", id, audit.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read decision %s: %w", id, err)
	}
	if rec.ChainID == "" {
		return nil, fmt.Errorf("decision %s carries no chain link (stored before the chain, or by an approval whose link was lost)", id)
	}
	cps, err := readCheckpoints(ctx, pool, rec.ChainID)
	if err != nil {
		return nil, err
	}
	upto := rec.ChainSeq
	for _, c := range cps {
		if c.Kind == chain.KindHead && c.Signed() && c.Seq >= rec.ChainSeq {
			upto = c.Seq
			break // in seq order: the first is the nearest
		}
	}
	rows, err := pool.Query(ctx, selectRecords+" WHERE chain_id = $1 AND chain_seq BETWEEN $2 AND $3", rec.ChainID, rec.ChainSeq-1, upto)
	if err != nil {
		return nil, fmt.Errorf("read the links after decision %s: %w", id, err)
	}
	around, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*audit.Record, error) {
		r := new(audit.Record)
		return r, row.Scan(scanTargets(r)...)
	})
	if err != nil {
		return nil, fmt.Errorf("read the links after decision %s: %w", id, err)
	}
	superseded, err := readSuperseded(ctx, pool, rec.ChainID)
	if err != nil {
		return nil, err
	}
	return audit.NewReceipt(rec, append(around, superseded[rec.ChainID]...), cps)
}
