// Notes: a paginated list, a reader (sanitized Markdown with [[links]]), an
// editor that handles `duplicate` and `slug_collision` by linking to the note
// that is already there, and the resolver behind a [[link]] the server did not resolve.
// The list follows the live feed.
import { useEffect, useState } from "preact/hooks";
import { notes } from "../api/calls";
import { etagOf, type Outcome } from "../api/client";
import type { ApiError } from "../api/errors";
import type { Note, NoteReplace } from "../api/types";
import { useLoad, usePages } from "../lib/load";
import { slugify } from "../lib/slug";
import { href, navigate } from "../lib/router";
import { useChanges } from "../lib/useLive";
import { Empty, Loading, MorePager, shortId, splitTags, when } from "../ui/common";
import { ErrorPanel } from "../ui/ErrorPanel";

export function NotesList(props: { q: string }) {
  const [q, setQ] = useState(props.q);
  const { first, items, more, loadingMore, moreError, refresh } = usePages(
    (cursor) => notes.list({ q: props.q || undefined, cursor, limit: 50 }),
    [props.q],
  );
  // Live: a note written or deleted anywhere re-reads the list in place.
  useChanges((e) => e.entity.type === "note", refresh, refresh);

  return (
    <div class="view notes-list">
      <div class="toolbar row">
        <form
          class="row"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            navigate(href.notes(q));
          }}
        >
          <label>
            <span>Filter notes</span>
            <input type="search" value={q} onInput={(e) => setQ((e.currentTarget as HTMLInputElement).value)} />
          </label>
          <button type="submit" class="secondary">
            Filter
          </button>
        </form>
        <a class="button" href={href.newNote()} data-testid="new-note">
          New note
        </a>
      </div>
      {first.error ? <ErrorPanel error={first.error} onRetry={first.reload} /> : null}
      {!first.data && first.loading ? <Loading what="notes" /> : null}
      {first.data && items.length === 0 ? <Empty>No notes{props.q ? ` match "${props.q}"` : " yet"}.</Empty> : null}
      <ul class="list">
        {items.map((n) => (
          <li key={n.id}>
            <a href={href.note(n.id)}>{n.title}</a> <code class="muted">{shortId(n.id)}</code>
            {n.tags.map((t) => (
              <span class="tag" key={t}>
                {t}
              </span>
            ))}
          </li>
        ))}
      </ul>
      {moreError ? <ErrorPanel error={moreError} onRetry={more ?? undefined} /> : null}
      {first.data ? (
        <MorePager shown={items.length} total={first.data.total}
          totalIsLowerBound={first.data.total_is_lower_bound}
          loading={loadingMore} onMore={more} />
      ) : null}
    </div>
  );
}

type MarkdownModule = typeof import("../lib/markdown");
let markdownModule: Promise<MarkdownModule> | null = null;

/** marked + DOMPurify load on the first note shown, keeping them out of the board's first load. */
function useMarkdown(): MarkdownModule | null {
  const [md, setMd] = useState<MarkdownModule | null>(null);
  useEffect(() => {
    let live = true;
    markdownModule ??= import("../lib/markdown");
    void markdownModule.then((m) => live && setMd(m));
    return () => {
      live = false;
    };
  }, []);
  return md;
}

