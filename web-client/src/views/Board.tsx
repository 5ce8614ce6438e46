// The task board: four columns, cards with their claim, and the task actions.
// Arrow keys move between cards (up/down in a column, left/right across),
// Enter opens a card.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { tasks } from "../api/calls";
import type { Outcome } from "../api/client";
import type { ApiError } from "../api/errors";
import type { Board, BoardColumn, BoardQuery, NewTask, Priority, Task, TaskStatus } from "../api/types";
import { useAgent } from "../lib/agent";
import { type Loaded, useLoad } from "../lib/load";
import { href, navigate } from "../lib/router";
import { useChanges } from "../lib/useLive";
import { countText, Empty, Loading, MorePager, relative, shortId, splitTags, when } from "../ui/common";
import { ErrorPanel } from "../ui/ErrorPanel";

const TITLES: Record<TaskStatus, string> = {
  open: "Open",
  claimed: "Claimed",
  done: "Done",
  cancelled: "Cancelled",
};

interface Failed {
  what: string;
  error: ApiError;
  retry: () => void;
}

export type TaskAction = "claim" | "renew" | "release" | "complete" | "cancel" | "reopen";

/** The actions a task in `status` offers to `agent`. */
export function actionsFor(task: Task, agent: string): TaskAction[] {
  switch (task.status) {
    case "open":
      return ["claim", "complete", "cancel"];
    case "claimed":
      return task.claim?.holder === agent && agent
        ? ["renew", "release", "complete", "cancel"]
        : ["claim", "complete", "cancel"];
    case "done":
    case "cancelled":
      return ["reopen"];
    default:
      return [];
  }
}

const LABEL: Record<TaskAction, string> = {
  claim: "Claim",
  renew: "Renew",
  release: "Release",
  complete: "Complete",
  cancel: "Cancel",
  reopen: "Reopen",
};

/** The status an action leaves a task in when it succeeds. */
export const STATUS_AFTER: Record<TaskAction, TaskStatus> = {
  claim: "claimed",
  renew: "claimed",
  release: "open",
  complete: "done",
  cancel: "cancelled",
  reopen: "open",
};

export function runTaskAction(action: TaskAction, id: string, agent: string): Promise<Outcome<Task>> {
  switch (action) {
    case "claim":
      return tasks.claim(id, agent);
    case "renew":
      return tasks.renew(id, agent);
    case "release":
      return tasks.release(id, agent);
    case "complete":
      return tasks.complete(id, agent || undefined);
    case "cancel":
      return tasks.cancel(id, agent || undefined);
    case "reopen":
      return tasks.reopen(id, agent || undefined);
  }
}

export const PRIORITIES: Priority[] = ["low", "normal", "high", "urgent"];

export function PrioritySelect(props: { value: Priority; onChange: (p: Priority) => void; name?: string }) {
  return (
    <select
      name={props.name ?? "priority"}
      value={props.value}
      onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value as Priority)}
    >
      {PRIORITIES.map((p) => (
        <option key={p} value={p}>
          {p}
        </option>
      ))}
    </select>
  );
}

export function AgentInput() {
  const [agent, setAgent] = useAgent();
  return (
    <label class="agent-input">
      <span>Agent name</span>
      <input
        id="agent-name"
        data-testid="agent-name"
        value={agent}
        placeholder="e.g. alice"
        autocomplete="off"
        onInput={(e) => setAgent((e.currentTarget as HTMLInputElement).value.trim())}
      />
    </label>
  );
}

export function TaskActions(props: {
  task: Task;
  /** Called as the action is sent (the live board must know the move is this page's own). */
  onStart?: (task: Task, action: TaskAction) => void;
  onDone: (task: Task, action: TaskAction) => void;
  onError: (f: Failed) => void;
}) {
  const [agent] = useAgent();
  const [busy, setBusy] = useState<TaskAction | null>(null);
  const { task } = props;

  const act = (action: TaskAction) => {
    if ((action === "claim" || action === "renew" || action === "release") && !agent) {
      document.getElementById("agent-name")?.focus();
      props.onError({
        what: `${LABEL[action]} "${task.title}"`,
        error: {
          status: 0,
          body: {
            category: "validation",
            code: "missing_field",
            message: "Type an agent name first: claims are held by a named agent.",
            retryable: false,
            request_id: "client-side",
            details: { field: "agent" },
            suggestions: [],
          },
        },
        retry: () => act(action),
      });
      return;
    }
    setBusy(action);
    props.onStart?.(task, action);
    void runTaskAction(action, task.id, agent).then((o) => {
      setBusy(null);
      if (o.ok) props.onDone(o.data, action);
      else props.onError({ what: `${LABEL[action]} "${task.title}"`, error: o.error, retry: () => act(action) });
    });
  };

  return (
    <div class="card-actions">
      {actionsFor(task, agent).map((a) => (
        <button
          type="button"
          key={a}
          class={`small action-${a}`}
          data-action={a}
          disabled={busy !== null}
          aria-label={`${LABEL[a]} ${task.title}`}
          onClick={(e) => {
            e.stopPropagation();
            act(a);
          }}
        >
          {busy === a ? "…" : LABEL[a]}
        </button>
      ))}
    </div>
  );
}

