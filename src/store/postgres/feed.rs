//! The change feed on PostgreSQL: append as the last statement of the write
//! (the counter's row lock orders commits), wake every gateway with NOTIFY,
//! prune past the retention, read pages after a `seq`.

use postgres::types::ToSql;
use postgres::{GenericClient, Row};

use super::{Db, Params, R, Tx, at, rows, time_of};
use crate::store::feed::*;

/// The NOTIFY channel every gateway listens on. Channels are per database, and
/// several cairns may share one in schemas of their own, so the payload is
/// `"{schema} {seq}"` and a listener keeps only its own schema's.
pub const CHANNEL: &str = "cairn_changes";

/// The `seq` of a notification for `schema`, if it is one.
pub fn notified_seq(payload: &str, schema: &str) -> Option<i64> {
    let (of, seq) = payload.rsplit_once(' ')?;
    (of == schema).then(|| seq.parse().ok()).flatten()
}

/// The statement that numbers, stores and announces (at commit) one change:
/// `$1` to `$9` are the event's (see [`append_with`]). Given a CTE, the
/// statement writes that first: a write and its event in one statement.
macro_rules! append_change {
    ($($write:literal)?) => {
        concat!(
            "WITH ", $($write, ", ",)?
            "next AS (UPDATE change_counter SET last_seq = last_seq + 1 RETURNING last_seq)
             INSERT INTO changes (seq, at, kind, entity_type, entity_id, title, version, agent, changes)
             SELECT last_seq, $1, $2, $3, $4, $5, $6, $7, $8 FROM next
             RETURNING seq, pg_notify($9, current_schema() || ' ' || seq::text)"
        )
    };
}
pub(super) use append_change;

/// Appends `change` as the last statement of the write, and prunes every
/// [`PRUNE_EVERY`] events.
pub(super) fn append(tx: &mut Tx<'_, '_>, change: &NewChange, retention: i64) -> R<i64> {
    let seq = append_with(tx, append_change!(), change, &[])?;
    prune(tx, seq, retention)?;
    Ok(seq)
}

/// Runs `sql`, an [`append_change!`] statement, with `change` as `$1` to `$9`
/// and `more` after them; answers the event's `seq`.
pub(super) fn append_with<C: GenericClient>(
    c: &mut Db<'_, C>,
    sql: &'static str,
    change: &NewChange,
    more: &Params<'_>,
) -> R<i64> {
    let at = at(&change.at)?;
    let changes = postgres::types::Json(&change.changes);
    let event: [&(dyn ToSql + Sync); 9] = [
        &at,
        &change.kind.as_str(),
        &change.entity.kind.as_str(),
        &change.entity.id,
        &change.entity.title,
        &change.version,
        &change.agent,
        &changes,
        &CHANNEL,
    ];
    let params: Vec<&(dyn ToSql + Sync)> = event.iter().chain(more).copied().collect();
    Ok(c.query_one(sql, &params)?.try_get(0)?)
}

/// Drops what falls out of the newest `retention` events, when `seq` is a
/// multiple of [`PRUNE_EVERY`].
pub(super) fn prune<C: GenericClient>(c: &mut Db<'_, C>, seq: i64, retention: i64) -> R<()> {
    if seq % PRUNE_EVERY == 0 {
        c.execute("DELETE FROM changes WHERE seq <= $1", &[&(seq - retention)])?;
    }
    Ok(())
}

fn from_row(row: &Row) -> R<ChangeEvent> {
    let changes: serde_json::Value = row.try_get(8)?;
    Ok(ChangeEvent {
        seq: row.try_get(0)?,
        at: time_of(row, 1)?,
        kind: ChangeKind::parse(row.try_get(2)?).unwrap_or(ChangeKind::TaskUpdated),
        entity: ChangedEntity {
            kind: EntityType::parse(row.try_get(3)?),
            id: row.try_get(4)?,
            title: row.try_get(5)?,
        },
        version: row.try_get(6)?,
        agent: row.try_get(7)?,
        changes: match changes {
            serde_json::Value::Object(map) => map,
            _ => Default::default(),
        },
    })
}

/// A page's events: after `seq` $1, up to the head $2, of the kinds in $3
/// (every kind when it is empty), at most $4, and what `$entity` adds ($5,
/// the entity, when it filters by one).
macro_rules! page_sql {
    ($entity:literal) => {
        concat!(
            "SELECT seq, at, kind, entity_type, entity_id, title, version, agent, changes
             FROM changes
             WHERE seq > $1 AND seq <= $2
               AND (cardinality($3::text[]) = 0 OR kind = ANY($3)) ",
            $entity,
            " ORDER BY seq LIMIT $4"
        )
    };
}

pub(super) fn page<C: GenericClient>(c: &mut Db<'_, C>, query: &ChangeQuery) -> R<ChangePage> {
    // The head first, then only events up to it: every event numbered up to
    // the head has committed (numbers follow commit order), so none is missed.
    let head: i64 = c
        .query_one("SELECT last_seq FROM change_counter", &[])?
        .try_get(0)?;
    let oldest: Option<i64> = c
        .query_one("SELECT min(seq) FROM changes", &[])?
        .try_get(0)?;
    let kinds: Vec<&str> = query.kinds.iter().map(|k| k.as_str()).collect();
    let (after, limit) = (query.after.unwrap_or(0), (query.limit + 1) as i64);
    // One entity's events are found through its index (`changes_by_entity`),
    // however many others the feed holds; a generic plan of
    // `$4::text IS NULL OR entity_id = $4` could not use it.
    let mut events = match &query.entity_id {
        Some(entity) => rows(
            c,
            page_sql!("AND entity_id = $5"),
            &[&after, &head, &kinds, &limit, entity],
            from_row,
        )?,
        None => rows(c, page_sql!(""), &[&after, &head, &kinds, &limit], from_row)?,
    };
    let more = events.len() > query.limit;
    events.truncate(query.limit);
    Ok(ChangePage {
        events,
        more,
        head,
        oldest,
    })
}
