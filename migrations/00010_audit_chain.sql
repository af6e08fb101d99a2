-- The audit trail as a hash chain anyone can verify (docs/audit.md,
-- "Verifying the trail").
--
-- Every record is a link of its writer's chain: chain_id names the chain
-- (one per gated process run), chain_seq is the link's place in it, and
-- link_hash covers the record's content and the link before it. A
-- correction is a link of its own: supersedes names the seq of the link it
-- replaces. Rows of earlier versions, and of replicas and spools of the
-- previous version, have chain_id '' and are reported as predating the
-- chain.
--
-- No index on (chain_id, chain_seq): every index costs write throughput,
-- and only `gated audit verify` (a scan of everything anyway) and
-- `gated audit receipt` (rare) read by it.

-- +goose Up
ALTER TABLE audit_decisions
    ADD COLUMN supersedes bigint NOT NULL DEFAULT 0,
    ADD COLUMN chain_id   text   NOT NULL DEFAULT '',
    ADD COLUMN chain_seq  bigint NOT NULL DEFAULT 0,
    ADD COLUMN link_hash  text   NOT NULL DEFAULT '';

-- A correction replaces its decision's row; the record it replaced is
-- kept here, as the recorder held it, so that record's link stays
-- checkable. Retention deletes these with their day's partition.
CREATE TABLE audit_superseded (
    chain_id    text        NOT NULL,
    chain_seq   bigint      NOT NULL,
    decided_at  timestamptz NOT NULL,
    decision_id text        NOT NULL,
    record      jsonb       NOT NULL,
    PRIMARY KEY (chain_id, chain_seq)
);

-- Checkpoints vouch for a chain up to chain_seq, whose link hash is
-- link_hash: kind 'head' as the writer stored the link, kind 'purge' where
-- retention deleted links up to chain_seq (the chain now starts after it).
-- Signed with Ed25519 when gated has a signing key (key_id names it).
CREATE TABLE audit_checkpoints (
    chain_id  text        NOT NULL,
    kind      text        NOT NULL,
    chain_seq bigint      NOT NULL,
    link_hash text        NOT NULL,
    signed_at timestamptz NOT NULL,
    key_id    text        NOT NULL DEFAULT '',
    signature text        NOT NULL DEFAULT '',
    PRIMARY KEY (chain_id, kind, chain_seq)
);

-- +goose Down
DROP TABLE audit_checkpoints;
DROP TABLE audit_superseded;
ALTER TABLE audit_decisions
    DROP COLUMN link_hash,
    DROP COLUMN chain_seq,
    DROP COLUMN chain_id,
    DROP COLUMN supersedes;
