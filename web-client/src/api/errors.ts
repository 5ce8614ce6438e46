// Turns whatever an API call produced -- a cairn error envelope, a body that is
// not one (empty, HTML from a proxy, truncated JSON), or a thrown network
// failure -- into one typed `ApiError`. The UI never sees anything else.
import type { ErrorBody, ErrorCategory, ErrorCode } from "./types";

/** A failed call: the server's (or a synthesized) ErrorBody plus the HTTP status (0: no response). */
export interface ApiError {
  status: number;
  body: ErrorBody;
}

const CATEGORIES: ReadonlySet<string> = new Set<ErrorCategory>([
  "validation",
  "unauthorized",
  "permission",
  "module_disabled",
  "not_found",
  "conflict",
  "too_large",
  "rate_limited",
  "internal",
  "transient",
  "unavailable",
] satisfies ErrorCategory[]);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** True when `v` has the ErrorEnvelope shape the contract promises. */
export function isErrorEnvelope(v: unknown): v is { error: ErrorBody } {
  if (!isRecord(v) || !isRecord(v.error)) return false;
  const e = v.error;
  return (
    typeof e.code === "string" &&
    typeof e.category === "string" &&
    CATEGORIES.has(e.category) &&
    typeof e.message === "string" &&
    typeof e.retryable === "boolean"
  );
}

/** Seconds or an HTTP date, as in `Retry-After`; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

let clientCounter = 0;
function clientRequestId(): string {
  clientCounter += 1;
  return `client-${Date.now().toString(36)}-${clientCounter}`;
}

/** A typed internal error for an answer that is not a cairn envelope. */
export function internalError(opts: {
  status: number;
  message: string;
  requestId?: string | null;
  retryAfterMs?: number;
  details?: Record<string, unknown>;
  retryable?: boolean;
}): ApiError {
  const code: ErrorCode = "internal_error";
  const body: ErrorBody = {
    category: "internal",
    code,
    message: opts.message,
    retryable: opts.retryable ?? false,
    request_id: opts.requestId || clientRequestId(),
    details: opts.details ?? {},
    suggestions: [],
  };
  if (opts.retryAfterMs !== undefined) body.retry_after_ms = opts.retryAfterMs;
  return { status: opts.status, body };
}

// Gateways and proxies answer these with bodies of their own; trying again is sensible.
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

/** The ApiError for a non-2xx response whose body was already read (`raw`, parsed or text). */
export function errorFromResponse(response: Response, raw: unknown): ApiError {
  if (isErrorEnvelope(raw)) {
    const body = { ...raw.error };
    // Fill what an older or sloppier server may omit, so the UI can rely on it.
    body.details = isRecord(body.details) ? body.details : {};
    body.suggestions = Array.isArray(body.suggestions) ? body.suggestions : [];
    body.request_id = body.request_id || response.headers.get("x-request-id") || clientRequestId();
    if (body.retry_after_ms == null) {
      const hinted = parseRetryAfter(response.headers.get("retry-after"));
      if (hinted !== undefined && body.retryable) body.retry_after_ms = hinted;
    }
    return { status: response.status, body };
  }
  const empty = raw === undefined || raw === null || raw === "";
  return internalError({
    status: response.status,
    message: empty
      ? `The server answered ${response.status} with an empty body.`
      : `The server answered ${response.status} with a body that is not a cairn error.`,
    requestId: response.headers.get("x-request-id"),
    retryable: RETRYABLE_STATUSES.has(response.status),
    retryAfterMs: parseRetryAfter(response.headers.get("retry-after")),
    details: { http_status: response.status, body_kind: empty ? "empty" : typeof raw === "string" ? "text" : "json" },
  });
}

/**
 * A `fetch` whose error responses are always cairn error envelopes: a non-2xx
 * answer with an empty or foreign body is replaced by a typed internal error
 * (same status and headers). openapi-fetch then parses every error as the
 * `ErrorEnvelope` its types promise.
 */
export function envelopeFetch(inner: typeof fetch = (...args) => globalThis.fetch(...args)) {
  return async (input: Request): Promise<Response> => {
    const response = await inner(input);
    if (response.ok) return response;
    const text = await response.text();
    let raw: unknown = text;
    try {
      raw = text === "" ? undefined : JSON.parse(text);
    } catch {
      // keep the text: errorFromResponse reports it as a foreign body
    }
    const body = errorFromResponse(response, raw).body;
    const headers = new Headers(response.headers);
    headers.set("content-type", "application/json");
    headers.delete("content-length");
    return new Response(JSON.stringify({ error: body }), {
      status: response.status,
      statusText: response.statusText,
      headers,
    });
  };
}

/** The ApiError for a call that threw: no response (network), or an unreadable success body. */
export function errorFromThrown(thrown: unknown): ApiError {
  if (thrown instanceof SyntaxError) {
    return internalError({
      status: 0,
      message: "The server's answer could not be read.",
      details: { body_kind: "unreadable" },
    });
  }
  const aborted = thrown instanceof DOMException && thrown.name === "AbortError";
  return internalError({
    status: 0,
    message: aborted ? "The request was cancelled." : "The server could not be reached.",
    retryable: !aborted,
    details: { body_kind: "no_response" },
  });
}
