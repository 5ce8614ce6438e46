-- Idempotency keys: one row per (client, route, key). `status` is NULL while
-- the first request runs; then it, `headers` (a JSON array of [name, value])
-- and `body` hold the final answer, replayed until `expires_at`.
CREATE TABLE idempotency_keys (
    client      TEXT NOT NULL,
    route       TEXT NOT NULL,
    key         TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    owner       TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    status      INTEGER,
    headers     TEXT,
    body        TEXT,
    PRIMARY KEY (client, route, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
