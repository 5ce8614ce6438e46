//! Full-text search on PostgreSQL: a generated `tsvector` column per table
//! (kept by every write, GIN-indexed; title weighted A, body D), ranked with
//! `ts_rank` (title 4x body, normalized by document length), snippets from
//! `ts_headline`, and `word*` as a prefix match.
//!
//! Where it differs from SQLite's FTS5 (bm25, porter stemmer): scores are on
//! another scale, so only the order within one answer means anything; the
//! `english` configuration drops stop words (a query of only stop words finds
//! nothing) and keeps diacritics; its Snowball stemmer and the porter stemmer
//! agree on ordinary English words but not on every one.

use std::sync::LazyLock;

use postgres::GenericClient;

use super::{Db, R};
use crate::store::model::*;

/// A `to_tsquery` text of quoted terms (AND), so nothing a caller types is
/// query syntax: `'word'` or `'word':*` for a prefix.
fn tsquery(terms: &[SearchTerm]) -> String {
    terms
        .iter()
        .map(|t| {
            let quoted = format!("'{}'", t.word.replace('\\', "\\\\").replace('\'', "''"));
            if t.prefix {
                format!("{quoted}:*")
            } else {
                quoted
            }
        })
        .collect::<Vec<_>>()
        .join(" & ")
}

/// How many of a table's newest rows the density probe reads.
const PROBE_ROWS: i64 = 200;

/// The newest matches of `table`, found the cheaper of two ways, chosen in the statement itself rather than by the planner
/// (whose estimate of the `@@` filter's cost is far too low, so it walked
/// 25,000 rows for a word in 2% of them):
///
/// - a backward walk of the primary key, testing each row, reads about
///   `wanted / density` rows; it stops at the span's end (`$4`), and the
///   count goes on from there only as far as it still needs ([`more`]);
/// - the GIN index reads every match (about `density * rows`), each costing
///   about twice a walked row (a heap page of its own); it keeps as many as
///   the count's cap or the span needs, whichever is more (`wanted`).
///
/// With `hits` matches among the newest [`PROBE_ROWS`] rows as the density,
/// the walk is cheaper when `hits² * rows >= wanted * PROBE_ROWS² / 2`; the
/// newest `seq` stands for `rows`. `ts_match_vq` is the function behind `@@`:
/// called by name, it cannot be answered from the index, so that branch is
/// the walk; the other orders by `seq + 0`, which no index provides, so it
/// is the GIN bitmap. Only the branch chosen runs (each has a one-time filter).
///
/// Each match carries its score, never its search vector: the vector (about
/// 400 bytes) was copied into each materialized step's tuple store and out
/// again, and the memory that took was faulted in afresh on many calls (the
/// backend's time in the kernel, BENCHMARKS.md). The walk ranks each match it reads
/// (it reads none past the span's end, so none of them is ranked for
/// nothing but the merge's losers) and numbers none (`rn` is null): a
/// `row_number()` over it kept a tuple store of its own. The GIN branch may
/// read up to the count's cap, far more than the span: its matches are
/// numbered from 1 (`rn`), and only those up to the span's end ranked and
/// merged. At 100,000 tasks a common word's statement went from 3.3-3.4 to
/// 2.6 ms (pgbench), a rare word's from 6.9-7.8 to 6.4 (BENCHMARKS.md).
fn newest(table: &str) -> String {
    format!(
        "{table}_walk AS MATERIALIZED (
             SELECT coalesce(hits * hits * newest >= (SELECT n FROM wanted) * {PROBE_ROWS} * {PROBE_ROWS} / 2, false) AS walk
               FROM (SELECT count(*) AS hits
                       FROM (SELECT search FROM {table} ORDER BY seq DESC LIMIT {PROBE_ROWS}) AS recent
                      WHERE ts_match_vq(recent.search, (SELECT q FROM q))) AS probe,
                    (SELECT max(seq) AS newest FROM {table}) AS size),
         {table}_newest AS MATERIALIZED (
             (SELECT seq, {RANK} AS score, NULL::bigint AS rn FROM {table}
               WHERE (SELECT walk FROM {table}_walk) AND ts_match_vq(search, (SELECT q FROM q))
               ORDER BY seq DESC LIMIT (SELECT $4::bigint))
             UNION ALL
             (SELECT seq,
                     CASE WHEN row_number() OVER (ORDER BY seq + 0 DESC) <= (SELECT $4::bigint)
                          THEN {RANK} END,
                     row_number() OVER (ORDER BY seq + 0 DESC) FROM {table}
               WHERE NOT (SELECT walk FROM {table}_walk) AND search @@ (SELECT q FROM q)
               ORDER BY seq + 0 DESC LIMIT (SELECT n FROM wanted)))"
    )
}

/// A match's score: `ts_rank` with the title (weight A) four times the body
/// (D), normalized by the document's length.
const RANK: &str = "ts_rank('{0.25, 0.25, 0.25, 1.0}', search, (SELECT q FROM q), 1)";

