// The live feed: one EventSource on the page's project's `events` stream
// (/api/v1/events in `default`), which views subscribe to. It always resumes
// from the last event it saw (`?after=`), so nothing committed while it was away is missed; after a `reset` (the
// stream fell behind) or a cursor the server no longer knows, views re-read
// what they show and the feed follows on from the head.
import type { ChangeEvent, ChangeKind } from "../api/types";

/** `connecting` until the first open; `off` while the server wants a token we lack. */
export type LiveState = "connecting" | "live" | "reconnecting" | "off";

/** Every kind the stream sends, so each gets a listener (EventSource needs one per name). */
export const CHANGE_KINDS = [
  "task.created",
  "task.updated",
  "task.claimed",
  "task.renewed",
  "task.released",
  "task.completed",
  "task.cancelled",
  "task.reopened",
  "note.written",
  "note.deleted",
  "link.added",
  "link.removed",
] as const satisfies readonly ChangeKind[];
// Compile-time check: a kind added to the API and missing here fails `tsc`.
const allKindsListed: Exclude<ChangeKind, (typeof CHANGE_KINDS)[number]> extends never ? true : never = true;
void allKindsListed;

/** The part of EventSource the feed uses (a fake in unit tests). */
export interface EventSourceLike {
  readonly readyState: number;
  onopen: ((e: Event) => void) | null;
  onerror: ((e: Event) => void) | null;
  addEventListener(type: string, listener: (e: MessageEvent<string>) => void): void;
  close(): void;
}

/**
 * What a check of the feed found, before reconnecting: the server answers and
 * knows `cursor` (`ok`), does not know it any more (`stale`: resync), wants a
 * token (`unauthorized`), or is not there or not ready (`down`: try later).
 */
export type Probe = "ok" | "stale" | "unauthorized" | "down";

/** The feed's current position, or why the server could not say. */
export type Head = { cursor: string } | "unauthorized" | "down";

export interface LiveDeps {
  /** The stream to follow from just after `cursor` (one project's). */
  url: (cursor: string) => string;
  open: (url: string) => EventSourceLike;
  head: () => Promise<Head>;
  probe: (cursor: string) => Promise<Probe>;
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (handle: unknown) => void;
}

type Listener = (event: ChangeEvent) => void;
type Resync = () => void;

/** Waits between reconnection attempts: quick at first, then every 2 s. */
export const BACKOFF_MS = [250, 500, 1000, 2000];
const MAX_BACKOFF_MS = 2000;

export class LiveFeed {
  state: LiveState = "connecting";
  cursor: string | null = null;
  private source: EventSourceLike | null = null;
  private timer: unknown = null;
  private failures = 0;
  private stopped = false;
  private readonly listeners = new Set<Listener>();
  private readonly resyncs = new Set<Resync>();
  private readonly watchers = new Set<(s: LiveState) => void>();

  constructor(private readonly deps: LiveDeps) {}

  /** Starts following from the feed's head. */
  start(): void {
    this.stopped = false;
    void this.fromHead(false);
  }

  stop(): void {
    this.stopped = true;
    this.source?.close();
    this.source = null;
    if (this.timer !== null) this.deps.clearTimeout(this.timer);
    this.timer = null;
  }

  /** Every event, in feed order. Returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called when events may have been missed: re-read what is shown. */
  onResync(resync: Resync): () => void {
    this.resyncs.add(resync);
    return () => this.resyncs.delete(resync);
  }

  watch(watcher: (s: LiveState) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** Try again now (after the token changed, say). */
  retry(): void {
    if (this.stopped) return;
    this.failures = 0;
    if (this.cursor === null) void this.fromHead(false);
    else void this.reconnect();
  }

  private setState(state: LiveState): void {
    if (this.state === state) return;
    this.state = state;
    for (const w of this.watchers) w(state);
  }

  /** Takes the head as the cursor (views re-read first when `resync`), then connects. */
  private async fromHead(resync: boolean): Promise<void> {
    const head = await this.deps.head();
    if (this.stopped) return;
    if (head === "unauthorized") return this.setState("off");
    if (head === "down") {
      if (this.state !== "connecting") this.setState("reconnecting");
      return this.later();
    }
    this.cursor = head.cursor;
    // Re-read after taking the head: whatever commits meanwhile is replayed.
    if (resync) for (const r of this.resyncs) r();
    this.connect();
  }

  private connect(): void {
    this.source?.close();
    const source = this.deps.open(this.deps.url(this.cursor ?? "0"));
    this.source = source;
    source.onopen = () => {
      if (this.source !== source) return;
      this.failures = 0;
      this.setState("live");
    };
    // The browser would reconnect by itself, but only from the last event id it
    // saw (none on a quiet board); the feed reconnects from its own cursor.
    source.onerror = () => {
      if (this.source !== source) return;
      source.close();
      this.source = null;
      this.setState(this.state === "off" ? "off" : "reconnecting");
      this.later();
    };
    const onChange = (e: MessageEvent<string>) => {
      if (this.source !== source) return;
      let event: ChangeEvent;
      try {
        event = JSON.parse(e.data) as ChangeEvent;
      } catch {
        return;
      }
      this.cursor = String(event.seq);
      for (const l of this.listeners) l(event);
    };
    for (const kind of CHANGE_KINDS) source.addEventListener(kind, onChange);
    source.addEventListener("reset", () => {
      if (this.source !== source) return;
      source.close();
      this.source = null;
      this.setState("reconnecting");
      void this.fromHead(true);
    });
  }

  private later(): void {
    if (this.stopped || this.timer !== null) return;
    const wait = BACKOFF_MS[Math.min(this.failures, BACKOFF_MS.length - 1)] ?? MAX_BACKOFF_MS;
    this.failures++;
    this.timer = this.deps.setTimeout(() => {
      this.timer = null;
      void this.reconnect();
    }, wait);
  }

  /** Checks the server and the cursor before opening a stream again. */
  private async reconnect(): Promise<void> {
    if (this.stopped) return;
    if (this.cursor === null) return this.fromHead(false);
    const found = await this.deps.probe(this.cursor);
    if (this.stopped) return;
    switch (found) {
      case "ok":
        return this.connect();
      case "stale":
        return this.fromHead(true);
      case "unauthorized":
        // Nothing to do until a token is given (retry() is called then).
        return this.setState("off");
      case "down":
        this.setState("reconnecting");
        return this.later();
    }
  }
}
