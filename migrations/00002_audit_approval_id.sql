-- approval_id links a decision to an approval: on the decision that asked,
-- the approval it created; on the decision that used one, the approval it
-- spent. So the trail reads asking decision -> approval -> consuming
-- decision. Empty for every other decision, and for the rows of replicas
-- and spools of the previous version, which do not write it.

-- +goose Up
ALTER TABLE audit_decisions ADD COLUMN approval_id text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE audit_decisions DROP COLUMN approval_id;