/// Matches of a walked `table` older than those read, counted up to `limit`
/// (SQL), walking on; none when the walk ended before the span's end (it
/// read them all). (Counted through the GIN index instead, a common word's
/// statement took 8.4 ms instead of 2.7 at 100,000 tasks: the index reads
/// every match before the first row.)
fn more(table: &str, limit: &str) -> String {
    format!(
        "{table}_more AS MATERIALIZED (
             SELECT count(*) AS n FROM (
                 SELECT 1 FROM {table}
                  WHERE (SELECT walk FROM {table}_walk)
                    AND (SELECT count(*) FROM {table}_newest) = (SELECT $4::bigint)
                    AND seq < (SELECT min(seq) FROM {table}_newest)
                    AND ts_match_vq(search, (SELECT q FROM q))
                  ORDER BY seq DESC LIMIT {limit}) AS older)"
    )
}

/// A page of hits and the capped count, in one statement (one snapshot),
/// prepared once per connection. `$1` the tsquery text; `$2` the count's
/// cap + 1; the page's rank windows are positions `$3`..`$4` (newest first,
/// `ord` ordering them as SQLite's rowid does), and the page is `$5` hits
/// from `$6` in that span. `ts_rank` runs only for each table's matches up
/// to the span's end ([`newest`]) and `ts_headline` (costly) only for the
/// page's. Parameters are read through
/// scalar subqueries so that the plan never depends on their values (see the
/// board's statement in `tasks.rs`). With no hit on the page, one row
/// carries only the count.
static PAGE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "WITH q AS MATERIALIZED (SELECT to_tsquery('english', $1) AS q),
         wanted AS MATERIALIZED (SELECT greatest($2::bigint, $4::bigint) AS n),
         {tasks},
         {notes},
         read AS MATERIALIZED (
             SELECT (SELECT count(*) FROM tasks_newest) + (SELECT count(*) FROM notes_newest) AS n),
         {tasks_more},
         {notes_more},
         m AS (SELECT 'task' AS kind, seq, seq * 2 AS ord, score FROM tasks_newest
                WHERE rn IS NULL OR rn <= (SELECT $4::bigint)
               UNION ALL
               SELECT 'note', seq, seq * 2 + 1, score FROM notes_newest
                WHERE rn IS NULL OR rn <= (SELECT $4::bigint)),
         w AS (SELECT m.*, row_number() OVER (ORDER BY ord DESC) - 1 AS pos FROM m),
         p AS (SELECT kind, seq, ord, pos / {RANK_WINDOW} AS win, score
                 FROM w WHERE pos >= (SELECT $3::bigint) AND pos < (SELECT $4::bigint)
                ORDER BY win, score DESC, ord LIMIT (SELECT $5::bigint) OFFSET (SELECT $6::bigint))
         SELECT p.kind, coalesce(t.id, n.id), coalesce(t.title, n.title),
                ts_headline('english',
                            CASE p.kind WHEN 'task' THEN t.title || E'\\n' || t.description
                                        ELSE n.title || E'\\n' || n.content END,
                            (SELECT q FROM q),
                            'StartSel=<mark>, StopSel=</mark>, MaxWords=16, MinWords=6, MaxFragments=1, FragmentDelimiter=…'),
                p.score::float8,
                (SELECT n FROM read) + (SELECT n FROM tasks_more) + (SELECT n FROM notes_more)
           FROM (SELECT) AS one
           LEFT JOIN p ON true
           LEFT JOIN tasks t ON p.kind = 'task' AND t.seq = p.seq
           LEFT JOIN notes n ON p.kind = 'note' AND n.seq = p.seq
          ORDER BY p.win, p.score DESC, p.ord",
        tasks = newest("tasks"),
        notes = newest("notes"),
        tasks_more = more(
            "tasks",
            "(SELECT greatest(0, $2::bigint - n) FROM read)"
        ),
        notes_more = more(
            "notes",
            "(SELECT greatest(0, $2::bigint - read.n - tasks_more.n) FROM read, tasks_more)"
        ),
    )
});

pub(super) fn run(
    c: &mut Db<'_, postgres::Client>,
    terms: &[SearchTerm],
    limit: usize,
    offset: usize,
) -> R<(Vec<SearchHit>, Total)> {
    let query = tsquery(terms);
    let cap = search_cap(limit, offset);
    let span = rank_span(limit, offset);
    let rows = c.query(
        PAGE.as_str(),
        &[
            &query,
            &(cap as i64 + 1),
            &(span.start as i64),
            &(span.end as i64),
            &(limit as i64),
            &((offset - span.start) as i64),
        ],
    )?;
    let mut counted = 0_i64;
    let mut hits = Vec::with_capacity(rows.len());
    for r in &rows {
        counted = r.try_get(5)?;
        let Some(kind) = r.try_get::<_, Option<&str>>(0)? else {
            continue;
        };
        hits.push(SearchHit {
            id: r.try_get(1)?,
            kind: if kind == "note" {
                NodeKind::Note
            } else {
                NodeKind::Task
            },
            title: r.try_get(2)?,
            snippet: r.try_get(3)?,
            score: r.try_get(4)?,
        });
    }
    Ok((
        hits,
        Total::counted(counted.min(cap as i64 + 1) as u64, cap),
    ))
}

/// The index answers a query.
pub(super) fn probe<C: GenericClient>(c: &mut Db<'_, C>) -> R<()> {
    c.query_one(
        "SELECT count(*) FROM tasks WHERE search @@ to_tsquery('english', 'cairn')",
        &[],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bench_script_is_this_statement() {
        super::super::bench_scripts::check(
            "search_one.sql",
            &super::PAGE,
            &["query", "cap1", "lo", "hi", "lim", "skip"],
        );
    }
}
