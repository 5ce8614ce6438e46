// The one API client: openapi-fetch over the generated `paths`, with a fetch
// that guarantees typed error envelopes, and `call()` which folds every way a
// request can end into an `Outcome`.
import createClient from "openapi-fetch";
import type { paths } from "./schema";
import { type ApiError, envelopeFetch, errorFromResponse, errorFromThrown, internalError } from "./errors";
import { readToken } from "../lib/token";
import type { Meta } from "./types";

export type Api = ReturnType<typeof createApi>;

export function createApi(opts: { baseUrl?: string; fetch?: typeof fetch; token?: () => string } = {}) {
  // Typed by the JSON media type only: the SPA never asks for problem details
  // (`application/problem+json`), so every error it sees is the envelope.
  const client = createClient<paths, "application/json">({
    baseUrl: opts.baseUrl ?? "",
    fetch: envelopeFetch(opts.fetch),
  });
  const token = opts.token;
  if (token) {
    client.use({
      onRequest({ request }) {
        const t = token();
        if (t) request.headers.set("authorization", `Bearer ${t}`);
        return request;
      },
    });
  }
  return client;
}

/**
 * The `ETag` each answer's data came with (tasks and notes), keyed by the data
 * object itself, so whatever a view holds from an answer can be written back
 * with `If-Match`.
 */
const tags = new WeakMap<object, string>();

/** The `ETag` the server sent with `data`, if it sent one. */
export function etagOf(data: unknown): string | undefined {
  return typeof data === "object" && data !== null ? tags.get(data) : undefined;
}

export type Outcome<T> =
  | { ok: true; data: T; meta: Meta; status: number }
  | { ok: false; error: ApiError };

/** What openapi-fetch resolves to, narrowed to the success envelope we read. */
export interface Fetched<T> {
  data?: { data: T; meta: Meta };
  error?: unknown;
  response: Response;
}

/** Awaits an openapi-fetch call and never throws: success data, or one typed ApiError. */
export async function call<T>(request: Promise<Fetched<T>>): Promise<Outcome<T>> {
  let fetched: Fetched<T>;
  try {
    fetched = await request;
  } catch (thrown) {
    return { ok: false, error: errorFromThrown(thrown) };
  }
  const { data, error, response } = fetched;
  if (error !== undefined || !response.ok) return { ok: false, error: errorFromResponse(response, error) };
  if (data === undefined || typeof data !== "object" || data === null || !("data" in data)) {
    return {
      ok: false,
      error: internalError({
        status: response.status,
        message: `The server answered ${response.status} without a cairn envelope.`,
        requestId: response.headers.get("x-request-id"),
        details: { http_status: response.status, body_kind: data === undefined ? "empty" : "json" },
      }),
    };
  }
  const tag = response.headers.get("etag");
  if (tag && typeof data.data === "object" && data.data !== null) tags.set(data.data, tag);
  return { ok: true, data: data.data, meta: data.meta, status: response.status };
}

/** The client the SPA uses (same origin as the page). */
export const api = createApi({ token: readToken });
