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

use postgres::GenericClient;

use super::{R, rows};
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

/// The newest `$2` matches of each table (`ord` orders them as SQLite's rowid
/// does): a backward walk of the primary key while matches are dense, the GIN
/// index when they are rare; no rank is computed here.
const NEWEST: &str = "
    (SELECT 'task' AS kind, t.id, t.title, t.description AS body, t.seq * 2 AS ord, t.search
       FROM tasks t WHERE t.search @@ to_tsquery('english', $1)
      ORDER BY t.seq DESC LIMIT $2)
    UNION ALL
    (SELECT 'note', n.id, n.title, n.content, n.seq * 2 + 1, n.search
       FROM notes n WHERE n.search @@ to_tsquery('english', $1)
      ORDER BY n.seq DESC LIMIT $2)";

/// A page of hits: `ts_rank` only for the matches of the page's rank windows
/// (positions `$3`..`$2`, newest first), ordered by window then rank, and
/// headlines (costly) only for the page (`$4` hits from `$5` in that span).
fn page_sql() -> String {
    format!(
        "WITH m AS ({NEWEST}),
         w AS (SELECT m.*, row_number() OVER (ORDER BY ord DESC) - 1 AS pos FROM m),
         p AS (SELECT kind, id, title, body, ord, pos / {RANK_WINDOW} AS win,
                      ts_rank('{{0.25, 0.25, 0.25, 1.0}}', search, to_tsquery('english', $1), 1) AS score
                 FROM w WHERE pos >= $3 AND pos < $2
                ORDER BY win, score DESC, ord LIMIT $4 OFFSET $5)
         SELECT kind, id, title,
                ts_headline('english', title || E'\\n' || body, to_tsquery('english', $1),
                            'StartSel=<mark>, StopSel=</mark>, MaxWords=16, MinWords=6, MaxFragments=1, FragmentDelimiter=…'),
                score::float8
           FROM p ORDER BY win, score DESC, ord"
    )
}

/// Counts matches up to `$2` rows, without ranking them.
const COUNT: &str = "
    SELECT count(*) FROM (
        (SELECT 1 FROM tasks WHERE search @@ to_tsquery('english', $1) LIMIT $2)
        UNION ALL
        (SELECT 1 FROM notes WHERE search @@ to_tsquery('english', $1) LIMIT $2)
    ) AS capped";

/// One repeatable-read snapshot, so the count and the page agree.
pub(super) fn run(
    c: &mut postgres::Client,
    terms: &[SearchTerm],
    limit: usize,
    offset: usize,
) -> R<(Vec<SearchHit>, Total)> {
    let query = tsquery(terms);
    let cap = search_cap(limit, offset);
    let span = rank_span(limit, offset);
    let mut tx = c
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    let counted: i64 = tx
        .query_one(COUNT, &[&query, &(cap as i64 + 1)])?
        .try_get(0)?;
    let hits = rows(
        &mut tx,
        &page_sql(),
        &[
            &query,
            &(span.end as i64),
            &(span.start as i64),
            &(limit as i64),
            &((offset - span.start) as i64),
        ],
        |r| {
            let kind: &str = r.try_get(0)?;
            Ok(SearchHit {
                id: r.try_get(1)?,
                kind: if kind == "note" {
                    NodeKind::Note
                } else {
                    NodeKind::Task
                },
                title: r.try_get(2)?,
                snippet: r.try_get(3)?,
                score: r.try_get(4)?,
            })
        },
    )?;
    tx.commit()?;
    Ok((
        hits,
        Total::counted(counted.min(cap as i64 + 1) as u64, cap),
    ))
}

/// The index answers a query.
pub(super) fn probe<C: GenericClient>(c: &mut C) -> R<()> {
    c.query_one(
        "SELECT count(*) FROM tasks WHERE search @@ to_tsquery('english', 'cairn')",
        &[],
    )?;
    Ok(())
}
