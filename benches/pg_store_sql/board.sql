SELECT count(*) FROM (SELECT 1 FROM tasks WHERE status = 'open' AND (claim_expires_at IS NULL OR claim_expires_at <= :now::timestamptz) LIMIT 1001) AS capped;
SELECT id, title, description, tags, priority, status, claim_holder, claim_expires_at, version, created_at, updated_at FROM tasks WHERE status = 'open' AND (claim_expires_at IS NULL OR claim_expires_at <= :now::timestamptz) ORDER BY updated_at DESC, id DESC LIMIT 51;
SELECT count(*) FROM (SELECT 1 FROM tasks WHERE status = 'open' AND claim_expires_at > :now::timestamptz LIMIT 1001) AS capped;
SELECT id, title, description, tags, priority, status, claim_holder, claim_expires_at, version, created_at, updated_at FROM tasks WHERE status = 'open' AND claim_expires_at > :now::timestamptz ORDER BY updated_at DESC, id DESC LIMIT 51;
SELECT count(*) FROM (SELECT 1 FROM tasks WHERE status = 'done' LIMIT 1001) AS capped;
SELECT id, title, description, tags, priority, status, claim_holder, claim_expires_at, version, created_at, updated_at FROM tasks WHERE status = 'done' ORDER BY updated_at DESC, id DESC LIMIT 51;
SELECT count(*) FROM (SELECT 1 FROM tasks WHERE status = 'cancelled' LIMIT 1001) AS capped;
SELECT id, title, description, tags, priority, status, claim_holder, claim_expires_at, version, created_at, updated_at FROM tasks WHERE status = 'cancelled' ORDER BY updated_at DESC, id DESC LIMIT 51;
