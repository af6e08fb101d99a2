-- Kill switches: one row per kill an operator set (internal/kill), stored by
-- internal/kill/postgres. PostgreSQL is the kill list's source of truth, so a
-- kill survives restarts; replicas learn of changes through NOTIFY on the
-- channel gated_kill_switches and reload the whole active list.
--
-- Rows are never deleted: a lifted kill keeps lifted_at and lifted_by, so
-- who stopped what, and who let it run again, stays on record. A NULL
-- expires_at never expires; a NULL lifted_at has not been lifted.

-- +goose Up
CREATE TABLE kill_switches (
    id         text        PRIMARY KEY,
    scope      text        NOT NULL CHECK (scope IN ('all', 'agent', 'tool', 'action', 'principal')),
    value      text        NOT NULL DEFAULT '',
    reason     text        NOT NULL,
    created_at timestamptz NOT NULL,
    created_by text        NOT NULL,
    expires_at timestamptz,
    lifted_at  timestamptz,
    lifted_by  text        NOT NULL DEFAULT ''
);

-- Every replica reloads the active kills (not lifted) on each change.
CREATE INDEX kill_switches_active_idx ON kill_switches (created_at) WHERE lifted_at IS NULL;

-- Any insert or update notifies every replica; a trigger, so that no way of
-- changing a row (an operator's UPDATE included) can forget it.
-- +goose StatementBegin
CREATE FUNCTION gated_kill_switches_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('gated_kill_switches', NEW.id);
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER kill_switches_notify AFTER INSERT OR UPDATE ON kill_switches
    FOR EACH ROW EXECUTE FUNCTION gated_kill_switches_notify();

-- +goose Down
DROP TABLE kill_switches;
DROP FUNCTION gated_kill_switches_notify();
