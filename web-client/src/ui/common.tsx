// Small shared pieces: loading and empty states, a "load more" pager, times.
import type { ComponentChildren } from "preact";

export function Loading(props: { what?: string }) {
  return (
    <p class="loading" role="status" aria-live="polite" data-testid="loading">
      Loading{props.what ? ` ${props.what}` : ""}…
    </p>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return (
    <p class="empty" data-testid="empty">
      {props.children}
    </p>
  );
}

/** A total as the server counted it: `1000+` when counting stopped at its cap. */
export function countText(total: number, lowerBound: boolean): string {
  return lowerBound ? `${total}+` : String(total);
}

export function MorePager(props: {
  shown: number;
  total: number;
  totalIsLowerBound: boolean;
  loading: boolean;
  onMore: (() => void) | null;
}) {
  return (
    <div class="pager">
      <span class="muted">
        {props.shown} of {countText(props.total, props.totalIsLowerBound)}
      </span>
      {props.onMore ? (
        <button type="button" class="secondary" disabled={props.loading} onClick={props.onMore}>
          {props.loading ? "Loading…" : "Load more"}
        </button>
      ) : null}
    </div>
  );
}

export function shortId(id: string): string {
  return id.slice(0, 8);
}

export function when(iso: string | null | undefined): string {
  if (!iso) return "";
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toLocaleString();
}

/** "in 12 min" / "3 min ago" */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const mins = Math.round((t - now) / 60000);
  if (mins === 0) return "now";
  return mins > 0 ? `in ${mins} min` : `${-mins} min ago`;
}

export function splitTags(s: string): string[] {
  return s
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
}
