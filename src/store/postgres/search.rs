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

/// Every matching task and note with its rank; `ord` breaks ties as SQLite's rowid does.
const MATCHES: &str = "
    WITH q AS (SELECT to_tsquery('english', $1) AS q)
    SELECT 'task' AS kind, t.id, t.title, t.description AS body, t.seq * 2 AS ord,
           ts_rank('{0.25, 0.25, 0.25, 1.0}', t.search, q.q, 1) AS score
      FROM tasks t, q WHERE t.search @@ q.q
    UNION ALL
    SELECT 'note', n.id, n.title, n.content, n.seq * 2 + 1,
           ts_rank('{0.25, 0.25, 0.25, 1.0}', n.search, q.q, 1)
      FROM notes n, q WHERE n.search @@ q.q";

pub(super) fn run<C: GenericClient>(
    c: &mut C,
    terms: &[SearchTerm],
    limit: usize,
    offset: usize,
) -> R<(Vec<SearchHit>, Total)> {
    let query = tsquery(terms);
    let cap = search_cap(limit, offset);
    let counted: i64 = c
        .query_one(
            &capped_count_sql(&format!("FROM ({MATCHES}) m"), cap),
            &[&query],
        )?
        .try_get(0)?;
    // Headlines are costly: only for the page, after ranking.
    let hits = rows(
        c,
        &format!(
            "SELECT p.kind, p.id, p.title,
                    ts_headline('english', p.title || E'\\n' || p.body, to_tsquery('english', $1),
                                'StartSel=<mark>, StopSel=</mark>, MaxWords=16, MinWords=6, MaxFragments=1, FragmentDelimiter=…'),
                    p.score::float8
             FROM ({MATCHES} ORDER BY score DESC, ord LIMIT $2 OFFSET $3) p
             ORDER BY p.score DESC, p.ord"
        ),
        &[&query, &(limit as i64), &(offset as i64)],
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
    Ok((hits, Total::counted(counted as u64, cap)))
}

/// The index answers a query.
pub(super) fn probe<C: GenericClient>(c: &mut C) -> R<()> {
    c.query_one(
        "SELECT count(*) FROM tasks WHERE search @@ to_tsquery('english', 'cairn')",
        &[],
    )?;
    Ok(())
}
