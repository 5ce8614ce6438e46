// A hook that runs an API call and keeps its last data while reloading, so a
// refresh after an action does not flash a loading state.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { Outcome } from "../api/client";
import type { ApiError } from "../api/errors";

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload: () => void;
  setData: (update: (prev: T | undefined) => T | undefined) => void;
}

/** `load` may return null: nothing to load (yet), no loading state. */
export function useLoad<T>(load: () => Promise<Outcome<T>> | null, deps: unknown[]): Loaded<T> {
  const [data, setDataState] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const generation = useRef(0);
  const depsKey = JSON.stringify(deps);
  const lastKey = useRef(depsKey);

  useEffect(() => {
    const mine = ++generation.current;
    if (lastKey.current !== depsKey) {
      lastKey.current = depsKey;
      setDataState(undefined);
    }
    const pending = load();
    if (!pending) {
      setLoading(false);
      setError(undefined);
      return;
    }
    setLoading(true);
    void pending.then((outcome) => {
      if (mine !== generation.current) return;
      setLoading(false);
      if (outcome.ok) {
        setDataState(outcome.data);
        setError(undefined);
      } else {
        setError(outcome.error);
      }
    });
  }, [depsKey, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  const setData = useCallback((update: (prev: T | undefined) => T | undefined) => setDataState(update), []);
  return { data, error, loading, reload, setData };
}

/** One page of a cursor-paginated listing, as every list route answers. */
export interface Page<T> {
  items: T[];
  next_cursor?: string | null;
  total: number;
  /** True when the server stopped counting at its cap: `total` is a lower bound. */
  total_is_lower_bound: boolean;
}

export interface Pages<T> {
  /** The first page (its error, loading state and reload). */
  first: Loaded<Page<T>>;
  /** Every item loaded so far, first page included. */
  items: T[];
  /** Loads the next page; null when there is none. */
  more: (() => void) | null;
  loadingMore: boolean;
  moreError: ApiError | null;
  /** Re-reads the first page in place (what is shown stays until it answers); later pages are dropped. */
  refresh: () => void;
}

/**
 * A cursor-paginated listing: the first page through `useLoad`, further pages
 * appended on `more()`. `fetch(cursor)` loads one page (null: nothing to load).
 */
export function usePages<T>(
  fetch: (cursor?: string) => Promise<Outcome<Page<T>>> | null,
  deps: unknown[],
): Pages<T> {
  const first = useLoad(() => fetch(), deps);
  const [extra, setExtra] = useState<{ items: T[]; next: string | null | undefined } | null>(null);
  const [moreError, setMoreError] = useState<ApiError | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const depsKey = JSON.stringify(deps);
  useEffect(() => {
    setExtra(null);
    setMoreError(null);
  }, [depsKey]);

  const next = extra ? extra.next : first.data?.next_cursor;
  const more = () => {
    const pending = next ? fetch(next) : null;
    if (!pending) return;
    setLoadingMore(true);
    void pending.then((o) => {
      setLoadingMore(false);
      if (!o.ok) return setMoreError(o.error);
      setMoreError(null);
      setExtra((e) => ({ items: [...(e?.items ?? []), ...o.data.items], next: o.data.next_cursor }));
    });
  };
  const refresh = () => {
    setExtra(null);
    setMoreError(null);
    first.reload();
  };
  const items = [...(first.data?.items ?? []), ...(extra?.items ?? [])];
  return { first, items, more: next ? more : null, loadingMore, moreError, refresh };
}
