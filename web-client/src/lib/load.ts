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
