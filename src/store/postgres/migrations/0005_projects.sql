-- The registry of projects, with `default`, which holds everything written
-- before projects existed: the data stays where it is. Only the first
-- schema's registry is read; each other project's data is a schema of its
-- own (`<schema>_p<id>`), and its copy of this table means nothing.
CREATE TABLE projects (
    id         bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    key        text PRIMARY KEY,
    name       text NOT NULL,
    archived   boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO projects (key, name) VALUES ('default', 'Default');
