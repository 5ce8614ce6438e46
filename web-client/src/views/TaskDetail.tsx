// One task: its fields, claim and actions, and an editor that saves with
// `If-Match` (the task's `ETag`; `expected_version` when no tag is known). A
// `precondition_failed` or `version_conflict` shows the version the server has and
// offers to reload the task and reapply the fields this editor changed. Live:
// a change made elsewhere updates an untouched form in place, and an edited
// form says that its task changed before the user saves.
import { useEffect, useRef, useState } from "preact/hooks";
import { tasks } from "../api/calls";
import { etagOf } from "../api/client";
import type { ApiError } from "../api/errors";
import type { Priority, Task, TaskPatch } from "../api/types";
import { useLoad } from "../lib/load";
import { href } from "../lib/router";
import { useChanges } from "../lib/useLive";
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

/**
 * The edit of `base`: only the changed fields, guarded by the version it was
 * made from. With `tag` (the `ETag` `base` came with) the guard is the
 * `If-Match` header, so the body carries no `expected_version`.
 */
export function patchOf(base: Task, draft: Draft, tag?: string): TaskPatch {
  const patch: TaskPatch = tag ? {} : { expected_version: base.version };
  for (const f of changedFields(base, draft)) {
    if (f === "title") patch.title = draft.title.trim();
    if (f === "description") patch.description = draft.description;
    if (f === "tags") patch.tags = splitTags(draft.tags);
    if (f === "priority") patch.priority = draft.priority;
  }
  return patch;
}

/**
 * What to do with a fresh read of the task being edited: take it (the form is
 * untouched, or only claim and status moved), or keep the user's edits and
 * warn that the task is now `stale` (newer than the version being edited).
 */
export function liveUpdate(base: Task, draft: Draft, fresh: Task): "take" | "warn" | "ignore" {
  if (fresh.version < base.version) return "ignore";
  if (fresh.version === base.version) return "take";
  return changedFields(base, draft).length === 0 ? "take" : "warn";
}

/** The refusals of a write that met a newer version (`If-Match` or `expected_version`). */
export function isStaleWrite(e: ApiError): boolean {
  return e.body.code === "precondition_failed" || e.body.code === "version_conflict";
}

function currentVersionOf(e: ApiError): number | null {
  const v = e.body.details.current_version;
  return typeof v === "number" ? v : null;
}

/** What a user whose edits met a newer version can do: keep them on top of it, or drop them. */
function ReapplyOrDiscard(props: { reapply: () => void; discard: () => void; testid: string }) {
  return (
    <div class="row">
      <button type="button" onClick={props.reapply} data-testid={props.testid}>
        Reload and reapply my changes
      </button>
      <button type="button" class="secondary" onClick={props.discard}>
        Discard my changes
      </button>
    </div>
  );
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
  // A newer version saved elsewhere while this form holds edits.
  const [stale, setStale] = useState<Task | null>(null);
  const latest = useRef({ base, draft, saving });
  latest.current = { base, draft, saving };

  const follow = () => {
    void tasks.get(props.id).then((o) => {
      const now = latest.current;
      if (!o.ok || !now.base || !now.draft || now.saving) return;
      const update = liveUpdate(now.base, now.draft, o.data);
      if (update === "take") {
        if (o.data.version > now.base.version) setNotice(`Updated elsewhere: now version ${o.data.version}.`);
        setBase(o.data);
        if (o.data.version > now.base.version) setDraft(draftOf(o.data));
        setStale(null);
      } else if (update === "warn") setStale(o.data);
    });
  };
  useChanges((e) => e.entity.type === "task" && e.entity.id === base?.id, follow, follow);

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
    const tag = etagOf(base);
    void tasks.update(base.id, patchOf(base, draft, tag), tag).then((o) => {
      setSaving(false);
      if (o.ok) {
        setBase(o.data);
        setDraft(draftOf(o.data));
        setError(null);
        setConflict(null);
        setStale(null);
        setNotice(`Saved: version ${o.data.version}.`);
      } else if (isStaleWrite(o.error)) {
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
      setStale(null);
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
      setStale(null);
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
        {stale ? (
          <div class="stale" role="alert" data-testid="stale-task">
            <p>
              This task changed while you were editing: you are editing version <strong>{base.version}</strong>, it is
              now at version <strong data-testid="stale-version">{stale.version}</strong>
              {stale.status !== base.status ? ` and ${stale.status}` : ""}. Saving now would be refused.
            </p>
            <ReapplyOrDiscard reapply={reloadAndReapply} discard={discard} testid="stale-reapply" />
          </div>
        ) : null}
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
            <ReapplyOrDiscard reapply={reloadAndReapply} discard={discard} testid="reload-reapply" />
          </div>
        </ErrorPanel>
      ) : null}
      {error ? <ErrorPanel error={error} onRetry={() => save()} onDismiss={() => setError(null)} /> : null}
    </div>
  );
}
