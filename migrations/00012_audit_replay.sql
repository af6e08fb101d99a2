-- principals are the principals the policy judged a decision for (screened
-- like every other text), so `gated replay` judges the call again for the
-- same callers and counts its changes by principal. sealed is the call's
-- event, workspace and client address encrypted to the operator's age
-- recipients (base64), only when `gated serve --audit-seal-to` opts in:
-- a column of the row, it is purged with the record. Both are empty for
-- the rows of replicas and spools of the previous version.

-- +goose Up
ALTER TABLE audit_decisions ADD COLUMN principals text[] NOT NULL DEFAULT '{}';
ALTER TABLE audit_decisions ADD COLUMN sealed text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE audit_decisions DROP COLUMN sealed;
ALTER TABLE audit_decisions DROP COLUMN principals;
