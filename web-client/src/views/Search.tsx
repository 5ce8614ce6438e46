// Full-text search over tasks and notes. Snippets are split on their
// <mark> markers and rendered as text, so nothing in them is ever markup.
import { useEffect, useState } from "preact/hooks";
import { search } from "../api/calls";
import { usePages } from "../lib/load";
import { href, navigate } from "../lib/router";
import { parseSnippet } from "../lib/snippet";
import { Empty, Loading, MorePager } from "../ui/common";
import { ErrorPanel } from "../ui/ErrorPanel";

export function Snippet(props: { text: string }) {
  return (
    <span class="snippet" data-testid="snippet">
      {parseSnippet(props.text).map((p, i) => (p.marked ? <mark key={i}>{p.text}</mark> : p.text))}
    </span>
  );
}

export function SearchView(props: { q: string }) {
  const [q, setQ] = useState(props.q);
  useEffect(() => setQ(props.q), [props.q]);
  const { first, items, more, loadingMore, moreError } = usePages(
    (cursor) => (props.q ? search(props.q, cursor) : null),
    [props.q],
  );

  return (
    <div class="view search-view">
      <form
        class="row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(href.search(q.trim()));
        }}
      >
        <label class="grow">
          <span>Search tasks and notes</span>
          <input type="search" data-testid="search-input" value={q} onInput={(e) => setQ((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <button type="submit" data-testid="search-submit">
          Search
        </button>
      </form>
      {first.error ? <ErrorPanel error={first.error} onRetry={first.reload} /> : null}
      {props.q && !first.data && first.loading ? <Loading what="results" /> : null}
      {!props.q ? <Empty>Type words to search every task and note.</Empty> : null}
      {props.q && first.data && items.length === 0 ? <Empty>Nothing matches "{props.q}".</Empty> : null}
      <ol class="hits">
        {items.map((h) => (
          <li key={`${h.kind}:${h.id}`} data-testid="search-hit">
            <span class="badge">{h.kind}</span> <a href={href.node(h.kind, h.id)}>{h.title}</a>
            <p>
              <Snippet text={h.snippet} />
            </p>
          </li>
        ))}
      </ol>
      {moreError ? <ErrorPanel error={moreError} onRetry={more ?? undefined} /> : null}
      {first.data ? (
        <MorePager shown={items.length} total={first.data.total}
          totalIsLowerBound={first.data.total_is_lower_bound}
          loading={loadingMore} onMore={more} />
      ) : null}
    </div>
  );
}
