-- Approvals: one row per ask a person can answer (internal/approval), stored
-- by internal/approval/postgres. Replicas share approvals only through this
-- table, and learn of changes through NOTIFY on the channel gated_approvals.
--
-- The id is a UUIDv7 string the caller mints. Rows are never deleted when
-- they expire: ExpireDue marks them expired, and Purge deletes them only once
-- they are older than the audit retention, with the decisions that link to
-- them (audit_decisions.approval_id).
--
-- A NULL decided_at or used_at means it has not happened; a NULL preview
-- means the asking decision had none (a preview of absent arguments is the
-- JSON null, stored as such). The preview is json, not jsonb: json keeps the
-- text as written, so an approver reads keys in the order the preview put
-- them (sorted, with its "…" count last) and byte for byte what the webhook
-- sent; jsonb would reorder the keys and respace the text.

-- +goose Up
CREATE TABLE approvals (
    id                   text        PRIMARY KEY,
    status               text        NOT NULL
        CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'used')),
    digest               text        NOT NULL,
    created_at           timestamptz NOT NULL,
    expires_at           timestamptz NOT NULL,
    decided_at           timestamptz,
    used_at              timestamptz,
    requester_token_name text        NOT NULL,
    requester_principals text[]      NOT NULL DEFAULT '{}',
    agent_id             text        NOT NULL DEFAULT '',
    tool_name            text        NOT NULL,
    tool_category        text        NOT NULL DEFAULT '',
    risk_domain          text        NOT NULL DEFAULT '',
    action_id            text        NOT NULL DEFAULT '',
    route                text        NOT NULL CHECK (route IN ('ask', 'defer')),
    findings             jsonb       NOT NULL DEFAULT '[]',
    catalog_revision     text        NOT NULL DEFAULT '',
    policy_revision      text        NOT NULL DEFAULT '',
    approver_token_name  text        NOT NULL DEFAULT '',
    approver_principals  text[]      NOT NULL DEFAULT '{}',
    reason               text        NOT NULL DEFAULT '',
    required_approvers   text[]      NOT NULL DEFAULT '{}',
    decision_id          text        NOT NULL,
    consumed_by          text        NOT NULL DEFAULT '',
    preview              json
);

-- Listing newest first, all or by status, with keyset pagination on
-- (created_at, id).
CREATE INDEX approvals_created_idx ON approvals (created_at DESC, id DESC);
CREATE INDEX approvals_status_created_idx ON approvals (status, created_at DESC, id DESC);
-- The expiry sweep reads only the open approvals; partial, so it does not
-- walk the expired and used rows kept until retention.
CREATE INDEX approvals_open_expiry_idx ON approvals (expires_at) WHERE status IN ('pending', 'approved');
-- Purge by retention reads only the oldest rows.
CREATE INDEX approvals_expires_idx ON approvals (expires_at);

-- Every insert or update notifies gated_approvals with the approval's id. A
-- trigger rather than a NOTIFY in each store method: no way of changing a
-- row can forget it (the bulk expiry sweep, a method added later, an
-- operator's UPDATE), and NOTIFY inside the changing transaction is
-- delivered at commit, never for a change rolled back. Deletes do not
-- notify: Purge removes rows past retention, which nobody waits on, and
-- thousands of them would flood every listener.
-- +goose StatementBegin
CREATE FUNCTION gated_approvals_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('gated_approvals', NEW.id);
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER approvals_notify AFTER INSERT OR UPDATE ON approvals
    FOR EACH ROW EXECUTE FUNCTION gated_approvals_notify();

-- +goose Down
DROP TABLE approvals;
DROP FUNCTION gated_approvals_notify();
