-- Tasks, notes, links and their full-text search vectors.
-- Ids compare bytewise (COLLATE "C"), as on SQLite, so a prefix range and the
-- (updated_at, id) page order mean the same on both backends.

CREATE TABLE tasks (
    seq              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id               text COLLATE "C" NOT NULL UNIQUE,
    title            text NOT NULL,
    description      text NOT NULL DEFAULT '',
    tags             text[] NOT NULL DEFAULT '{}',
    priority         text NOT NULL DEFAULT 'normal',
    status           text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done', 'cancelled')),
    claim_holder     text,
    claim_expires_at timestamptz,
    version          bigint NOT NULL DEFAULT 1,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    -- Kept by every write: title weighted A, body D (ranked 4:1, as on SQLite).
    search           tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', title), 'A')
        || setweight(to_tsvector('english', description), 'D')
    ) STORED
);
CREATE INDEX tasks_by_update ON tasks (updated_at DESC, id DESC);
CREATE INDEX tasks_by_status ON tasks (status, updated_at DESC, id DESC);
CREATE INDEX tasks_by_claim ON tasks (claim_holder) WHERE claim_holder IS NOT NULL;
CREATE INDEX tasks_by_claim_expiry ON tasks (claim_expires_at) WHERE claim_expires_at IS NOT NULL;
CREATE INDEX tasks_by_tag ON tasks USING gin (tags);
CREATE INDEX tasks_search ON tasks USING gin (search);

CREATE TABLE notes (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         text COLLATE "C" NOT NULL UNIQUE,
    title      text NOT NULL,
    slug       text COLLATE "C" NOT NULL UNIQUE,
    content    text NOT NULL,
    tags       text[] NOT NULL DEFAULT '{}',
    source_url text UNIQUE,
    version    bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    search     tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', title), 'A')
        || setweight(to_tsvector('english', content), 'D')
    ) STORED
);
CREATE INDEX notes_by_update ON notes (updated_at DESC, id DESC);
CREATE INDEX notes_by_tag ON notes USING gin (tags);
CREATE INDEX notes_search ON notes USING gin (search);

-- Wiki-links as written, resolved or not; `links_to` edges are made from them.
CREATE TABLE note_refs (
    source_id text COLLATE "C" NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    slug      text COLLATE "C" NOT NULL,
    PRIMARY KEY (source_id, slug)
);
CREATE INDEX note_refs_by_slug ON note_refs (slug);

-- Edges join tasks and notes alike, so their ends carry no foreign key;
-- graph_doctor finds the dangling ones.
CREATE TABLE links (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         text COLLATE "C" NOT NULL UNIQUE,
    source     text COLLATE "C" NOT NULL,
    target     text COLLATE "C" NOT NULL,
    kind       text NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX links_by_source ON links (source, target, kind);
CREATE INDEX links_by_target ON links (target);
