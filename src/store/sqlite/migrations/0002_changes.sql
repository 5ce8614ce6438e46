-- The change feed: one row per acknowledged write, appended in its transaction.
-- AUTOINCREMENT keeps numbers from being reused after pruning; sqlite_sequence
-- holds the newest number even when every row has been pruned.
CREATE TABLE changes (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TEXT NOT NULL,
    kind        TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    entity_id   TEXT NOT NULL,
    title       TEXT NOT NULL,
    version     INTEGER,
    agent       TEXT,
    changes     TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX changes_by_entity ON changes (entity_id, seq);
