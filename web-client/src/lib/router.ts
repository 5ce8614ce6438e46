// Hash routes (#/board, #/tasks/ID, #/notes/ID, #/search?q=...): they work the
// same under `cairn serve`, `vite dev` and a file server, with no fallback rules.
// A project other than `default` is a `#/p/KEY/` prefix (#/p/web/tasks/ID): a
// link names its project, and every URL from before projects existed still
// means what it meant, in `default`. A prefix rather than a `project=` query
// keeps each view's own query (`?q=`, `?depth=`) its own.
import { useEffect, useState } from "preact/hooks";

/** The project every server has; its routes are the ones without a prefix. */
export const DEFAULT_PROJECT = "default";

export interface Route {
  project: string;
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
  // No view is called `p`, so the prefix cannot be read as one.
  const project = parts[0] === "p" && parts[1] ? parts[1] : DEFAULT_PROJECT;
  return { project, parts: parts[0] === "p" ? parts.slice(2) : parts, query: new URLSearchParams(qs) };
}

/** The hash of `path` (a route without its leading `#/`) in `project`. */
export function projectHash(project: string, path: string): string {
  return project === DEFAULT_PROJECT ? `#/${path}` : `#/p/${encodeURIComponent(project)}/${path}`;
}

/** The project the page is on, as its URL says. */
export function currentProject(): string {
  return parseHash(location.hash).project;
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

/** The links of one project's pages. */
export function hrefsIn(project: string) {
  const at = (path: string) => projectHash(project, path);
  return {
    board: () => at("board"),
    task: (id: string) => at(`tasks/${encodeURIComponent(id)}`),
    notes: (q?: string) => at(q ? `notes?q=${encodeURIComponent(q)}` : "notes"),
    note: (id: string) => at(`notes/${encodeURIComponent(id)}`),
    noteEdit: (id: string) => at(`notes/${encodeURIComponent(id)}/edit`),
    newNote: (title?: string) => at(title ? `notes/new?title=${encodeURIComponent(title)}` : "notes/new"),
    noteResolve: (target: string) => at(`notes/resolve/${encodeURIComponent(target)}`),
    search: (q?: string) => at(q ? `search?q=${encodeURIComponent(q)}` : "search"),
    graph: (id: string) => at(`graph/${encodeURIComponent(id)}`),
    node: (kind: string, id: string) => at(`${kind === "note" ? "notes" : "tasks"}/${encodeURIComponent(id)}`),
  };
}

type Hrefs = ReturnType<typeof hrefsIn>;

const here = () => hrefsIn(currentProject());

/**
 * The links of the current project's pages. Each is worked out when called
 * (not once at load), so a link rendered after a switch names the new project.
 */
export const href: Hrefs = {
  board: () => here().board(),
  task: (id) => here().task(id),
  notes: (q) => here().notes(q),
  note: (id) => here().note(id),
  noteEdit: (id) => here().noteEdit(id),
  newNote: (title) => here().newNote(title),
  noteResolve: (target) => here().noteResolve(target),
  search: (q) => here().search(q),
  graph: (id) => here().graph(id),
  node: (kind, id) => here().node(kind, id),
};
