// One task: its fields, claim and actions, and an editor that saves with
// `expected_version`. A `version_conflict` shows the version the server has and
// offers to reload the task and reapply the fields this editor changed.
import { useEffect, useState } from "preact/hooks";
import { tasks } from "../api/calls";
import type { ApiError } from "../api/errors";
import type { Priority, Task, TaskPatch } from "../api/types";
import { useLoad } from "../lib/load";
import { href } from "../lib/router";
import { Loading, relative, splitTags, when } from "../ui/common";
import { ErrorPanel } from "../ui/ErrorPanel";
import { PrioritySelect, TaskActions } from "./Board";

interface Draft {
  title: string;
  description: string;
  tags: string;
  priority: Priority;
}

type Field = keyof Draft;
const FIELDS: Field[] = ["title", "description", "tags", "priority"];

function draftOf(t: Task): Draft {
  return {
    title: t.title,
    description: t.description ?? "",
    tags: t.tags.join(", "),
    priority: t.priority,
  };
}

/** Fields whose draft value differs from the task it was made from. */
export function changedFields(base: Task, draft: Draft): Field[] {
  const from = draftOf(base);
  return FIELDS.filter((f) =>
    f === "tags" ? splitTags(from.tags).join(",") !== splitTags(draft.tags).join(",") : from[f].trim() !== draft[f].trim(),
  );
}

export function patchOf(base: Task, draft: Draft): TaskPatch {
  const patch: TaskPatch = { expected_version: base.version };
  for (const f of changedFields(base, draft)) {
    if (f === "title") patch.title = draft.title.trim();
    if (f === "description") patch.description = draft.description;
    if (f === "tags") patch.tags = splitTags(draft.tags);
    if (f === "priority") patch.priority = draft.priority;
  }
  return patch;
}

function currentVersionOf(e: ApiError): number | null {
  const v = e.body.details.current_version;
  return typeof v === "number" ? v : null;
}

export function TaskDetail(props: { id: string }) {
  const loaded = useLoad(() => tasks.get(props.id), [props.id]);
  const [base, setBase] = useState<Task | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [conflict, setConflict] = useState<{ mine: number; current: number | null; error: ApiError } | null>(null);
  const [notice, setNotice] = useState("");
  const [actionError, setActionError] = useState<{ error: ApiError; retry: () => void } | null>(null);

  useEffect(() => {
    if (loaded.data && (!base || loaded.data.id !== base.id)) {
      setBase(loaded.data);
      setDraft(draftOf(loaded.data));
    }
  }, [loaded.data]);

  if (loaded.error && !base) return <ErrorPanel error={loaded.error} onRetry={loaded.reload} />;
  if (!base || !draft) return <Loading what="the task" />;

  const changed = changedFields(base, draft);

  const save = (e?: Event) => {
    e?.preventDefault();
    if (changed.length === 0) return;
    setSaving(true);
    setNotice("");
    void tasks.update(base.id, patchOf(base, draft)).then((o) => {
      setSaving(false);
      if (o.ok) {
        setBase(o.data);
        setDraft(draftOf(o.data));
        setError(null);
        setConflict(null);
        setNotice(`Saved: version ${o.data.version}.`);
      } else if (o.error.body.code === "version_conflict") {
        setConflict({ mine: base.version, current: currentVersionOf(o.error), error: o.error });
        setError(null);
      } else setError(o.error);
    });
  };

  const reloadAndReapply = () => {
    const mine = changedFields(base, draft);
    void tasks.get(base.id).then((o) => {
      if (!o.ok) return setError(o.error);
      const fresh = draftOf(o.data);
      const reapplied: Draft = { ...fresh };
      for (const f of mine) Object.assign(reapplied, { [f]: draft[f] });
      setBase(o.data);
      setDraft(reapplied);
      setConflict(null);
      setNotice(
        mine.length
          ? `Reloaded version ${o.data.version} and reapplied your changes to ${mine.join(", ")}. Review them and save.`
          : `Reloaded version ${o.data.version}.`,
      );
    });
  };

  const discard = () => {
    void tasks.get(base.id).then((o) => {
      if (!o.ok) return setError(o.error);
      setBase(o.data);
      setDraft(draftOf(o.data));
      setConflict(null);
      setNotice(`Reloaded version ${o.data.version}; your changes were discarded.`);
    });
  };

  const bind = (f: Field) => ({
    name: f,
    value: draft[f],
    onInput: (e: Event) => setDraft({ ...draft, [f]: (e.currentTarget as HTMLInputElement).value }),
  });

  return (
    <div class="view task-detail" data-testid="task-detail">
      <p class="crumbs">
        <a href={href.board()}>Board</a> / task <code>{base.id}</code>
      </p>
      <h1>{base.title}</h1>
      <dl class="facts">
        <dt>Status</dt>
        <dd data-testid="task-status">{base.status}</dd>
        <dt>Version</dt>
        <dd data-testid="task-version">{base.version}</dd>
        <dt>Updated</dt>
        <dd>{when(base.updated_at)}</dd>
        {base.claim ? (
          <>
            <dt>Claim</dt>
            <dd>
              {base.claim.holder}, expires {relative(base.claim.expires_at)} ({when(base.claim.expires_at)})
            </dd>
          </>
        ) : null}
      </dl>
      <div class="row">
        <TaskActions
          task={base}
          onDone={(t) => {
            setBase(t);
            setActionError(null);
            setNotice(`Task is now ${t.status}.`);
          }}
          onError={(f) => setActionError({ error: f.error, retry: f.retry })}
        />
        <a href={href.graph(base.id)}>Graph</a>
      </div>
      {actionError ? (
        <ErrorPanel error={actionError.error} onRetry={actionError.retry} onDismiss={() => setActionError(null)} />
      ) : null}

      <form class="editor" onSubmit={save} aria-label="Edit task">
        <label>
          <span>Title</span>
          <input {...bind("title")} data-testid="edit-title" required />
        </label>
        <label>
          <span>Description</span>
          <textarea {...bind("description")} rows={6} data-testid="edit-description" />
        </label>
        <label>
          <span>Tags</span>
          <input {...bind("tags")} placeholder="comma, separated" />
        </label>
        <label class="narrow">
          <span>Priority</span>
          <PrioritySelect value={draft.priority} onChange={(priority) => setDraft({ ...draft, priority })} />
        </label>
        <div class="row">
          <button type="submit" disabled={saving || changed.length === 0} data-testid="save-task">
            {saving ? "Saving…" : "Save"}
          </button>
          <span class="muted">
            editing version {base.version}
            {changed.length ? `; changed: ${changed.join(", ")}` : ""}
          </span>
        </div>
      </form>
      {notice ? (
        <p class="notice" role="status" data-testid="notice">
          {notice}
        </p>
      ) : null}
      {conflict ? (
        <ErrorPanel error={conflict.error}>
          <div class="conflict" data-testid="version-conflict">
            <p>
              Someone changed this task while you were editing. You edited version{" "}
              <strong data-testid="conflict-mine">{conflict.mine}</strong>; the task is now at version{" "}
              <strong data-testid="conflict-current">{conflict.current ?? "unknown"}</strong>. Nothing was saved.
            </p>
            <div class="row">
              <button type="button" onClick={reloadAndReapply} data-testid="reload-reapply">
                Reload and reapply my changes
              </button>
              <button type="button" class="secondary" onClick={discard}>
                Discard my changes
              </button>
            </div>
          </div>
        </ErrorPanel>
      ) : null}
      {error ? <ErrorPanel error={error} onRetry={() => save()} onDismiss={() => setError(null)} /> : null}
    </div>
  );
}
