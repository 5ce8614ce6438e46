//! Full-text search on SQLite: an FTS5 table kept by every write (rowid =
//! `tasks.seq * 2` for tasks, `notes.seq * 2 + 1` for notes), ranked by
//! `cairn_rank` (bm25 without IDF, see `rank.rs`) with titles weighted four
//! times the body, in windows of [`RANK_WINDOW`] newest matches.

use rusqlite::{Connection, TransactionBehavior, params};

use super::{R, capped_count_sql, rows};
use crate::store::model::*;

/// Recreates the full-text index when it is missing (same definition as migration 1).
const REBUILD: &str = "
CREATE VIRTUAL TABLE search_index USING fts5 (
    title, body, kind UNINDEXED, entity_id UNINDEXED,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO search_index (rowid, title, body, kind, entity_id)
    SELECT seq * 2, title, description, 'task', id FROM tasks
    UNION ALL
    SELECT seq * 2 + 1, title, content, 'note', id FROM notes;
";

/// What an index entry is.
#[derive(Debug, Clone, Copy)]
pub(super) enum Doc {
    Task,
    Note,
}

impl Doc {
    const fn kind(self) -> &'static str {
        match self {
            Self::Task => "task",
            Self::Note => "note",
        }
    }

    /// The entity's index rowid, as a subquery on its id (`?1`).
    const fn rowid(self) -> &'static str {
        match self {
            Self::Task => "(SELECT seq * 2 FROM tasks WHERE id = ?1)",
            Self::Note => "(SELECT seq * 2 + 1 FROM notes WHERE id = ?1)",
        }
    }
}

pub(super) fn is_missing_index(message: Option<&str>) -> bool {
    message.is_some_and(|m| m.contains("no such table") && m.contains("search_index"))
}

/// Index changes a write makes wait in `temp.pending_index` (one row per
/// index rowid: the entry's new text, or none for a removal) until its group
/// of writes commits: FTS5 writes its pending terms out as a new segment at
/// every savepoint it is part of, so indexing inside each write's savepoint
/// would cost a segment per write instead of one per commit. The temporary
/// table is in the write's transaction: a write rolled back to its savepoint
/// takes its pending changes with it.
const PENDING: &str = "CREATE TEMP TABLE IF NOT EXISTS pending_index (
    rowid INTEGER PRIMARY KEY, title TEXT, body TEXT, kind TEXT NOT NULL, entity_id TEXT NOT NULL
)";

/// Makes the pending-index table on the writer's connection, once per group.
pub(super) fn prepare_pending(conn: &Connection) -> rusqlite::Result<()> {
    super::run_cached(conn, PENDING)
}

/// Replaces the index entry of one entity (which must exist), at commit.
pub(super) fn index(conn: &Connection, doc: Doc, id: &str, title: &str, body: &str) -> R<()> {
    conn.prepare_cached(&format!(
        "INSERT OR REPLACE INTO temp.pending_index (rowid, title, body, kind, entity_id)
         VALUES ({}, ?2, ?3, ?4, ?1)",
        doc.rowid()
    ))?
    .execute(params![id, title, body, doc.kind()])?;
    Ok(())
}

/// Removes the index entry of one entity (before the entity's row goes), at commit.
pub(super) fn unindex(conn: &Connection, doc: Doc, id: &str) -> R<()> {
    conn.prepare_cached(&format!(
        "INSERT OR REPLACE INTO temp.pending_index (rowid, title, body, kind, entity_id)
         VALUES ({}, NULL, NULL, ?2, ?1)",
        doc.rowid()
    ))?
    .execute(params![id, doc.kind()])?;
    Ok(())
}

/// Writes the group's pending index changes into the index, just before its
/// commit: the old entries of every entity touched go, the new ones come in.
/// A missing index is logged and skipped, so writes keep working while search
/// reports itself unavailable (a restart rebuilds it).
pub(super) fn apply_pending(conn: &Connection) -> rusqlite::Result<()> {
    let applied = conn
        .prepare_cached(
            "DELETE FROM search_index WHERE rowid IN (SELECT rowid FROM temp.pending_index)",
        )
        .and_then(|mut s| s.execute([]))
        .and_then(|_| {
            conn.prepare_cached(
                "INSERT INTO search_index (rowid, title, body, kind, entity_id)
                 SELECT rowid, title, body, kind, entity_id FROM temp.pending_index
                 WHERE title IS NOT NULL",
            )?
            .execute([])
        });
    match applied {
        Err(rusqlite::Error::SqliteFailure(_, ref m)) if is_missing_index(m.as_deref()) => {
            tracing::warn!(
                "the full-text index is missing; this commit's entities are not indexed"
            );
        }
        other => {
            other?;
        }
    }
    conn.prepare_cached("DELETE FROM temp.pending_index")?
        .execute([])
        .map(drop)
}