function Card(props: { task: Task; col: number; row: number; moved: boolean; children: ComponentChildren }) {
  const { task } = props;
  return (
    <li
      class={`card status-${task.status}${props.moved ? " moved" : ""}`}
      data-moved={props.moved ? "true" : undefined}
      tabIndex={0}
      data-col={props.col}
      data-row={props.row}
      data-task-id={task.id}
      data-testid="task-card"
      aria-label={`${task.title}, ${task.status}${task.claim ? `, claimed by ${task.claim.holder}` : ""}`}
      onKeyDown={(e) => {
        if (e.target === e.currentTarget && e.key === "Enter") navigate(href.task(task.id));
      }}
    >
      <a class="card-title" href={href.task(task.id)} tabIndex={-1}>
        {task.title}
      </a>
      <div class="card-meta">
        <code title={task.id}>{shortId(task.id)}</code>
        {task.priority !== "normal" ? <span class={`badge priority-${task.priority}`}>{task.priority}</span> : null}
        {task.tags.map((t) => (
          <span class="tag" key={t}>
            {t}
          </span>
        ))}
      </div>
      {task.claim ? (
        <p class="claim" data-testid="claim">
          <span>
            held by <strong>{task.claim.holder}</strong>
          </span>{" "}
          <span class="muted" title={when(task.claim.expires_at)}>
            expires {relative(task.claim.expires_at)}
          </span>
        </p>
      ) : null}
      {props.children}
    </li>
  );
}

/** Moves focus between cards with the arrow keys. */
function onBoardKey(e: KeyboardEvent) {
  const card = (e.target as HTMLElement).closest<HTMLElement>("li.card");
  if (!card || e.target !== card) return;
  const col = Number(card.dataset.col);
  const row = Number(card.dataset.row);
  const board = e.currentTarget as HTMLElement;
  const find = (c: number, r: number) => board.querySelector<HTMLElement>(`li.card[data-col="${c}"][data-row="${r}"]`);
  let next: HTMLElement | null = null;
  if (e.key === "ArrowDown") next = find(col, row + 1);
  else if (e.key === "ArrowUp") next = find(col, row - 1);
  else if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
    const step = e.key === "ArrowRight" ? 1 : -1;
    for (let c = col + step; c >= 0 && c < 4 && !next; c += step) {
      const cards = board.querySelectorAll<HTMLElement>(`li.card[data-col="${c}"]`);
      if (cards.length) next = find(c, Math.min(row, cards.length - 1));
    }
  } else if (e.key === "Home") next = find(col, 0);
  else if (e.key === "End") {
    const cards = board.querySelectorAll<HTMLElement>(`li.card[data-col="${col}"]`);
    next = cards[cards.length - 1] ?? null;
  }
  if (next) {
    e.preventDefault();
    next.focus();
  }
}

