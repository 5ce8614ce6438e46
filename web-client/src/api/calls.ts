// The calls the views make, one per route, each returning an Outcome.
import { type Api, api, call } from "./client";
import type { NewTask, NoteInput, NoteReplace, QueryOf, TaskPatch } from "./types";

const P = (id: string) => ({ params: { path: { id } } });

/** `If-Match` with the tag that was read, when there is one. */
const ifMatch = (tag: string | undefined) => (tag ? { "If-Match": tag } : undefined);

/** Edits a task; with `tag` (its `ETag`), only if it is still that version (else 412 `precondition_failed`). */
export const updateTask = (client: Api, id: string, body: TaskPatch, tag?: string) =>
  call(client.PATCH("/api/v1/tasks/{id}", { params: { path: { id }, header: ifMatch(tag) }, body }));

/** Replaces a note; with `tag` (its `ETag`), only if it is still that version. */
export const replaceNote = (client: Api, id: string, body: NoteReplace, tag?: string) =>
  call(client.PUT("/api/v1/notes/{id}", { params: { path: { id }, header: ifMatch(tag) }, body }));

export const tasks = {
  /** The board; `columns` with a `<status>_cursor` pages one column on. */
  board: (query: QueryOf<"/api/v1/board", "get"> = {}) =>
    call(api.GET("/api/v1/board", { params: { query } })),
  get: (id: string) => call(api.GET("/api/v1/tasks/{id}", P(id))),
  create: (body: NewTask) => call(api.POST("/api/v1/tasks", { body })),
  update: (id: string, body: TaskPatch, tag?: string) => updateTask(api, id, body, tag),
  claim: (id: string, agent: string, ttl_minutes?: number) =>
    call(api.POST("/api/v1/tasks/{id}/claim", { ...P(id), body: { agent, ttl_minutes } })),
  renew: (id: string, agent: string) => call(api.POST("/api/v1/tasks/{id}/renew", { ...P(id), body: { agent } })),
  release: (id: string, agent: string) => call(api.POST("/api/v1/tasks/{id}/release", { ...P(id), body: { agent } })),
  complete: (id: string, agent?: string) =>
    call(api.POST("/api/v1/tasks/{id}/complete", { ...P(id), body: agent ? { agent } : {} })),
  cancel: (id: string, agent?: string) =>
    call(api.POST("/api/v1/tasks/{id}/cancel", { ...P(id), body: agent ? { agent } : {} })),
  reopen: (id: string, agent?: string) =>
    call(api.POST("/api/v1/tasks/{id}/reopen", { ...P(id), body: agent ? { agent } : {} })),
};

export const notes = {
  list: (query: QueryOf<"/api/v1/notes", "get">) =>
    call(api.GET("/api/v1/notes", { params: { query } })),
  get: (id: string) => call(api.GET("/api/v1/notes/{id}", P(id))),
  create: (body: NoteInput) => call(api.POST("/api/v1/notes", { body })),
  update: (id: string, body: NoteReplace, tag?: string) => replaceNote(api, id, body, tag),
  remove: (id: string, expected_version?: number) =>
    call(api.DELETE("/api/v1/notes/{id}", { params: { path: { id }, query: { expected_version } } })),
};

export const graph = {
  neighbours: (id: string, depth: number) =>
    call(api.GET("/api/v1/graph/neighbours/{id}", { params: { path: { id }, query: { depth } } })),
};

export const search = (q: string, cursor?: string, limit = 20) =>
  call(api.GET("/api/v1/search", { params: { query: { q, cursor, limit } } }));

export const health = () => call(api.GET("/api/v1/health"));

/**
 * The change feed, read to place the live stream: a read filtered to an
 * entity that cannot exist matches no event, and answers with the head
 * (`next_cursor` skips what the filter passed over).
 */
const NO_ENTITY = "-";
export const changes = {
  head: () => call(api.GET("/api/v1/changes", { params: { query: { entity_id: NO_ENTITY, limit: 1 } } })),
  after: (cursor: string) =>
    call(api.GET("/api/v1/changes", { params: { query: { cursor, entity_id: NO_ENTITY, limit: 1 } } })),
};