export function NoteView(props: { id: string }) {
  const loaded = useLoad(() => notes.get(props.id), [props.id]);
  const md = useMarkdown();
  const [deleteError, setDeleteError] = useState<ApiError | null>(null);
  const note = loaded.data;
  if (loaded.error && !note) return <ErrorPanel error={loaded.error} onRetry={loaded.reload} />;
  if (!note || !md) return <Loading what="the note" />;

  const remove = () => {
    if (!confirm(`Delete "${note.title}"?`)) return;
    void notes.remove(note.id, note.version).then((o) => {
      if (o.ok) navigate(href.notes());
      else setDeleteError(o.error);
    });
  };

  return (
    <article class="view note-view" data-testid="note-view" data-note-id={note.id}>
      <p class="crumbs">
        <a href={href.notes()}>Notes</a> / <code>{shortId(note.id)}</code>
      </p>
      <h1 data-testid="note-title">{note.title}</h1>
      <p class="muted">
        version {note.version} · updated {when(note.updated_at)}
        {note.source_url ? (
          <>
            {" "}
            ·{" "}
            <a href={note.source_url} target="_blank" rel="noopener noreferrer">
              source
            </a>
          </>
        ) : null}
      </p>
      <div class="row">
        <a class="button" href={href.noteEdit(note.id)}>
          Edit
        </a>
        <a class="button secondary" href={href.graph(note.id)}>
          Graph
        </a>
        <button type="button" class="secondary" onClick={remove}>
          Delete
        </button>
      </div>
      {deleteError ? <ErrorPanel error={deleteError} onRetry={remove} onDismiss={() => setDeleteError(null)} /> : null}
      {/* renderMarkdown sanitizes with DOMPurify; [[links]] go to the notes the server resolved. */}
      <div
        class="markdown"
        data-testid="note-body"
        dangerouslySetInnerHTML={{ __html: md.renderMarkdown(note.content, note) }}
      />
      {note.tags.length ? (
        <p>
          {note.tags.map((t) => (
            <span class="tag" key={t}>
              {t}
            </span>
          ))}
        </p>
      ) : null}
    </article>
  );
}

/** Which note the existing-note conflict points at, if the error names one. */
export function existingNoteOf(e: ApiError): { id: string; title: string | null } | null {
  const d = e.body.details;
  if (e.body.code === "duplicate" && d.duplicate_of && typeof d.duplicate_of === "object") {
    const dup = d.duplicate_of as { id?: unknown; title?: unknown };
    if (typeof dup.id === "string") return { id: dup.id, title: typeof dup.title === "string" ? dup.title : null };
  }
  if (e.body.code === "slug_collision" && typeof d.existing_id === "string") return { id: d.existing_id, title: null };
  return null;
}

/** A link to a note named only by id in an error: its title is fetched to show. */
function ExistingNoteLink(props: { id: string; title: string | null }) {
  const fetched = useLoad(() => (props.title ? null : notes.get(props.id)), [props.id, props.title]);
  return <a href={href.note(props.id)}>{props.title ?? fetched.data?.title ?? shortId(props.id)}</a>;
}

