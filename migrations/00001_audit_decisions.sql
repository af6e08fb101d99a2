-- The audit store: one row per decision, partitioned by day on decided_at so
-- retention is a cheap DROP of whole partitions.
--
-- The primary key must contain the partition key, so it is
-- (decided_at, decision_id). A record's decided_at is fixed when it is built
-- and travels with it through the queue and the spool, so a replayed record
-- carries the same key and INSERT ... ON CONFLICT DO NOTHING stores it once.
--
-- There is no DEFAULT partition: gated creates the partition of a day before
-- it inserts rows of that day (and a few days ahead), under an advisory lock.
-- A DEFAULT partition would block creating the day's partition later once it
-- held rows of that day.

-- +goose Up
CREATE TABLE audit_decisions (
    decided_at         timestamptz      NOT NULL,
    decision_id        text             NOT NULL,
    request_id         text             NOT NULL DEFAULT '',
    agent_id           text             NOT NULL DEFAULT '',
    tool_name          text             NOT NULL DEFAULT '',
    action_id          text             NOT NULL DEFAULT '',
    action_version     text             NOT NULL DEFAULT '',
    declared_category  text             NOT NULL DEFAULT '',
    effective_category text             NOT NULL DEFAULT '',
    declared_auth      text             NOT NULL DEFAULT '',
    effective_auth     text             NOT NULL DEFAULT '',
    risk_domain        text             NOT NULL DEFAULT '',
    runtime_route      text             NOT NULL DEFAULT '',
    final_route        text             NOT NULL,
    gate_decision      text             NOT NULL DEFAULT '',
    execute            boolean          NOT NULL,
    shadow             boolean          NOT NULL DEFAULT false,
    hard_blockers      text[]           NOT NULL DEFAULT '{}',
    reasons            text[]           NOT NULL DEFAULT '{}',
    finding_codes      text[]           NOT NULL DEFAULT '{}',
    evidence           jsonb            NOT NULL DEFAULT '[]',
    argument_keys      text[]           NOT NULL DEFAULT '{}',
    arguments_hmac     text             NOT NULL DEFAULT '',
    catalog_revision   text             NOT NULL DEFAULT '',
    policy_revision    text             NOT NULL DEFAULT '',
    token_name         text             NOT NULL DEFAULT '',
    latency_ms         double precision NOT NULL DEFAULT 0,
    gated_version      text             NOT NULL DEFAULT '',
    PRIMARY KEY (decided_at, decision_id)
) PARTITION BY RANGE (decided_at);

-- Lookup by id (GET /v1/decisions/{id}); listing newest first, optionally by
-- route or tool, with keyset pagination on (decided_at, decision_id). The
-- primary key, scanned backwards, serves the unfiltered listing, so it has
-- no index of its own: every index costs write throughput.
CREATE INDEX audit_decisions_id_idx ON audit_decisions (decision_id);
CREATE INDEX audit_decisions_route_idx ON audit_decisions (final_route, decided_at DESC, decision_id DESC);
CREATE INDEX audit_decisions_tool_idx ON audit_decisions (tool_name, decided_at DESC, decision_id DESC);

-- +goose Down
DROP TABLE audit_decisions;
