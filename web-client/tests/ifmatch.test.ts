// The editors write back with `If-Match`: the `ETag` a read came with guards
// the write (no `expected_version` in the body then), and a 412
// `precondition_failed` is shown as the same conflict as `version_conflict`.
import { describe, expect, it } from "vitest";
import { replaceNote, updateTask } from "../src/api/calls";
import { call, createApi, etagOf } from "../src/api/client";
import type { Task } from "../src/api/types";
import { errorView } from "../src/ui/affordance";
import { isStaleWrite, patchOf } from "../src/views/TaskDetail";

const TAG = '"a1b2c3d4e5f6.3"';

const task: Task = {
  id: "a1b2c3d4e5f6",
  title: "Ship it",
  description: "",
  status: "open",
  tags: [],
  priority: "normal",
  version: 3,
  created_at: "2026-11-30T00:00:00Z",
  updated_at: "2026-11-30T00:00:00Z",
  claim: null,
} as Task;

interface Seen {
  method: string;
  ifMatch: string | null;
  body: unknown;
}

/** A server that answers reads with `task` and its tag, and records every request. */
function server(answerWrite: () => Response) {
  const seen: Seen[] = [];
  const api = createApi({
    baseUrl: "http://cairn.test",
    fetch: async (input) => {
      const req = input as Request;
      const text = await req.text();
      seen.push({ method: req.method, ifMatch: req.headers.get("if-match"), body: text ? JSON.parse(text) : null });
      if (req.method === "GET") return Response.json({ data: task, meta: {} }, { headers: { etag: TAG } });
      return answerWrite();
    },
  });
  return { api, seen };
}

const draft = { title: "Ship it now", description: "", tags: "", priority: "normal" as const };

describe("If-Match", () => {
  it("carries the ETag a read came with, and the body no expected_version", async () => {
    const { api, seen } = server(() => Response.json({ data: { ...task, version: 4 }, meta: {} }, { headers: { etag: '"a1b2c3d4e5f6.4"' } }));
    const read = await call(api.GET("/api/v1/tasks/{id}", { params: { path: { id: task.id } } }));
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    const tag = etagOf(read.data);
    expect(tag).toBe(TAG);
    const saved = await updateTask(api, task.id, patchOf(read.data, draft, tag), tag);
    expect(seen[1]).toEqual({ method: "PATCH", ifMatch: TAG, body: { title: "Ship it now" } });
    expect(saved.ok && etagOf(saved.data)).toBe('"a1b2c3d4e5f6.4"');
  });

  it("falls back to expected_version when no tag is known", async () => {
    const { api, seen } = server(() => Response.json({ data: task, meta: {} }));
    await updateTask(api, task.id, patchOf(task, draft, etagOf(task)), etagOf(task));
    expect(seen[0]).toEqual({ method: "PATCH", ifMatch: null, body: { expected_version: 3, title: "Ship it now" } });
  });

  it("guards a note replace too", async () => {
    const { api, seen } = server(() => Response.json({ data: { id: "n", version: 2 }, meta: {} }));
    await replaceNote(api, "n1n2n3", { title: "T", content: "c" }, '"n1n2n3.1"');
    expect(seen[0]?.ifMatch).toBe('"n1n2n3.1"');
  });

  it("a 412 precondition_failed is a stale write with the version it is now at", async () => {
    const { api } = server(() =>
      Response.json(
        {
          error: {
            category: "conflict",
            code: "precondition_failed",
            message: "The entity changed since the tag in `If-Match` was read; nothing was written.",
            retryable: false,
            request_id: "r1",
            details: { current_version: 5, current_etag: '"a1b2c3d4e5f6.5"' },
            suggestions: [],
          },
        },
        { status: 412 },
      ),
    );
    const out = await updateTask(api, task.id, patchOf(task, draft, TAG), TAG);
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.error.status).toBe(412);
    expect(isStaleWrite(out.error)).toBe(true);
    expect(errorView(out.error.body).hint).toContain("version 5");
  });
});
