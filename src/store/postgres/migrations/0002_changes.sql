-- The change feed: one row per acknowledged write, appended as the last
-- statement of its transaction. The number comes from a one-row counter: its
-- row lock, held until commit, makes numbers follow commit order and leaves no
-- gaps, so a reader never meets a later commit with a smaller number.
CREATE TABLE changes (
    seq         bigint PRIMARY KEY,
    at          timestamptz NOT NULL,
    kind        text NOT NULL,
    entity_type text NOT NULL,
    entity_id   text COLLATE "C" NOT NULL,
    title       text NOT NULL,
    version     bigint,
    agent       text,
    changes     jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX changes_by_entity ON changes (entity_id, seq);

CREATE TABLE change_counter (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    last_seq  bigint NOT NULL
);
INSERT INTO change_counter (singleton, last_seq) VALUES (true, 0);
