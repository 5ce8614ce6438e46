// The live feed: it follows the stream from a known cursor, reconnects from
// the last event it saw, re-reads after a reset or a cursor the server no
// longer knows, and stops asking while the server wants a token. And what the
// views do with a change: which cards moved, what an edited form makes of it.
import { describe, expect, it } from "vitest";
import { eventsUrl } from "../src/api/calls";
import type { Outcome } from "../src/api/client";
import type { Board, ChangeEvent, ChangesPage, Task, TaskStatus } from "../src/api/types";
import { CHANGE_KINDS, type EventSourceLike, type Head, LiveFeed, type LiveState, type Probe } from "../src/lib/live";
import { headOf, probeOf } from "../src/lib/useLive";
import { movedCards, rereadLimit } from "../src/views/Board";
import { liveUpdate } from "../src/views/TaskDetail";

class FakeSource implements EventSourceLike {
  readyState = 0;
  closed = false;
  onopen: ((e: Event) => void) | null = null;
  onerror: ((e: Event) => void) | null = null;
  private readonly listeners = new Map<string, ((e: MessageEvent<string>) => void)[]>();
  constructor(readonly url: string) {}
  addEventListener(type: string, listener: (e: MessageEvent<string>) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
  open() {
    this.readyState = 1;
    this.onopen?.(new Event("open"));
  }
  fail() {
    this.onerror?.(new Event("error"));
  }
  emit(type: string, data: unknown) {
    for (const l of this.listeners.get(type) ?? []) l(new MessageEvent(type, { data: JSON.stringify(data) }));
  }
  send(seq: number, kind: ChangeEvent["kind"] = "task.updated") {
    this.emit(kind, event(seq, kind));
  }
}

const event = (seq: number, kind: ChangeEvent["kind"] = "task.updated"): ChangeEvent => ({
  seq,
  at: "2026-12-01T00:00:00Z",
  kind,
  entity: { type: "task", id: `t${seq}`, title: `Task ${seq}` },
  version: 1,
  agent: null,
  changes: {},
});

const tick = () => new Promise((r) => setTimeout(r, 0));

/** A feed on fakes: the sources it opened, its timers, and scripted server answers. */
function harness(opts: { heads?: Head[]; probes?: Probe[]; project?: string } = {}) {
  const sources: FakeSource[] = [];
  const timers: { fn: () => void; ms: number }[] = [];
  const heads = [...(opts.heads ?? [{ cursor: "10" }])];
  const probes = [...(opts.probes ?? [])];
  const probed: string[] = [];
  const states: LiveState[] = [];
  const feed = new LiveFeed({
    url: (cursor) => eventsUrl(opts.project ?? "default", cursor),
    open: (url) => {
      const s = new FakeSource(url);
      sources.push(s);
      return s;
    },
    head: async () => heads.shift() ?? { cursor: "99" },
    probe: async (cursor) => {
      probed.push(cursor);
      return probes.shift() ?? "ok";
    },
    setTimeout: (fn, ms) => timers.push({ fn, ms }),
    clearTimeout: () => {},
  });
  feed.watch((s) => states.push(s));
  const seen: number[] = [];
  feed.subscribe((e) => seen.push(e.seq));
  /** Starts the feed and lets it take the head. */
  const start = async () => {
    feed.start();
    await tick();
  };
  /** Runs the timer the feed set last (a reconnection attempt). */
  const fire = async () => {
    const t = timers.shift();
    expect(t, "a reconnection is scheduled").toBeDefined();
    t!.fn();
    await tick();
    return t!.ms;
  };
  const last = () => sources[sources.length - 1]!;
  return { feed, sources, timers, probed, states, seen, start, fire, last };
}

describe("LiveFeed", () => {
  it("connects from the head and is live once the stream opens", async () => {
    const h = harness();
    await h.start();
    expect(h.feed.state).toBe("connecting");
    expect(h.last().url).toBe("/api/v1/events?after=10");
    h.last().open();
    expect(h.feed.state).toBe("live");
  });

  it("follows another project's stream on its own route", async () => {
    const h = harness({ project: "web" });
    await h.start();
    expect(h.last().url).toBe("/api/v1/projects/web/events?after=10");
  });

  it("listens for every change kind and passes events on in order, keeping the cursor", async () => {
    const h = harness();
    await h.start();
    h.last().open();
    for (const [i, kind] of CHANGE_KINDS.entries()) h.last().send(11 + i, kind);
    expect(h.seen).toEqual(CHANGE_KINDS.map((_, i) => 11 + i));
    expect(h.feed.cursor).toBe(String(10 + CHANGE_KINDS.length));
  });

  it("after a dropped stream shows reconnecting and resumes after the last event seen", async () => {
    const h = harness({ probes: ["down", "down", "ok"] });
    await h.start();
    h.last().open();
    h.last().send(11);
    h.last().send(12);
    const dropped = h.last();
    dropped.fail();
    expect(dropped.closed).toBe(true);
    expect(h.feed.state).toBe("reconnecting");
    const waits = [await h.fire(), await h.fire(), await h.fire()];
    expect(waits).toEqual([250, 500, 1000]);
    expect(h.probed).toEqual(["12", "12", "12"]);
    expect(h.sources).toHaveLength(2);
    expect(h.last().url).toBe("/api/v1/events?after=12");
    h.last().open();
    expect(h.states).toEqual(["live", "reconnecting", "live"]);
  });

  it("resumes from the head it started at when the stream dropped before any event", async () => {
    const h = harness();
    await h.start();
    h.last().fail();
    await h.fire();
    expect(h.last().url).toBe("/api/v1/events?after=10");
  });

  it("after a reset takes the new head, has views re-read, then reconnects from it", async () => {
    const h = harness({ heads: [{ cursor: "10" }, { cursor: "500" }] });
    const order: string[] = [];
    h.feed.onResync(() => order.push(`resync at cursor ${h.feed.cursor}`));
    await h.start();
    h.last().open();
    const behind = h.last();
    behind.emit("reset", { reason: "the stream fell behind" });
    expect(behind.closed).toBe(true);
    expect(h.feed.state).toBe("reconnecting");
    await tick();
    expect(order).toEqual(["resync at cursor 500"]);
    expect(h.last().url).toBe("/api/v1/events?after=500");
    h.last().open();
    expect(h.feed.state).toBe("live");
  });

  it("a cursor the server no longer knows is a resync from the head", async () => {
    const h = harness({ heads: [{ cursor: "10" }, { cursor: "3" }], probes: ["stale"] });
    let resyncs = 0;
    h.feed.onResync(() => resyncs++);
    await h.start();
    h.last().fail();
    await h.fire();
    await tick();
    expect(resyncs).toBe(1);
    expect(h.last().url).toBe("/api/v1/events?after=3");
  });

  it("stops while the server wants a token, and starts again when asked", async () => {
    const h = harness({ heads: ["unauthorized", { cursor: "7" }] });
    await h.start();
    expect(h.feed.state).toBe("off");
    expect(h.sources).toHaveLength(0);
    expect(h.timers).toHaveLength(0);
    h.feed.retry();
    await tick();
    expect(h.last().url).toBe("/api/v1/events?after=7");
  });

  it("ignores a stream it has replaced", async () => {
    const h = harness();
    await h.start();
    const old = h.last();
    old.fail();
    await h.fire();
    old.send(50);
    old.fail();
    expect(h.seen).toEqual([]);
    expect(h.timers).toHaveLength(0);
  });
});

describe("reading the feed's answers", () => {
  const failed = (code: string, category: string): Outcome<ChangesPage> =>
    ({ ok: false, error: { status: 400, body: { code, category } } }) as unknown as Outcome<ChangesPage>;
  const page = { ok: true, data: { events: [], next_cursor: "42", has_more: false } } as unknown as Outcome<ChangesPage>;

  it("classifies a probe", () => {
    expect(probeOf(page)).toBe("ok");
    expect(probeOf(failed("invalid_cursor", "validation"))).toBe("stale");
    expect(probeOf(failed("cursor_expired", "validation"))).toBe("stale");
    expect(probeOf(failed("unauthorized", "unauthorized"))).toBe("unauthorized");
    expect(probeOf(failed("store_unavailable", "unavailable"))).toBe("down");
    expect(probeOf(failed("internal_error", "internal"))).toBe("down");
  });

  it("takes the head from next_cursor", () => {
    expect(headOf(page)).toEqual({ cursor: "42" });
    expect(headOf(failed("unauthorized", "unauthorized"))).toBe("unauthorized");
    expect(headOf(failed("timeout", "transient"))).toBe("down");
  });
});

const task = (id: string, status: TaskStatus, over: Partial<Task> = {}): Task =>
  ({
    id,
    title: `Task ${id}`,
    description: "",
    status,
    tags: [],
    priority: "normal",
    version: 1,
    created_at: "2026-12-01T00:00:00Z",
    updated_at: "2026-12-01T00:00:00Z",
    claim: null,
    ...over,
  }) as Task;

const board = (cols: Partial<Record<TaskStatus, Task[]>>): Board =>
  ({
    columns: (["open", "claimed", "done", "cancelled"] as TaskStatus[]).map((status) => ({
      status,
      items: cols[status] ?? [],
      total: (cols[status] ?? []).length,
      next_cursor: null,
    })),
  }) as unknown as Board;

describe("movedCards", () => {
  const before = board({ open: [task("a", "open"), task("b", "open")], claimed: [task("c", "claimed")] });

  it("finds the cards whose column changed", () => {
    const after = board({ open: [task("b", "open")], claimed: [task("c", "claimed")], done: [task("a", "done")] });
    expect(movedCards(before, after, new Map()).map((t) => t.id)).toEqual(["a"]);
  });

  it("leaves out this page's own moves, but not a later move of the same card", () => {
    const after = board({ open: [task("b", "open")], claimed: [task("a", "claimed"), task("c", "claimed")] });
    expect(movedCards(before, after, new Map([["a", "claimed"]]))).toEqual([]);
    expect(movedCards(before, after, new Map([["a", "done"]])).map((t) => t.id)).toEqual(["a"]);
  });

  it("does not count new cards, or cards that came into view, as moved", () => {
    const after = board({ open: [task("a", "open"), task("b", "open"), task("z", "open")], claimed: [task("c", "claimed")] });
    expect(movedCards(before, after, new Map())).toEqual([]);
  });
});

describe("rereadLimit", () => {
  it("re-reads at least a page, and as many cards as the longest column shows", () => {
    expect(rereadLimit(undefined, {})).toBe(50);
    const many = Array.from({ length: 50 }, (_, i) => task(`t${i}`, "open"));
    const more = { open: { items: many.slice(0, 30), next_cursor: null, loading: false } };
    expect(rereadLimit(board({ open: many }), more)).toBe(80);
  });
});

describe("liveUpdate (the task editor)", () => {
  const base = task("a", "open", { version: 3, title: "Ship it" });
  const untouched = { title: "Ship it", description: "", tags: "", priority: "normal" as const };

  it("takes a newer version into an untouched form", () => {
    expect(liveUpdate(base, untouched, { ...base, version: 4, title: "Ship it now" })).toBe("take");
  });

  it("warns an edited form about a newer version instead of overwriting it", () => {
    expect(liveUpdate(base, { ...untouched, title: "Mine" }, { ...base, version: 4 })).toBe("warn");
  });

  it("takes claim and status news at the same version, and ignores older reads", () => {
    const claimed = { ...base, status: "claimed" as const, claim: { holder: "ann", expires_at: "2026-12-01T01:00:00Z" } };
    expect(liveUpdate(base, { ...untouched, title: "Mine" }, claimed)).toBe("take");
    expect(liveUpdate(base, untouched, { ...base, version: 2 })).toBe("ignore");
  });
});
