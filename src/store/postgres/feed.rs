//! The change feed on PostgreSQL: append as the last statement of the write
//! (the counter's row lock orders commits), wake every gateway with NOTIFY,
//! prune past the retention, read pages after a `seq`.

use postgres::{GenericClient, Row, Transaction};

use super::{R, at, rows, time_of};
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

pub(super) fn append(tx: &mut Transaction<'_>, change: &NewChange, retention: i64) -> R<i64> {
    // Numbered, stored and announced (delivered at commit) in one statement.
    let seq: i64 = tx
        .query_one(
            "WITH next AS (UPDATE change_counter SET last_seq = last_seq + 1 RETURNING last_seq)
             INSERT INTO changes (seq, at, kind, entity_type, entity_id, title, version, agent, changes)
             SELECT last_seq, $1, $2, $3, $4, $5, $6, $7, $8 FROM next
             RETURNING seq, pg_notify($9, current_schema() || ' ' || seq::text)",
            &[
                &at(&change.at)?,
                &change.kind.as_str(),
                &change.entity.kind.as_str(),
                &change.entity.id,
                &change.entity.title,
                &change.version,
                &change.agent,
                &serde_json::Value::Object(change.changes.clone()),
                &CHANNEL,
            ],
        )?
        .try_get(0)?;
    if seq % PRUNE_EVERY == 0 {
        tx.execute("DELETE FROM changes WHERE seq <= $1", &[&(seq - retention)])?;
    }
    Ok(seq)
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

pub(super) fn page<C: GenericClient>(c: &mut C, query: &ChangeQuery) -> R<ChangePage> {
    // The head first, then only events up to it: every event numbered up to
    // the head has committed (numbers follow commit order), so none is missed.
    let head: i64 = c
        .query_one("SELECT last_seq FROM change_counter", &[])?
        .try_get(0)?;
    let oldest: Option<i64> = c
        .query_one("SELECT min(seq) FROM changes", &[])?
        .try_get(0)?;
    let kinds: Vec<&str> = query.kinds.iter().map(|k| k.as_str()).collect();
    let mut events = rows(
        c,
        "SELECT seq, at, kind, entity_type, entity_id, title, version, agent, changes
         FROM changes
         WHERE seq > $1 AND seq <= $2
           AND (cardinality($3::text[]) = 0 OR kind = ANY($3))
           AND ($4::text IS NULL OR entity_id = $4)
         ORDER BY seq LIMIT $5",
        &[
            &query.after.unwrap_or(0),
            &head,
            &kinds,
            &query.entity_id,
            &((query.limit + 1) as i64),
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
