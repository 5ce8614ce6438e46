// The page's one live feed, wired to the server, and the hooks views use:
// `useLiveState` for the status line, `useChanges` to hear about changes to
// what a view shows (and to re-read it after a resync).
import { useEffect, useRef, useState } from "preact/hooks";
import { changes } from "../api/calls";
import type { Outcome } from "../api/client";
import type { ChangeEvent, ChangesPage } from "../api/types";
import { type Head, LiveFeed, type LiveState, type Probe } from "./live";
import { readToken, TOKEN_CHANGED } from "./token";

/** What a read of the feed says about following it from a cursor. */
export function probeOf(found: Outcome<ChangesPage>): Probe {
  if (found.ok) return "ok";
  const { code, category } = found.error.body;
  if (code === "invalid_cursor" || code === "cursor_expired") return "stale";
  if (category === "unauthorized") return "unauthorized";
  return "down";
}

export function headOf(found: Outcome<ChangesPage>): Head {
  if (found.ok) return { cursor: found.data.next_cursor };
  return probeOf(found) === "unauthorized" ? "unauthorized" : "down";
}

let feed: LiveFeed | null = null;

/** The feed, started on first use. */
export function liveFeed(): LiveFeed {
  if (!feed) {
    const started = new LiveFeed({
      open: (url) => new EventSource(url),
      // EventSource cannot send `Authorization`: with a token there is no stream.
      head: async () => (readToken() ? "unauthorized" : headOf(await changes.head())),
      probe: async (cursor) => probeOf(await changes.after(cursor)),
      setTimeout: (fn, ms) => setTimeout(fn, ms),
      clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    });
    addEventListener(TOKEN_CHANGED, () => started.retry());
    started.start();
    feed = started;
  }
  return feed;
}

export function useLiveState(): LiveState {
  const live = liveFeed();
  const [state, setState] = useState(live.state);
  useEffect(() => {
    setState(live.state);
    return live.watch(setState);
  }, [live]);
  return state;
}

/**
 * Calls `onChange` for each event `wanted` accepts, and `onResync` when events
 * may have been missed. The latest callbacks are used (no resubscribing per render).
 */
export function useChanges(
  wanted: (event: ChangeEvent) => boolean,
  onChange: (event: ChangeEvent) => void,
  onResync: () => void,
): void {
  const latest = useRef({ wanted, onChange, onResync });
  latest.current = { wanted, onChange, onResync };
  useEffect(() => {
    const live = liveFeed();
    const off = live.subscribe((e) => latest.current.wanted(e) && latest.current.onChange(e));
    const offResync = live.onResync(() => latest.current.onResync());
    return () => {
      off();
      offResync();
    };
  }, []);
}
