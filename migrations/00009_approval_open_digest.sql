-- A hook of a runtime that cannot ask retries by sending the identical call
-- again, with no evidence ref, so gated finds the call's open approval by
-- its digest (internal/approval/postgres Store.FindOpen): partial, so the
-- lookup on every such ask walks only the pending and approved rows.

-- +goose Up
CREATE INDEX approvals_open_digest_idx ON approvals (digest, requester_token_name) WHERE status IN ('pending', 'approved');

-- +goose Down
DROP INDEX approvals_open_digest_idx;
