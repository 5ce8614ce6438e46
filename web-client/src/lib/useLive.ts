// The page's live feed (one, for the project the page is on), wired to the
// server, and the hooks views use: `useLiveState` for the status line, `useChanges` to hear about changes to
// what a view shows (and to re-read it after a resync).
import { useEffect, useRef, useState } from "preact/hooks";
import { callsIn, eventsUrl } from "../api/calls";
import { api, type Outcome } from "../api/client";
import type { ChangeEvent, ChangesPage } from "../api/types";
import { type Head, LiveFeed, type LiveState, type Probe } from "./live";
import { currentProject } from "./router";
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

/** The feed of the project the page is on (`project`), if one was started. */
let feed: { project: string; live: LiveFeed } | null = null;

// One listener for the page: a new token is tried on whichever feed is current.
let tokenWatched = false;

/**
 * The feed of the page's project, started on first use. After a switch of
 * project the old feed stops (its views are gone) and the new project's starts.
 */
export function liveFeed(): LiveFeed {
  const project = currentProject();
  if (feed?.project === project) return feed.live;
  feed?.live.stop();
  // Bound to this project, so a late answer cannot steer it to another one's stream.
  const calls = callsIn(api, () => project);
  const started = new LiveFeed({
    url: (cursor) => eventsUrl(project, cursor),
    open: (url) => new EventSource(url),
    // EventSource cannot send `Authorization`: with a token there is no stream.
    head: async () => (readToken() ? "unauthorized" : headOf(await calls.changes.head())),
    probe: async (cursor) => probeOf(await calls.changes.after(cursor)),
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  });
  if (!tokenWatched) {
    tokenWatched = true;
    addEventListener(TOKEN_CHANGED, () => feed?.live.retry());
  }
  started.start();
  feed = { project, live: started };
  return started;
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
