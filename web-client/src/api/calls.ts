// The calls the views make, one per operation, each returning an Outcome and
// each sent to one project: in `default` to the routes it has always had
// (`/api/v1/...`), in any other to that project's copies
// (`/api/v1/projects/{project}/...`, the `_in_project` operations). Both
// routes are written out against the generated `paths`, so each is
// type-checked, and this is the one place that chooses between them.
import { type Api, api, call, type Fetched } from "./client";
import type { BoardQuery, NewProject, NewTask, NoteInput, NoteReplace, QueryOf, TaskPatch } from "./types";
import { currentProject, DEFAULT_PROJECT } from "../lib/router";

/** The path parameter a project's copy of an operation adds. */
type InProject = { project: string };

/** Sends `plain()` for the default project, `scoped({ project })` for any other. */
export function routed<T>(
  project: string,
  plain: () => Promise<Fetched<T>>,
  scoped: (path: InProject) => Promise<Fetched<T>>,
) {
  return call(project === DEFAULT_PROJECT ? plain() : scoped({ project }));
}

/** Where `project`'s routes start (the live stream, not in the OpenAPI document, is built on it). */
export function projectBase(project: string): string {
  return project === DEFAULT_PROJECT ? "/api/v1" : `/api/v1/projects/${encodeURIComponent(project)}`;
}

/** The live stream of `project`, from just after `cursor`. */
export function eventsUrl(project: string, cursor: string): string {
  return `${projectBase(project)}/events?after=${encodeURIComponent(cursor)}`;
}

/** `If-Match` with the tag that was read, when there is one. */
const ifMatch = (tag: string | undefined) => (tag ? { "If-Match": tag } : undefined);

/** Edits a task; with `tag` (its `ETag`), only if it is still that version (else 412 `precondition_failed`). */
export const updateTask = (client: Api, id: string, body: TaskPatch, tag?: string, project = DEFAULT_PROJECT) =>
  routed(
    project,
    () => client.PATCH("/api/v1/tasks/{id}", { params: { path: { id }, header: ifMatch(tag) }, body }),
    (p) => client.PATCH("/api/v1/projects/{project}/tasks/{id}", { params: { path: { ...p, id }, header: ifMatch(tag) }, body }),
  );

/** Replaces a note; with `tag` (its `ETag`), only if it is still that version. */
export const replaceNote = (client: Api, id: string, body: NoteReplace, tag?: string, project = DEFAULT_PROJECT) =>
  routed(
    project,
    () => client.PUT("/api/v1/notes/{id}", { params: { path: { id }, header: ifMatch(tag) }, body }),
    (p) => client.PUT("/api/v1/projects/{project}/notes/{id}", { params: { path: { ...p, id }, header: ifMatch(tag) }, body }),
  );

/**
 * The change feed, read to place the live stream: a read filtered to an
 * entity that cannot exist matches no event, and answers with the head
 * (`next_cursor` skips what the filter passed over).
 */
const NO_ENTITY = "-";