/// Rebuilds the full-text index if someone dropped it.
pub(super) fn ensure_index(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let present: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'search_index')",
        [],
        |r| r.get(0),
    )?;
    if !present {
        tracing::warn!("the full-text index was missing; rebuilding it");
        tx.execute_batch(REBUILD)?;
    }
    tx.commit()
}

pub(super) fn probe(conn: &Connection) -> R<()> {
    conn.query_row(
        "SELECT count(*) FROM search_index WHERE rowid = 0",
        [],
        |r| r.get::<_, i64>(0),
    )?;
    Ok(())
}

/// An FTS5 query of quoted terms (AND), so no text a caller types is FTS syntax.
fn fts5_query(terms: &[SearchTerm]) -> String {
    terms
        .iter()
        .map(|t| {
            let quoted = format!("\"{}\"", t.word.replace('"', "\"\""));
            if t.prefix {
                format!("{quoted}*")
            } else {
                quoted
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A page of hits: the capped count, then a rank for the matches of the page's
/// rank windows only (newest first by rowid, which FTS5 walks in order, so
/// skipped and later matches cost no scoring), then snippets for the page.
/// One read transaction, so the three agree.
pub(super) fn run(
    conn: &Connection,
    terms: &[SearchTerm],
    limit: usize,
    offset: usize,
) -> R<(Vec<SearchHit>, Total)> {
    let query = fts5_query(terms);
    let cap = search_cap(limit, offset);
    let tx = conn.unchecked_transaction()?;
    let counted: i64 = tx
        .prepare_cached(&capped_count_sql(
            "FROM search_index WHERE search_index MATCH ?1",
            cap,
        ))?
        .query_row([&query], |r| r.get(0))?;
    let span = rank_span(limit, offset);
    let scored = rows(
        &tx,
        "SELECT rowid, cairn_rank(search_index, 4.0, 1.0)
         FROM search_index WHERE search_index MATCH ?1
         ORDER BY rowid DESC LIMIT ?2 OFFSET ?3",
        params![query, span.len() as i64, span.start as i64],
        |r| Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?)),
    )?;
    let scored = scored.into_iter().enumerate().collect();
    // Lower is better, as for bm25; ties go to the older entry, as before.
    let page = rank_page(scored, span.start, limit, offset, |a, b| {
        a.1.total_cmp(&b.1).then(a.0.cmp(&b.0))
    });
    // One pass over the page's rowid range for its snippets: FTS5 walks the
    // range and only the listed rows get one (`+rowid` keeps the list from
    // becoming one FTS5 lookup per row, which re-reads each word's doclist).
    let (lo, hi) = page.iter().fold((i64::MAX, i64::MIN), |(lo, hi), (r, _)| {
        (lo.min(*r), hi.max(*r))
    });
    let wanted = serde_json::to_string(&page.iter().map(|(r, _)| r).collect::<Vec<_>>())
        .unwrap_or_else(|_| "[]".to_owned());
    let mut found: std::collections::HashMap<i64, (String, String, String, String)> = rows(
        &tx,
        "SELECT rowid, entity_id, kind, title,
                snippet(search_index, -1, '<mark>', '</mark>', '…', 16)
         FROM search_index
         WHERE search_index MATCH ?1 AND rowid >= ?2 AND rowid <= ?3
           AND +rowid IN (SELECT value FROM json_each(?4))",
        params![query, lo, hi, wanted],
        |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))),
    )?
    .into_iter()
    .collect();
    let hits = page
        .into_iter()
        .filter_map(|(rowid, score)| {
            let (id, kind, title, snippet) = found.remove(&rowid)?;
            Some(SearchHit {
                id,
                kind: if kind == "note" {
                    NodeKind::Note
                } else {
                    NodeKind::Task
                },
                title,
                snippet,
                score: -score,
            })
        })
        .collect();
    tx.commit()?;
    Ok((hits, Total::counted(counted as u64, cap)))
}
