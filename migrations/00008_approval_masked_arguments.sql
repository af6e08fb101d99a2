-- masked_arguments holds an approval's arguments masked as its preview is
-- (catalog sensitive fields, sensitive keys and every secret replaced), but
-- not cut, so an approver can read what the preview left out (values past
-- 200 characters, entries past the 50th). json, not jsonb, for the same
-- reason as preview. NULL when they were over 256 KiB masked, and for the
-- approvals of the previous version, which do not write it: the preview is
-- then all there is.

-- +goose Up
ALTER TABLE approvals ADD COLUMN masked_arguments json;

-- +goose Down
ALTER TABLE approvals DROP COLUMN masked_arguments;