/** Every call the views make, each sent to `project()` as it is when the call is made. */
export function callsIn(client: Api, project: () => string) {
  const at = <T>(plain: () => Promise<Fetched<T>>, scoped: (path: InProject) => Promise<Fetched<T>>) =>
    routed(project(), plain, scoped);
  const byId = (id: string) => ({ plain: { path: { id } }, scoped: (p: InProject) => ({ path: { ...p, id } }) });
  const withAgent = (agent?: string) => (agent ? { agent } : {});

  const tasks = {
    /** The board; `columns` with a `<status>_cursor` pages one column on. */
    board: (query: BoardQuery = {}) =>
      at(
        () => client.GET("/api/v1/board", { params: { query } }),
        (path) => client.GET("/api/v1/projects/{project}/board", { params: { path, query } }),
      ),
    get: (id: string) =>
      at(
        () => client.GET("/api/v1/tasks/{id}", { params: byId(id).plain }),
        (p) => client.GET("/api/v1/projects/{project}/tasks/{id}", { params: byId(id).scoped(p) }),
      ),
    create: (body: NewTask) =>
      at(
        () => client.POST("/api/v1/tasks", { body }),
        (path) => client.POST("/api/v1/projects/{project}/tasks", { params: { path }, body }),
      ),
    update: (id: string, body: TaskPatch, tag?: string) => updateTask(client, id, body, tag, project()),
    claim: (id: string, agent: string, ttl_minutes?: number) =>
      at(
        () => client.POST("/api/v1/tasks/{id}/claim", { params: byId(id).plain, body: { agent, ttl_minutes } }),
        (p) => client.POST("/api/v1/projects/{project}/tasks/{id}/claim", { params: byId(id).scoped(p), body: { agent, ttl_minutes } }),
      ),
    renew: (id: string, agent: string) =>
      at(
        () => client.POST("/api/v1/tasks/{id}/renew", { params: byId(id).plain, body: { agent } }),
        (p) => client.POST("/api/v1/projects/{project}/tasks/{id}/renew", { params: byId(id).scoped(p), body: { agent } }),
      ),
    release: (id: string, agent: string) =>
      at(
        () => client.POST("/api/v1/tasks/{id}/release", { params: byId(id).plain, body: { agent } }),
        (p) => client.POST("/api/v1/projects/{project}/tasks/{id}/release", { params: byId(id).scoped(p), body: { agent } }),
      ),
    complete: (id: string, agent?: string) =>
      at(
        () => client.POST("/api/v1/tasks/{id}/complete", { params: byId(id).plain, body: withAgent(agent) }),
        (p) => client.POST("/api/v1/projects/{project}/tasks/{id}/complete", { params: byId(id).scoped(p), body: withAgent(agent) }),
      ),
    cancel: (id: string, agent?: string) =>
      at(
        () => client.POST("/api/v1/tasks/{id}/cancel", { params: byId(id).plain, body: withAgent(agent) }),
        (p) => client.POST("/api/v1/projects/{project}/tasks/{id}/cancel", { params: byId(id).scoped(p), body: withAgent(agent) }),
      ),
    reopen: (id: string, agent?: string) =>
      at(
        () => client.POST("/api/v1/tasks/{id}/reopen", { params: byId(id).plain, body: withAgent(agent) }),
        (p) => client.POST("/api/v1/projects/{project}/tasks/{id}/reopen", { params: byId(id).scoped(p), body: withAgent(agent) }),
      ),
  };

  const notes = {
    list: (query: QueryOf<"/api/v1/notes", "get">) =>
      at(
        () => client.GET("/api/v1/notes", { params: { query } }),
        (path) => client.GET("/api/v1/projects/{project}/notes", { params: { path, query } }),
      ),
    get: (id: string) =>
      at(
        () => client.GET("/api/v1/notes/{id}", { params: byId(id).plain }),
        (p) => client.GET("/api/v1/projects/{project}/notes/{id}", { params: byId(id).scoped(p) }),
      ),
    create: (body: NoteInput) =>
      at(
        () => client.POST("/api/v1/notes", { body }),
        (path) => client.POST("/api/v1/projects/{project}/notes", { params: { path }, body }),
      ),
    update: (id: string, body: NoteReplace, tag?: string) => replaceNote(client, id, body, tag, project()),
    remove: (id: string, expected_version?: number) =>
      at(
        () => client.DELETE("/api/v1/notes/{id}", { params: { path: { id }, query: { expected_version } } }),
        (p) => client.DELETE("/api/v1/projects/{project}/notes/{id}", { params: { path: { ...p, id }, query: { expected_version } } }),
      ),
  };

  const graph = {
    neighbours: (id: string, depth: number) =>
      at(
        () => client.GET("/api/v1/graph/neighbours/{id}", { params: { path: { id }, query: { depth } } }),
        (p) => client.GET("/api/v1/projects/{project}/graph/neighbours/{id}", { params: { path: { ...p, id }, query: { depth } } }),
      ),
  };

  const search = (q: string, cursor?: string, limit = 20) =>
    at(
      () => client.GET("/api/v1/search", { params: { query: { q, cursor, limit } } }),
      (path) => client.GET("/api/v1/projects/{project}/search", { params: { path, query: { q, cursor, limit } } }),
    );

  const health = () =>
    at(
      () => client.GET("/api/v1/health"),
      (path) => client.GET("/api/v1/projects/{project}/health", { params: { path } }),
    );

  const changesAt = (query: QueryOf<"/api/v1/changes", "get">) =>
    at(
      () => client.GET("/api/v1/changes", { params: { query } }),
      (path) => client.GET("/api/v1/projects/{project}/changes", { params: { path, query } }),
    );
  const changes = {
    head: () => changesAt({ entity_id: NO_ENTITY, limit: 1 }),
    after: (cursor: string) => changesAt({ cursor, entity_id: NO_ENTITY, limit: 1 }),
  };

  return { tasks, notes, graph, search, health, changes };
}

/** The page's calls: to the project its URL names. */
export const { tasks, notes, graph, search, health, changes } = callsIn(api, currentProject);

/** The projects themselves: one registry for the server, not per project. */
export const projects = {
  list: () => call(api.GET("/api/v1/projects")),
  create: (body: NewProject) => call(api.POST("/api/v1/projects", { body })),
};
