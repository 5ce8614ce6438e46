// The task editor sends only what changed, with the version it was made from;
// the board offers the actions a task's status allows.
import { describe, expect, it } from "vitest";
import type { Task } from "../src/api/types";
import { actionsFor, columnPageQuery } from "../src/views/Board";
import { changedFields, patchOf } from "../src/views/TaskDetail";

const task = (over: Partial<Task> = {}): Task =>
  ({
    id: "a1b2c3d4e5f6",
    title: "Ship it",
    description: "all of it",
    status: "open",
    tags: ["web"],
    priority: "high",
    version: 3,
    created_at: "2026-11-30T00:00:00Z",
    updated_at: "2026-11-30T00:00:00Z",
    claim: null,
    ...over,
  }) as Task;

const draft = { title: "Ship it", description: "all of it", tags: "web", priority: "high" as const };

describe("patchOf", () => {
  it("sends expected_version and only the changed fields", () => {
    expect(patchOf(task(), { ...draft, title: "Ship it now", tags: "web, ui" })).toEqual({
      expected_version: 3,
      title: "Ship it now",
      tags: ["web", "ui"],
    });
  });

  it("ignores whitespace-only differences in tags", () => {
    expect(changedFields(task(), { ...draft, tags: " web ," })).toEqual([]);
  });
});

describe("actionsFor", () => {
  it("open tasks can be claimed, completed or cancelled", () => {
    expect(actionsFor(task(), "me")).toEqual(["claim", "complete", "cancel"]);
  });

  it("the holder renews or releases; others may only try to claim", () => {
    const held = task({ status: "claimed", claim: { holder: "me", expires_at: "2026-11-30T01:00:00Z" } } as Partial<Task>);
    expect(actionsFor(held, "me")).toEqual(["renew", "release", "complete", "cancel"]);
    expect(actionsFor(held, "you")).toEqual(["claim", "complete", "cancel"]);
  });

  it("done and cancelled tasks can be reopened", () => {
    expect(actionsFor(task({ status: "done" }), "me")).toEqual(["reopen"]);
    expect(actionsFor(task({ status: "cancelled" }), "me")).toEqual(["reopen"]);
  });
});

describe("columnPageQuery", () => {
  it("asks for only the column being paged, with its cursor", () => {
    expect(columnPageQuery("done", "abc")).toEqual({ columns: ["done"], done_cursor: "abc" });
  });
});
