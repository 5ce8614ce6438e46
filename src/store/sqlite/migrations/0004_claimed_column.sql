-- The board's claimed column in its own order: tasks holding a claim (live or
-- lapsed; every transition and release clears it), newest update first, with
-- status and expiry along so its page and count never touch the table.
CREATE INDEX tasks_claimed_by_update ON tasks (updated_at DESC, id DESC, status, claim_expires_at)
    WHERE claim_expires_at IS NOT NULL;
