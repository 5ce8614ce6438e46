// Hash routes (#/board, #/tasks/ID, #/notes/ID, #/search?q=...): they work the
// same under `cairn serve`, `vite dev` and a file server, with no fallback rules.
import { useEffect, useState } from "preact/hooks";

export interface Route {
  parts: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, "");
  const [path = "", qs = ""] = raw.split("?", 2);
  const parts = path
    .split("/")
    .filter(Boolean)
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  return { parts, query: new URLSearchParams(qs) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

export function navigate(hash: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, "", hash);
  else location.hash = hash;
  if (opts.replace) dispatchEvent(new HashChangeEvent("hashchange"));
}

export const href = {
  board: () => "#/board",
  task: (id: string) => `#/tasks/${encodeURIComponent(id)}`,
  notes: () => "#/notes",
  note: (id: string) => `#/notes/${encodeURIComponent(id)}`,
  noteEdit: (id: string) => `#/notes/${encodeURIComponent(id)}/edit`,
  newNote: (title?: string) => (title ? `#/notes/new?title=${encodeURIComponent(title)}` : "#/notes/new"),
  search: (q?: string) => (q ? `#/search?q=${encodeURIComponent(q)}` : "#/search"),
  graph: (id: string) => `#/graph/${encodeURIComponent(id)}`,
  node: (kind: string, id: string) => (kind === "note" ? `#/notes/${encodeURIComponent(id)}` : `#/tasks/${encodeURIComponent(id)}`),
};
