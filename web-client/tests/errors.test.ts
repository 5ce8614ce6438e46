// Every way a call can fail becomes one typed ApiError: envelopes pass through,
// empty and foreign bodies become internal errors, thrown fetches too.
import { describe, expect, it } from "vitest";
import { call, createApi } from "../src/api/client";
import { errorFromResponse, isErrorEnvelope, parseRetryAfter } from "../src/api/errors";
import type { ErrorBody } from "../src/api/types";

const body = (over: Partial<ErrorBody> = {}): ErrorBody => ({
  category: "conflict",
  code: "version_conflict",
  message: "The task changed.",
  retryable: false,
  request_id: "req-1",
  details: { current_version: 4 },
  suggestions: [],
  ...over,
});

function apiAnswering(respond: () => Response | Promise<Response>) {
  return createApi({ baseUrl: "http://cairn.test", fetch: async () => respond() });
}

const getTask = (api: ReturnType<typeof createApi>) =>
  call(api.GET("/api/v1/tasks/{id}", { params: { path: { id: "abcdef" } } }));

describe("a cairn error envelope", () => {
  it("arrives as the server's ErrorBody with the HTTP status", async () => {
    const api = apiAnswering(() => Response.json({ error: body() }, { status: 409 }));
    const out = await getTask(api);
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.error.status).toBe(409);
    expect(out.error.body.code).toBe("version_conflict");
    expect(out.error.body.details.current_version).toBe(4);
  });

  it("takes retry_after_ms from Retry-After when the body has none", async () => {
    const api = apiAnswering(() =>
      Response.json(
        { error: body({ category: "transient", code: "store_busy", retryable: true, details: {} }) },
        { status: 503, headers: { "retry-after": "2" } },
      ),
    );
    const out = await getTask(api);
    expect(!out.ok && out.error.body.retry_after_ms).toBe(2000);
  });
});

describe("an answer that is not a cairn envelope", () => {
  it.each([
    ["an empty body", () => new Response(null, { status: 500 })],
    ["an empty body with content-length 0", () => new Response("", { status: 502, headers: { "content-length": "0" } })],
    ["an HTML body", () => new Response("<html><body>Bad gateway</body></html>", { status: 502 })],
    ["plain text", () => new Response("upstream timed out", { status: 504 })],
    ["truncated JSON", () => new Response('{"error": {"code": "sto', { status: 503 })],
    ["JSON of another shape", () => Response.json({ message: "nope" }, { status: 400 })],
    ["an error with an unknown category", () => Response.json({ error: { ...body(), category: "weird" } }, { status: 400 })],
  ])("%s yields a typed internal error", async (_name, respond) => {
    const out = await getTask(apiAnswering(respond));
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.error.body.category).toBe("internal");
    expect(out.error.body.code).toBe("internal_error");
    expect(typeof out.error.body.message).toBe("string");
    expect(out.error.body.request_id).toMatch(/\S/);
    expect(out.error.body.details).toBeTypeOf("object");
    expect(out.error.body.suggestions).toEqual([]);
  });

  it("keeps the x-request-id header as the request id", async () => {
    const out = await getTask(
      apiAnswering(() => new Response("", { status: 500, headers: { "x-request-id": "from-header" } })),
    );
    expect(!out.ok && out.error.body.request_id).toBe("from-header");
  });

  it("is retryable for 503 with a Retry-After, honouring it", async () => {
    const out = await getTask(apiAnswering(() => new Response("busy", { status: 503, headers: { "retry-after": "3" } })));
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.error.body.retryable).toBe(true);
    expect(out.error.body.retry_after_ms).toBe(3000);
  });

  it("is not retryable for a plain 500", async () => {
    const out = await getTask(apiAnswering(() => new Response("oops", { status: 500 })));
    expect(!out.ok && out.error.body.retryable).toBe(false);
  });

  it("a 200 whose body is not JSON yields an internal error, not a throw", async () => {
    const out = await getTask(apiAnswering(() => new Response("<html>", { status: 200, headers: { "content-type": "text/html" } })));
    expect(!out.ok && out.error.body.code).toBe("internal_error");
  });

  it("a 200 with an empty body yields an internal error", async () => {
    const out = await getTask(apiAnswering(() => new Response("", { status: 200 })));
    expect(!out.ok && out.error.body.code).toBe("internal_error");
  });

  it("a network failure yields a retryable internal error with status 0", async () => {
    const api = createApi({ baseUrl: "http://cairn.test", fetch: async () => Promise.reject(new TypeError("Failed to fetch")) });
    const out = await getTask(api);
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.error.status).toBe(0);
    expect(out.error.body.code).toBe("internal_error");
    expect(out.error.body.retryable).toBe(true);
  });
});

describe("success", () => {
  it("unwraps data and meta", async () => {
    const task = { id: "abcdef123", title: "t" };
    const out = await getTask(apiAnswering(() => Response.json({ data: task, meta: { request_id: "r" } })));
    expect(out.ok && out.data).toEqual(task);
  });
});

describe("helpers", () => {
  it("parseRetryAfter reads seconds and dates", () => {
    expect(parseRetryAfter("5")).toBe(5000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });

  it("isErrorEnvelope rejects look-alikes", () => {
    expect(isErrorEnvelope({ error: body() })).toBe(true);
    expect(isErrorEnvelope({ error: "x" })).toBe(false);
    expect(isErrorEnvelope(null)).toBe(false);
    expect(isErrorEnvelope("text")).toBe(false);
  });

  it("errorFromResponse fills details and suggestions an envelope omits", () => {
    const partial = { error: { category: "validation", code: "invalid_input", message: "m", retryable: false, request_id: "r" } };
    const e = errorFromResponse(new Response(null, { status: 400 }), partial);
    expect(e.body.details).toEqual({});
    expect(e.body.suggestions).toEqual([]);
  });
});

describe("the bearer token", () => {
  it("is sent on every request when set", async () => {
    const seen: (string | null)[] = [];
    const api = createApi({
      baseUrl: "http://cairn.test",
      token: () => "s3cret",
      fetch: async (req) => {
        seen.push((req as Request).headers.get("authorization"));
        return Response.json({ data: {}, meta: {} });
      },
    });
    await getTask(api);
    expect(seen).toEqual(["Bearer s3cret"]);
  });
});
