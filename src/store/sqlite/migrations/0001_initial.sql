-- Tasks, notes, links and the full-text index.
-- Times are fixed-width RFC 3339 UTC strings, so text order is time order.
-- `seq` gives each row a stable integer key for the search index's rowid.

CREATE TABLE tasks (
    seq              INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    title            TEXT NOT NULL,
    description      TEXT NOT NULL DEFAULT '',
    tags             TEXT NOT NULL DEFAULT '[]',
    priority         TEXT NOT NULL DEFAULT 'normal',
    status           TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done', 'cancelled')),
    claim_holder     TEXT,
    claim_expires_at TEXT,
    version          INTEGER NOT NULL DEFAULT 1,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX tasks_by_update ON tasks (updated_at DESC, id DESC);
-- claim_expires_at rides along so open/claimed counts never touch the table.
CREATE INDEX tasks_by_status ON tasks (status, updated_at DESC, id DESC, claim_expires_at);
CREATE INDEX tasks_by_claim ON tasks (claim_holder) WHERE claim_holder IS NOT NULL;
CREATE INDEX tasks_by_claim_expiry ON tasks (claim_expires_at) WHERE claim_expires_at IS NOT NULL;

CREATE TABLE notes (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    title      TEXT NOT NULL,
    slug       TEXT NOT NULL UNIQUE,
    content    TEXT NOT NULL,
    tags       TEXT NOT NULL DEFAULT '[]',
    source_url TEXT UNIQUE,
    version    INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX notes_by_update ON notes (updated_at DESC, id DESC);

-- Wiki-links as written, resolved or not; `links_to` edges are made from them.
CREATE TABLE note_refs (
    source_id TEXT NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    slug      TEXT NOT NULL,
    PRIMARY KEY (source_id, slug)
) WITHOUT ROWID;
CREATE INDEX note_refs_by_slug ON note_refs (slug);

-- Edges join tasks and notes alike, so their ends carry no foreign key;
-- graph_doctor finds the dangling ones.
CREATE TABLE links (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    source     TEXT NOT NULL,
    target     TEXT NOT NULL,
    kind       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX links_by_source ON links (source, target, kind);
CREATE INDEX links_by_target ON links (target);

-- rowid = tasks.seq * 2 for tasks, notes.seq * 2 + 1 for notes.
CREATE VIRTUAL TABLE search_index USING fts5 (
    title,
    body,
    kind UNINDEXED,
    entity_id UNINDEXED,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
