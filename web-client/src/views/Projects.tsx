// Projects: the switcher in the header (the projects this token may use), a
// small form to create one, and the notice that the page's project is
// archived. The project itself lives in the URL (see lib/router.ts); choosing
// one navigates, and the page below the header starts over in it.
import { useEffect, useRef, useState } from "preact/hooks";
import { projects } from "../api/calls";
import type { ApiError } from "../api/errors";
import type { NewProject, Project } from "../api/types";
import { type Loaded, useLoad } from "../lib/load";
import { hrefsIn, navigate } from "../lib/router";
import { TOKEN_CHANGED } from "../lib/token";
import { ErrorPanel } from "../ui/ErrorPanel";

/** A project as the switcher lists it: its name, its key when that says more, and whether it is archived. */
export function projectLabel(p: Pick<Project, "key" | "name" | "archived">): string {
  const name = p.name.trim() || p.key;
  const named = name.toLowerCase() === p.key ? name : `${name} (${p.key})`;
  return p.archived ? `${named} — archived` : named;
}

/**
 * The project list, re-read when the page changes project (it may have been
 * archived or created elsewhere meanwhile) and when the token changes. A
 * re-read keeps the list shown until it answers.
 */
export function useProjects(project: string): Loaded<{ projects: Project[] }> {
  const list = useLoad(() => projects.list(), []);
  const first = useRef(true);
  useEffect(() => {
    if (first.current) first.current = false;
    else list.reload();
  }, [project]);
  useEffect(() => {
    addEventListener(TOKEN_CHANGED, list.reload);
    return () => removeEventListener(TOKEN_CHANGED, list.reload);
  }, [list.reload]);
  return list;
}

export function ProjectSwitcher(props: {
  project: string;
  list: Project[] | undefined;
  creating: boolean;
  onCreate: () => void;
}) {
  const { project, list } = props;
  // The page's project stays selectable while the list loads, and when the
  // server does not list it (unknown, or not this token's: the views say which).
  const known = list?.some((p) => p.key === project) ?? false;
  return (
    <div class="project-switcher">
      <label>
        <span>Project</span>
        <select
          data-testid="project-select"
          value={project}
          onChange={(e) => navigate(hrefsIn((e.currentTarget as HTMLSelectElement).value).board())}
        >
          {known ? null : <option value={project}>{list ? `${project} (not listed)` : project}</option>}
          {(list ?? []).map((p) => (
            <option key={p.key} value={p.key} data-archived={p.archived ? "true" : undefined}>
              {projectLabel(p)}
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        class="small secondary"
        data-testid="new-project"
        aria-expanded={props.creating}
        aria-controls="new-project-form"
        onClick={props.onCreate}
      >
        New project
      </button>
    </div>
  );
}

/** Creates a project; on success the page moves to it. Errors (`project_exists`, `permission_denied`) are the server's. */
export function NewProjectForm(props: { onCreated: (p: Project) => void; onCancel: () => void }) {
  const [key, setKey] = useState("");
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);

  const submit = (e?: Event) => {
    e?.preventDefault();
    const body: NewProject = { key: key.trim() };
    if (name.trim()) body.name = name.trim();
    setBusy(true);
    void projects.create(body).then((o) => {
      setBusy(false);
      if (!o.ok) return setError(o.error);
      setError(null);
      props.onCreated(o.data);
    });
  };

  return (
    <form id="new-project-form" class="new-project" onSubmit={submit} aria-label="New project">
      <label>
        <span>Key (lowercase letters, digits, -)</span>
        <input
          ref={first}
          name="key"
          data-testid="new-project-key"
          required
          maxLength={64}
          pattern="[a-z0-9\-]{1,64}"
          autocomplete="off"
          value={key}
          placeholder="e.g. web"
          onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <label class="grow">
        <span>Name</span>
        <input
          name="name"
          data-testid="new-project-name"
          value={name}
          placeholder="e.g. Web app"
          onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <button type="submit" data-testid="create-project" disabled={busy || !key.trim()}>
        {busy ? "Creating…" : "Create project"}
      </button>
      <button type="button" class="secondary" data-testid="cancel-new-project" onClick={props.onCancel}>
        Cancel
      </button>
      {error ? <ErrorPanel error={error} onRetry={() => submit()} onDismiss={() => setError(null)} /> : null}
    </form>
  );
}

/** Says that the page's project is archived: it reads as before, and each write is refused (`project_archived`). */
export function ArchivedNotice(props: { project: Project | undefined }) {
  const p = props.project;
  if (!p?.archived) return null;
  return (
    <p class="archived-notice" role="status" data-testid="project-archived">
      Project <strong>{projectLabel({ ...p, archived: false })}</strong> is archived: you can read everything in it, and
      every change is refused.
    </p>
  );
}
