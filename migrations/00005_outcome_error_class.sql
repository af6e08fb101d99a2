-- error_class: the class (type) of the error a failed call raised, as the
-- SDKs' guard reports it — never its message, which may quote arguments
-- or secrets. '' when none was reported.

-- +goose Up
ALTER TABLE decision_outcomes ADD COLUMN error_class text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE decision_outcomes DROP COLUMN error_class;
