-- decision_outcomes: what happened after a call gated let run, as its
-- runtime reports it (POST /v1/decisions/{id}/outcome): the Action API
-- result envelope's status and its verification, repair and rollback
-- flags, and a keyed fingerprint of the output, never the output. One row
-- per decision; a NULL flag was not reported, and a NULL output_conforms
-- means no outputSchema was checked.
--
-- There is no foreign key to audit_decisions. A key on a partitioned table
-- must include the partition key, so it would have to reference
-- (decided_at, decision_id) — and PostgreSQL then refuses to DROP a day's
-- partition while outcomes reference it, which is how retention works.
-- The store checks instead that the decision is stored, let the tool run
-- and was asked for by the same token; decided_at is the decision's, kept
-- here so that retention deletes a day's outcomes with its partition.

-- +goose Up
CREATE TABLE decision_outcomes (
    decision_id        text        PRIMARY KEY,
    decided_at         timestamptz NOT NULL,
    status             text        NOT NULL
        CHECK (status IN ('succeeded', 'reverted', 'queued', 'rejected', 'failed')),
    verification_ok    boolean,
    repair_attempted   boolean,
    repair_ok          boolean,
    rollback_attempted boolean,
    rollback_ok        boolean,
    output_fingerprint text        NOT NULL DEFAULT '',
    output_conforms    boolean,
    token_name         text        NOT NULL DEFAULT '',
    recorded_at        timestamptz NOT NULL,
    -- repair and rollback are reported whole ({attempted, ok}) or not at all.
    CHECK ((repair_attempted IS NULL) = (repair_ok IS NULL)),
    CHECK ((rollback_attempted IS NULL) = (rollback_ok IS NULL))
);

-- Retention deletes by the decision's day.
CREATE INDEX decision_outcomes_decided_idx ON decision_outcomes (decided_at);

-- +goose Down
DROP TABLE decision_outcomes;
