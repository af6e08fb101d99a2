package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatedhq/gated/internal/actionresult"
	"github.com/gatedhq/gated/internal/audit"
)

// AddOutcome checks the decision, then inserts. A decision's row does not
// change once stored, so the check cannot go stale before the insert; the
// primary key settles two outcomes sent at once.
func (s *pgStore) AddOutcome(ctx context.Context, o *audit.Outcome) error {
	var decidedAt time.Time
	var execute bool
	var token string
	err := s.pool.QueryRow(ctx, "SELECT decided_at, execute, token_name FROM audit_decisions WHERE decision_id = $1 LIMIT 1",
		o.DecisionID).Scan(&decidedAt, &execute, &token)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return audit.ErrNotFound
	case err != nil:
		return fmt.Errorf("record outcome: %w", err)
	case token != o.TokenName:
		return audit.ErrNotYours
	case !execute:
		return audit.ErrNotExecuted
	}
	// A block not reported is NULL, never false.
	var verificationOK, repairAttempted, repairOK, rollbackAttempted, rollbackOK *bool
	if o.Verification != nil {
		verificationOK = &o.Verification.OK
	}
	if o.Repair != nil {
		repairAttempted, repairOK = &o.Repair.Attempted, &o.Repair.OK
	}
	if o.Rollback != nil {
		rollbackAttempted, rollbackOK = &o.Rollback.Attempted, &o.Rollback.OK
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO decision_outcomes (decision_id, decided_at, status, verification_ok,
		repair_attempted, repair_ok, rollback_attempted, rollback_ok, output_fingerprint, output_conforms, error_class, token_name, recorded_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (decision_id) DO NOTHING`,
		o.DecisionID, decidedAt, string(o.Status), verificationOK, repairAttempted, repairOK, rollbackAttempted, rollbackOK,
		o.OutputFingerprint, o.OutputConforms, o.ErrorClass, o.TokenName, o.RecordedAt)
	if err != nil {
		return fmt.Errorf("record outcome: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return audit.ErrOutcomeExists
	}
	return nil
}

func (s *pgStore) Outcome(ctx context.Context, id string) (*audit.Outcome, error) {
	o := &audit.Outcome{DecisionID: id}
	var verificationOK, repairAttempted, repairOK, rollbackAttempted, rollbackOK *bool
	err := s.pool.QueryRow(ctx, `SELECT status, verification_ok, repair_attempted, repair_ok, rollback_attempted, rollback_ok,
		output_fingerprint, output_conforms, error_class, token_name, recorded_at FROM decision_outcomes WHERE decision_id = $1`, id).
		Scan(&o.Status, &verificationOK, &repairAttempted, &repairOK, &rollbackAttempted, &rollbackOK,
			&o.OutputFingerprint, &o.OutputConforms, &o.ErrorClass, &o.TokenName, &o.RecordedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get outcome: %w", err)
	}
	if verificationOK != nil {
		o.Verification = &audit.Verification{OK: *verificationOK}
	}
	// The table's checks keep each pair NULL together or set together.
	if repairAttempted != nil && repairOK != nil {
		o.Repair = &audit.Attempt{Attempted: *repairAttempted, OK: *repairOK}
	}
	if rollbackAttempted != nil && rollbackOK != nil {
		o.Rollback = &audit.Attempt{Attempted: *rollbackAttempted, OK: *rollbackOK}
	}
	return o, nil
}

// outcomeStatuses returns the outcome status of each of recs that has one:
// one lookup by primary key for the page, rather than a join whose column
// names the two tables share.
func (s *pgStore) outcomeStatuses(ctx context.Context, recs []*audit.Record) (map[string]actionresult.Status, error) {
	out := map[string]actionresult.Status{}
	if len(recs) == 0 {
		return out, nil
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.DecisionID
	}
	rows, err := s.pool.Query(ctx, "SELECT decision_id, status FROM decision_outcomes WHERE decision_id = ANY($1)", ids)
	if err != nil {
		return nil, fmt.Errorf("list outcomes: %w", err)
	}
	var id string
	var status actionresult.Status
	if _, err := pgx.ForEachRow(rows, []any{&id, &status}, func() error {
		out[id] = status
		return nil
	}); err != nil {
		return nil, fmt.Errorf("list outcomes: %w", err)
	}
	return out, nil
}
