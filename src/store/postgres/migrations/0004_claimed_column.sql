-- The board's claimed column in its own order: tasks holding a claim (live or
-- lapsed; every transition and release clears it), newest update first, with
-- status and expiry along so its count is an index-only scan.
CREATE INDEX tasks_claimed_by_update ON tasks (updated_at DESC, id DESC)
    INCLUDE (status, claim_expires_at) WHERE claim_expires_at IS NOT NULL;
-- The open column likewise: with only (status, updated_at, id) and
-- (updated_at, id) to choose from, the planner walked the second and filtered
-- past every newer done or cancelled task (30,000 rows at 100,000 tasks).
CREATE INDEX tasks_open_by_update ON tasks (updated_at DESC, id DESC)
    INCLUDE (claim_expires_at) WHERE status = 'open';
