-- Idempotency keys: one row per (client, route, key). `status` is NULL while
-- the first request runs; then it, `headers` (a JSON array of [name, value])
-- and `body` hold the final answer, replayed until `expires_at`.
CREATE TABLE idempotency_keys (
    client      text COLLATE "C" NOT NULL,
    route       text COLLATE "C" NOT NULL,
    key         text COLLATE "C" NOT NULL,
    fingerprint text NOT NULL,
    owner       text NOT NULL,
    started_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    status      integer,
    headers     text,
    body        text,
    PRIMARY KEY (client, route, key)
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
