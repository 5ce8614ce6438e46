//! The change feed on SQLite: append in the write's transaction, prune past
//! the retention, read pages after a `seq`.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{R, row, rows};
use crate::store::feed::*;

/// Appends `change` (numbered by AUTOINCREMENT) and prunes what falls out of
/// the newest `retention` events.
pub(super) fn append(conn: &Connection, change: &NewChange, retention: i64) -> R<i64> {
    let seq: i64 = conn
        .prepare_cached(
            "INSERT INTO changes (at, kind, entity_type, entity_id, title, version, agent, changes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING seq",
        )?
        .query_row(
            params![
                change.at,
                change.kind.as_str(),
                change.entity.kind.as_str(),
                change.entity.id,
                change.entity.title,
                change.version,
                change.agent,
                serde_json::to_string(&change.changes).unwrap_or_else(|_| "{}".to_owned()),
            ],
            |r| r.get(0),
        )?;
    if seq % PRUNE_EVERY == 0 {
        conn.prepare_cached("DELETE FROM changes WHERE seq <= ?1")?
            .execute([seq - retention])?;
    }
    Ok(seq)
}

fn from_row(row: &Row) -> rusqlite::Result<ChangeEvent> {
    let kind: String = row.get(2)?;
    let entity_type: String = row.get(3)?;
    let changes: String = row.get(8)?;
    Ok(ChangeEvent {
        seq: row.get(0)?,
        at: row.get(1)?,
        kind: ChangeKind::parse(&kind).unwrap_or(ChangeKind::TaskUpdated),
        entity: ChangedEntity {
            kind: EntityType::parse(&entity_type),
            id: row.get(4)?,
            title: row.get(5)?,
        },
        version: row.get(6)?,
        agent: row.get(7)?,
        changes: serde_json::from_str(&changes).unwrap_or_default(),
    })
}

pub(super) fn page(conn: &Connection, query: &ChangeQuery) -> R<ChangePage> {
    // The head first, then only events up to it: one consistent page.
    let head: i64 = row(
        conn,
        "SELECT seq FROM sqlite_sequence WHERE name = 'changes'",
        [],
        |r| r.get(0),
    )
    .optional()?
    .unwrap_or(0);
    let oldest: Option<i64> = row(conn, "SELECT min(seq) FROM changes", [], |r| r.get(0))?;
    let kinds: Vec<&str> = query.kinds.iter().map(|k| k.as_str()).collect();
    let kinds = serde_json::to_string(&kinds).unwrap_or_else(|_| "[]".to_owned());
    let mut events = rows(
        conn,
        "SELECT seq, at, kind, entity_type, entity_id, title, version, agent, changes
         FROM changes
         WHERE seq > ?1 AND seq <= ?2
           AND (?3 = '[]' OR kind IN (SELECT value FROM json_each(?3)))
           AND (?4 IS NULL OR entity_id = ?4)
         ORDER BY seq LIMIT ?5",
        params![
            query.after.unwrap_or(0),
            head,
            kinds,
            query.entity_id,
            (query.limit + 1) as i64
        ],
        from_row,
    )?;
    let more = events.len() > query.limit;
    events.truncate(query.limit);
    Ok(ChangePage {
        events,
        more,
        head,
        oldest,
    })
}