export function NoteEditor(props: { id?: string; title?: string }) {
  const editing = props.id !== undefined;
  const loaded = useLoad(() => (props.id !== undefined ? notes.get(props.id) : null), [props.id]);
  const [form, setForm] = useState({ title: props.title ?? "", content: "", tags: "", source_url: "" });
  const [version, setVersion] = useState<number | undefined>(undefined);
  // The `ETag` of the version being edited: the replace is sent with `If-Match`.
  const [tag, setTag] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);

  useEffect(() => {
    const n = loaded.data;
    if (n) {
      setForm({ title: n.title, content: n.content, tags: n.tags.join(", "), source_url: n.source_url ?? "" });
      setVersion(n.version);
      setTag(etagOf(n));
    }
  }, [loaded.data]);

  if (editing && loaded.error && !loaded.data) return <ErrorPanel error={loaded.error} onRetry={loaded.reload} />;
  if (editing && !loaded.data) return <Loading what="the note" />;

  const submit = (e?: Event) => {
    e?.preventDefault();
    setBusy(true);
    const body: NoteReplace = { title: form.title.trim(), content: form.content };
    if (form.tags.trim()) body.tags = splitTags(form.tags);
    if (form.source_url.trim()) body.source_url = form.source_url.trim();
    // The note's `ETag` guards the replace (`If-Match`); without one, the version read.
    if (editing && version !== undefined && !tag) body.expected_version = version;
    const { expected_version: _, ...created } = body;
    void (editing ? notes.update(props.id as string, body, tag) : notes.create(created)).then((o) => {
      setBusy(false);
      if (o.ok) navigate(href.note(o.data.id));
      else setError(o.error);
    });
  };

  const bind = (f: keyof typeof form) => ({
    name: f,
    value: form[f],
    onInput: (e: Event) => setForm({ ...form, [f]: (e.currentTarget as HTMLInputElement).value }),
  });
  const existing = error ? existingNoteOf(error) : null;
  const stale = error?.body.code === "version_conflict" || error?.body.code === "precondition_failed";
  const current = stale ? error?.body.details.current_version : undefined;

  return (
    <div class="view note-editor">
      <h1>{editing ? "Edit note" : "New note"}</h1>
      <form class="editor" onSubmit={submit} aria-label={editing ? "Edit note" : "New note"}>
        <label>
          <span>Title</span>
          <input {...bind("title")} required data-testid="note-title-input" />
        </label>
        <label>
          <span>Content (Markdown; [[Title]] links another note)</span>
          <textarea {...bind("content")} rows={14} required data-testid="note-content-input" />
        </label>
        <label>
          <span>Tags</span>
          <input {...bind("tags")} placeholder="comma, separated" />
        </label>
        <label>
          <span>Source URL</span>
          <input {...bind("source_url")} type="url" />
        </label>
        <div class="row">
          <button type="submit" disabled={busy || !form.title.trim()} data-testid="save-note">
            {busy ? "Saving…" : "Save"}
          </button>
          {editing ? <a href={href.note(props.id as string)}>Cancel</a> : <a href={href.notes()}>Cancel</a>}
        </div>
      </form>
      {error ? (
        <ErrorPanel error={error} onRetry={() => submit()} onDismiss={() => setError(null)}>
          {existing ? (
            <p data-testid="existing-note">
              {error.body.code === "duplicate" ? "The same note already exists: " : "A note with this title's slug exists: "}
              <ExistingNoteLink id={existing.id} title={existing.title} />
            </p>
          ) : null}
          {typeof current === "number" ? (
            <p>
              The note is now at version {current}.{" "}
              <button
                type="button"
                class="small"
                onClick={() => {
                  const now = error.body.details.current_etag;
                  setVersion(current);
                  setTag(typeof now === "string" ? now : undefined);
                  setError(null);
                }}
              >
                Overwrite it with my text
              </button>
            </p>
          ) : null}
        </ErrorPanel>
      ) : null}
    </div>
  );
}

/** Codes that mean "no note has this slug" when a [[target]] is looked up as a note key. */
const NO_SUCH_NOTE: readonly string[] = ["note_not_found", "id_prefix_too_short", "ambiguous_id_prefix"];

/**
 * What looking up a [[target]] by its slug found: the note, none (offer to
 * create it), or a failure to show. A note reached by an id prefix instead of
 * the slug is not the one the link names.
 */
export function resolution(target: string, found: Outcome<Note>): { id: string } | "missing" | { error: ApiError } {
  if (found.ok) return found.data.slug === slugify(target) ? { id: found.data.id } : "missing";
  return NO_SUCH_NOTE.includes(found.error.body.code) ? "missing" : { error: found.error };
}

/**
 * Finds the note a [[target]] names, for links the note view could not point
 * at directly (the server resolves links on read): reads it by slug, and offers
 * to create it when there is none.
 */
export function NoteResolve(props: { target: string }) {
  const [state, setState] = useState<{ error?: ApiError; missing?: boolean }>({});
  useEffect(() => {
    let live = true;
    const slug = slugify(props.target);
    void (slug ? notes.get(slug) : Promise.resolve(null)).then((found) => {
      if (!live) return;
      const r = found ? resolution(props.target, found) : "missing";
      if (r === "missing") setState({ missing: true });
      else if ("error" in r) setState({ error: r.error });
      else navigate(href.note(r.id), { replace: true });
    });
    return () => {
      live = false;
    };
  }, [props.target]);

  if (state.error) return <ErrorPanel error={state.error} onRetry={() => location.reload()} />;
  if (state.missing)
    return (
      <div class="view">
        <Empty>
          No note is called "{props.target}". <a href={href.newNote(props.target)}>Create it</a>
        </Empty>
      </div>
    );
  return <Loading what={`"${props.target}"`} />;
}
