//! The change feed on SQLite: append in the write's transaction, prune past
//! the retention, read pages after a `seq`.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{R, row, rows};
use crate::store::feed::*;

/// Appends `change` (numbered by AUTOINCREMENT) and prunes what falls out of
/// the newest `retention` events.
pub(super) fn append(conn: &Connection, change: &NewChange, retention: i64) -> R<i64> {
    // `seq` is the row's rowid: no `RETURNING`, which SQLite answers through
    // an ephemeral table made for each statement.
    let seq = conn
        .prepare_cached(
            "INSERT INTO changes (at, kind, entity_type, entity_id, title, version, agent, changes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .insert(params![
            change.at,
            change.kind.as_str(),
            change.entity.kind.as_str(),
            change.entity.id,
            change.entity.title,
            change.version,
            change.agent,
            serde_json::to_string(&change.changes).unwrap_or_else(|_| "{}".to_owned()),
        ])?;
    if seq % PRUNE_EVERY == 0 {
        conn.prepare_cached("DELETE FROM changes WHERE seq <= ?1")?
            .execute([seq - retention])?;
    }
    Ok(seq)
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<ChangeEvent> {
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

/// A page's events: after `seq` ?1, up to the head ?2, of the kinds in the
/// JSON array ?3 (every kind when it is empty), at most ?5, and what
/// `$entity` adds (?4, the entity, when it filters by one).
macro_rules! page_sql {
    ($entity:literal) => {
        concat!(
            "SELECT seq, at, kind, entity_type, entity_id, title, version, agent, changes
             FROM changes
             WHERE seq > ?1 AND seq <= ?2
               AND (?3 = '[]' OR kind IN (SELECT value FROM json_each(?3))) ",
            $entity,
            " ORDER BY seq LIMIT ?5"
        )
    };
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
    // One entity's events are found through its index (`changes_by_entity`),
    // however many others the feed holds; `?4 IS NULL OR entity_id = ?4`
    // could not use it, and so read every event after the cursor.
    let sql = match query.entity_id {
        Some(_) => page_sql!("AND entity_id = ?4"),
        None => page_sql!(""),
    };
    let mut events = rows(
        conn,
        sql,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreOptions;
    use crate::store::sqlite::SqliteStore;

    /// How SQLite plans `sql`: the detail column of `EXPLAIN QUERY PLAN`.
    fn plan(conn: &Connection, sql: &str) -> String {
        let mut explain = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let details = explain
            .query_map(params![0, 10, "[]", "-", 5], |r| r.get::<_, String>(3))
            .unwrap();
        details.map(Result::unwrap).collect::<Vec<_>>().join("; ")
    }

    #[test]
    fn one_entity_is_read_through_its_index_and_the_feed_by_its_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        drop(SqliteStore::open(&path, &StoreOptions::default()).unwrap());
        let conn = Connection::open(&path).unwrap();
        let entity = plan(&conn, page_sql!("AND entity_id = ?4"));
        assert!(
            entity.contains("USING INDEX changes_by_entity (entity_id=? AND seq>? AND seq<?)"),
            "{entity}"
        );
        let all = plan(&conn, page_sql!(""));
        assert!(
            all.contains("USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
            "{all}"
        );
    }
}
