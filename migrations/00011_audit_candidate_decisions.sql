-- audit_candidate_decisions: what the candidate policy (gated serve
-- --candidate) decided for a live decision, one row per decision it
-- decided. The candidate decides after the live answer is written, so its
-- row is written after, and apart from, the decision's own record (which
-- sync audit mode commits before the answer): best effort, joined to
-- audit_decisions by decision_id when read. A decision the candidate
-- skipped (its queue was full) has no row.
--
-- tool_name is masked as approvals mask it; principals are the token's.
-- direction compares the candidate's route with the live one on gated's
-- strictness order (accept < ask < defer < refuse): same, wider (the
-- candidate is less strict) or narrower (more strict).
--
-- No foreign key to audit_decisions, for the reason decision_outcomes has
-- none (00004): retention drops a day's partition; decided_at is the
-- decision's, kept here so that retention deletes a day's rows with it.

-- +goose Up
CREATE TABLE audit_candidate_decisions (
    decision_id      text        PRIMARY KEY,
    decided_at       timestamptz NOT NULL,
    tool_name        text        NOT NULL DEFAULT '',
    token_name       text        NOT NULL DEFAULT '',
    principals       text[]      NOT NULL DEFAULT '{}',
    live_route       text        NOT NULL CHECK (live_route IN ('accept', 'ask', 'defer', 'refuse')),
    route            text        NOT NULL CHECK (route IN ('accept', 'ask', 'defer', 'refuse')),
    hard_blockers    text[]      NOT NULL DEFAULT '{}',
    catalog_revision text        NOT NULL DEFAULT '',
    policy_revision  text        NOT NULL DEFAULT '',
    direction        text        NOT NULL CHECK (direction IN ('same', 'wider', 'narrower')),
    recorded_at      timestamptz NOT NULL
);

-- Retention deletes by the decision's day; the console pages through the
-- disagreements newest first.
CREATE INDEX audit_candidate_decisions_decided_idx ON audit_candidate_decisions (decided_at);
CREATE INDEX audit_candidate_decisions_disagree_idx ON audit_candidate_decisions (decided_at DESC, decision_id DESC)
    WHERE direction <> 'same';

-- +goose Down
DROP TABLE audit_candidate_decisions;