function NewTaskForm(props: { onCreated: (t: Task) => void }) {
  const [title, setTitle] = useState("");
  const [tags, setTags] = useState("");
  const [priority, setPriority] = useState<Priority>("normal");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);

  const submit = (e?: Event) => {
    e?.preventDefault();
    if (!title.trim()) return;
    setBusy(true);
    const body: NewTask = { title: title.trim(), priority };
    if (tags.trim()) body.tags = splitTags(tags);
    void tasks.create(body).then((o) => {
      setBusy(false);
      if (o.ok) {
        setError(null);
        setTitle("");
        setTags("");
        setPriority("normal");
        props.onCreated(o.data);
      } else setError(o.error);
    });
  };

  return (
    <form class="new-task" onSubmit={submit} aria-label="New task">
      <label>
        <span>New task</span>
        <input
          name="title"
          data-testid="new-task-title"
          required
          value={title}
          placeholder="What needs doing?"
          onInput={(e) => setTitle((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <label>
        <span>Tags</span>
        <input
          name="tags"
          value={tags}
          placeholder="comma, separated"
          onInput={(e) => setTags((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <label class="narrow">
        <span>Priority</span>
        <PrioritySelect value={priority} onChange={setPriority} />
      </label>
      <button type="submit" disabled={busy || !title.trim()} data-testid="create-task">
        {busy ? "Creating…" : "Create"}
      </button>
      {error ? <ErrorPanel error={error} onRetry={() => submit()} onDismiss={() => setError(null)} /> : null}
    </form>
  );
}

/** The board query for the next page of one column: only that column is asked for. */
export function columnPageQuery(status: TaskStatus, cursor: string): BoardQuery {
  const query: BoardQuery = { columns: [status] };
  query[`${status}_cursor`] = cursor;
  return query;
}

interface More {
  items: Task[];
  next_cursor: string | null | undefined;
  loading: boolean;
}

/** Cards per column to re-read: at least a page, and as many as the longest column shows. */
export function rereadLimit(board: Board | undefined, more: Partial<Record<TaskStatus, More>>): number {
  const shown = (board?.columns ?? []).map((c) => c.items.length + (more[c.status]?.items.length ?? 0));
  return Math.min(500, Math.max(50, ...shown));
}

/**
 * Cards shown in both boards whose column changed, except moves this page
 * made itself (`own`: id to the status its action left the task in).
 */
export function movedCards(prev: Board, next: Board, own: ReadonlyMap<string, TaskStatus>): Task[] {
  const was = new Map<string, TaskStatus>();
  for (const col of prev.columns) for (const t of col.items) was.set(t.id, col.status);
  const moved: Task[] = [];
  for (const col of next.columns) {
    for (const t of col.items) {
      const before = was.get(t.id);
      if (before !== undefined && before !== col.status && own.get(t.id) !== col.status) moved.push(t);
    }
  }
  return moved;
}

/** How long a card moved by someone else stays highlighted. */
const HIGHLIGHT_MS = 2500;
/** How long this page's own action is remembered as its own (not highlighted). */
const OWN_MS = 5000;

/**
 * Keeps the board current from the live feed: each task event (or a resync)
 * re-reads it, one read at a time, and highlights cards others moved.
 */
function useLiveBoard(
  board: Loaded<Board>,
  more: Partial<Record<TaskStatus, More>>,
  setMore: (m: Partial<Record<TaskStatus, More>>) => void,
  announce: (text: string) => void,
) {
  const [moved, setMoved] = useState<ReadonlySet<string>>(new Set());
  const own = useRef(new Map<string, TaskStatus>());
  const reading = useRef<"idle" | "busy" | "again">("idle");
  const current = useRef({ board, more });
  current.current = { board, more };
  useEffect(() => {
    if (moved.size === 0) return;
    const t = setTimeout(() => setMoved(new Set()), HIGHLIGHT_MS);
    return () => clearTimeout(t);
  }, [moved]);

  const reread = () => {
    if (reading.current !== "idle") {
      reading.current = "again";
      return;
    }
    reading.current = "busy";
    const { board: b, more: m } = current.current;
    void tasks.board({ limit: rereadLimit(b.data, m) }).then((o) => {
      const again = reading.current === "again";
      reading.current = "idle";
      if (o.ok) {
        const prev = current.current.board.data;
        const shifted = prev ? movedCards(prev, o.data, own.current) : [];
        setMore({});
        board.setData(() => o.data);
        if (shifted.length) {
          setMoved(new Set(shifted.map((t) => t.id)));
          announce(shifted.map((t) => `"${t.title}" moved to ${t.status}`).join("; "));
        }
      }
      if (again) reread();
    });
  };
  useChanges((e) => e.entity.type === "task", reread, reread);

  /** Marks a move this page makes, so it is not highlighted as someone else's. */
  const mine = (id: string, status: TaskStatus) => {
    own.current.set(id, status);
    setTimeout(() => {
      if (own.current.get(id) === status) own.current.delete(id);
    }, OWN_MS);
  };
  return { moved, mine };
}

export function BoardView() {
  const board = useLoad(() => tasks.board(), []);
  const [failed, setFailed] = useState<Failed | null>(null);
  const [more, setMore] = useState<Partial<Record<TaskStatus, More>>>({});
  const [announce, setAnnounce] = useState("");
  // After an action the card may change columns; keep keyboard focus on it.
  const [focusAfter, setFocusAfter] = useState<{ id: string; stale: unknown } | null>(null);
  useEffect(() => {
    if (!focusAfter || board.loading || board.data === focusAfter.stale) return;
    document.querySelector<HTMLElement>(`li.card[data-task-id="${CSS.escape(focusAfter.id)}"]`)?.focus();
    setFocusAfter(null);
  }, [board.data, board.loading, focusAfter]);

  const refresh = () => {
    setMore({});
    board.reload();
  };
  const live = useLiveBoard(board, more, setMore, setAnnounce);

  const loadMore = (col: BoardColumn) => {
    const have = more[col.status];
    const cursor = have ? have.next_cursor : col.next_cursor;
    if (!cursor) return;
    setMore((m) => ({ ...m, [col.status]: { items: have?.items ?? [], next_cursor: cursor, loading: true } }));
    void tasks.board(columnPageQuery(col.status, cursor)).then((o) => {
      if (!o.ok) {
        setMore((m) => ({ ...m, [col.status]: { ...(m[col.status] as More), loading: false } }));
        setFailed({ what: `Loading more ${col.status} tasks`, error: o.error, retry: () => loadMore(col) });
        return;
      }
      const page = o.data.columns.find((c) => c.status === col.status);
      setMore((m) => ({
        ...m,
        [col.status]: {
          items: [...(m[col.status]?.items ?? []), ...(page?.items ?? [])],
          next_cursor: page?.next_cursor ?? null,
          loading: false,
        },
      }));
    });
  };

  return (
    <div class="view board-view">
      <div class="toolbar">
        <NewTaskForm
          onCreated={(t) => {
            setAnnounce(`Created "${t.title}"`);
            refresh();
          }}
        />
      </div>
      <p class="sr-only" role="status" aria-live="polite">
        {announce}
      </p>
      {failed ? (
        <ErrorPanel
          error={failed.error}
          onRetry={() => {
            const r = failed.retry;
            setFailed(null);
            r();
          }}
          onDismiss={() => setFailed(null)}
        >
          <p class="muted">While trying to: {failed.what}</p>
        </ErrorPanel>
      ) : null}
      {board.error ? <ErrorPanel error={board.error} onRetry={board.reload} /> : null}
      {!board.data && board.loading ? <Loading what="the board" /> : null}
      {board.data ? (
        <div
          class="board"
          onKeyDown={onBoardKey}
          data-testid="board"
          aria-busy={board.loading}
          aria-describedby="board-keys"
        >
          <p id="board-keys" class="sr-only">
            Arrow keys move between cards, Home and End jump within a column, Enter opens a card.
          </p>
          {board.data.columns.map((col, ci) => {
            const extra = more[col.status];
            const items = [...col.items, ...(extra?.items ?? [])];
            const cursor = extra ? extra.next_cursor : col.next_cursor;
            return (
              <section class="column" key={col.status} data-status={col.status} aria-labelledby={`col-${col.status}`}>
                <h2 id={`col-${col.status}`}>
                  {TITLES[col.status] ?? col.status} <span class="count">{countText(col.total, col.total_is_lower_bound)}</span>
                </h2>
                {items.length === 0 ? <Empty>No {col.status} tasks.</Empty> : null}
                <ul class="cards">
                  {items.map((t, ri) => (
                    <Card task={t} col={ci} row={ri} key={t.id} moved={live.moved.has(t.id)}>
                      <TaskActions
                        task={t}
                        onStart={(task, action) => live.mine(task.id, STATUS_AFTER[action])}
                        onDone={(task, action) => {
                          setAnnounce(`${LABEL[action]}: "${task.title}" is now ${task.status}`);
                          setFailed(null);
                          setFocusAfter({ id: task.id, stale: board.data });
                          refresh();
                        }}
                        onError={setFailed}
                      />
                    </Card>
                  ))}
                </ul>
                {col.total > col.items.length ? (
                  <MorePager
                    shown={items.length}
                    total={col.total}
                    totalIsLowerBound={col.total_is_lower_bound}
                    loading={extra?.loading ?? false}
                    onMore={cursor ? () => loadMore(col) : null}
                  />
                ) : null}
              </section>
            );
          })}
        </div>
      ) : null}
    </div>
  );
}
