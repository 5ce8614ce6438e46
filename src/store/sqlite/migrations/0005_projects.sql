-- The registry of projects, with `default`, which holds everything written
-- before projects existed: the data stays where it is. Only the first
-- store's registry is read; each other project's data is a store of its own
-- (`<file>.projects/<key>.db`), and its copy of this table means nothing.
CREATE TABLE projects (
    key        TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    archived   INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO projects (key, name, created_at, updated_at)
VALUES ('default', 'Default', strftime('%Y-%m-%dT%H:%M:%f000Z', 'now'),
        strftime('%Y-%m-%dT%H:%M:%f000Z', 'now'));
