//! Idempotency keys in SQLite: the claim is one upsert that only takes an
//! expired or abandoned row, run on the one writer connection.

use rusqlite::{Connection, OptionalExtension, params};

use super::R;
use crate::store::idempotency::{HeldKey, KeyClaim, KeyScope, StoredAnswer, purge_due};

pub(super) fn claim(conn: &Connection, claim: &KeyClaim) -> R<Option<HeldKey>> {
    if purge_due() {
        conn.prepare_cached("DELETE FROM idempotency_keys WHERE expires_at <= ?1")?
            .execute([&claim.now])?;
    }
    let KeyScope { client, route, key } = &claim.scope;
    let taken = conn
        .prepare_cached(
            "INSERT INTO idempotency_keys (client, route, key, fingerprint, owner, started_at, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (client, route, key) DO UPDATE SET
                 fingerprint = excluded.fingerprint, owner = excluded.owner,
                 started_at = excluded.started_at, expires_at = excluded.expires_at,
                 status = NULL, headers = NULL, body = NULL
             WHERE idempotency_keys.expires_at <= ?6
                OR (idempotency_keys.status IS NULL AND idempotency_keys.started_at <= ?8)
             RETURNING owner",
        )?
        .query_row(
            params![
                client,
                route,
                key,
                claim.fingerprint,
                claim.owner,
                claim.now,
                claim.expires_at,
                claim.stale_before
            ],
            |r| r.get::<_, String>(0),
        )
        .optional()?;
    if taken.is_some() {
        return Ok(None);
    }
    let held = conn
        .prepare_cached(
            "SELECT fingerprint, status, headers, body FROM idempotency_keys
             WHERE client = ?1 AND route = ?2 AND key = ?3",
        )?
        .query_row(params![client, route, key], |r| {
            let fingerprint: String = r.get(0)?;
            let status: Option<u16> = r.get(1)?;
            let headers: Option<String> = r.get(2)?;
            let body: Option<String> = r.get(3)?;
            Ok(HeldKey {
                fingerprint,
                answer: status.map(|status| StoredAnswer {
                    status,
                    headers: StoredAnswer::parse_headers(headers.as_deref().unwrap_or("[]")),
                    body: body.unwrap_or_default(),
                }),
            })
        })?;
    Ok(Some(held))
}

pub(super) fn finish(
    conn: &Connection,
    scope: &KeyScope,
    owner: &str,
    answer: &StoredAnswer,
) -> R<()> {
    conn.prepare_cached(
        "UPDATE idempotency_keys SET status = ?1, headers = ?2, body = ?3
         WHERE client = ?4 AND route = ?5 AND key = ?6 AND owner = ?7 AND status IS NULL",
    )?
    .execute(params![
        answer.status,
        answer.headers_json(),
        answer.body,
        scope.client,
        scope.route,
        scope.key,
        owner
    ])?;
    Ok(())
}

pub(super) fn release(conn: &Connection, scope: &KeyScope, owner: &str) -> R<()> {
    conn.prepare_cached(
        "DELETE FROM idempotency_keys
         WHERE client = ?1 AND route = ?2 AND key = ?3 AND owner = ?4 AND status IS NULL",
    )?
    .execute(params![scope.client, scope.route, scope.key, owner])?;
    Ok(())
}
