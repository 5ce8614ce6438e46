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
  const client = createClient<paths>({ baseUrl: opts.baseUrl ?? "", fetch: envelopeFetch(opts.fetch) });
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

export type Outcome<T> =
  | { ok: true; data: T; meta: Meta; status: number }
  | { ok: false; error: ApiError };

/** What openapi-fetch resolves to, narrowed to the success envelope we read. */
interface Fetched<T> {
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
  return { ok: true, data: data.data, meta: data.meta, status: response.status };
}

/** The client the SPA uses (same origin as the page). */
export const api = createApi({ token: readToken });
