// Every API type the SPA uses, derived from the generated OpenAPI types
// (schema.d.ts). Nothing here is written by hand: a change in the gateway's
// document changes these types, and `tsc --noEmit` shows what it breaks.
import type { components, paths } from "./schema";

type Schemas = components["schemas"];

export type ErrorEnvelope = Schemas["ErrorEnvelope"];
export type ErrorBody = ErrorEnvelope["error"];
export type ErrorCode = ErrorBody["code"];
export type ErrorCategory = ErrorBody["category"];

type JsonContent<R> = R extends { content: { "application/json": infer B } } ? B : never;
type SuccessEnvelope<Op> = Op extends { responses: infer Rs }
  ? JsonContent<Rs[200 & keyof Rs] | Rs[201 & keyof Rs]>
  : never;

/** The `data` of the success envelope of `method path`. */
export type DataOf<P extends keyof paths, M extends keyof paths[P]> =
  SuccessEnvelope<paths[P][M]> extends { data: infer D } ? D : never;

/** The JSON request body of `method path`. */
export type BodyOf<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { "application/json": infer B } };
}
  ? B
  : never;

/** The query parameters of `method path`. */
export type QueryOf<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  parameters: { query?: infer Q };
}
  ? NonNullable<Q>
  : never;

export type Meta = SuccessEnvelope<paths["/api/v1/health"]["get"]> extends { meta: infer M } ? M : never;

export type Task = DataOf<"/api/v1/tasks/{id}", "get">;
export type TaskStatus = Task["status"];
export type Priority = Task["priority"];
export type Claim = NonNullable<Task["claim"]>;
export type TaskPage = DataOf<"/api/v1/tasks", "get">;
export type TaskPatch = BodyOf<"/api/v1/tasks/{id}", "patch">;
export type NewTask = BodyOf<"/api/v1/tasks", "post">;
export type Board = DataOf<"/api/v1/board", "get">;
export type BoardQuery = QueryOf<"/api/v1/board", "get">;
export type BoardColumn = Board["columns"][number];
export type Note = DataOf<"/api/v1/notes/{id}", "get">;
export type NotePage = DataOf<"/api/v1/notes", "get">;
export type NoteSummary = NotePage["items"][number];
export type NoteWritten = DataOf<"/api/v1/notes", "post">;
export type NoteInput = BodyOf<"/api/v1/notes", "post">;
/** A replace also takes the `expected_version` that was read. */
export type NoteReplace = BodyOf<"/api/v1/notes/{id}", "put">;
export type Graph = DataOf<"/api/v1/graph/neighbours/{id}", "get">;
export type GraphNode = Graph["nodes"][number];
export type GraphEdge = Graph["edges"][number];
export type SearchPage = DataOf<"/api/v1/search", "get">;
export type SearchHit = SearchPage["items"][number];
export type Health = DataOf<"/api/v1/health", "get">;
export type ChangesPage = DataOf<"/api/v1/changes", "get">;
export type ChangeEvent = ChangesPage["events"][number];
export type ChangeKind = ChangeEvent["kind"];
export type ProjectList = DataOf<"/api/v1/projects", "get">;
export type Project = ProjectList["projects"][number];
export type NewProject = BodyOf<"/api/v1/projects", "post">;
