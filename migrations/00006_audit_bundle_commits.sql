-- bundle_commits names the commits the github sources of the catalog and
-- policy bundles in use resolved to ("catalog:" or "policy:" then
-- owner/name@ref=sha), so a decision made on a branch or tag can be traced
-- to the exact bytes (AIP-26: floating refs record their resolved SHA).
-- Empty for sources loaded from directories, and for the rows of replicas
-- and spools of the previous version, which do not write it.

-- +goose Up
ALTER TABLE audit_decisions ADD COLUMN bundle_commits text[] NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE audit_decisions DROP COLUMN bundle_commits;
