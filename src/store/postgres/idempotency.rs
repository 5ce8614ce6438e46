//! Idempotency keys in PostgreSQL: the claim is one `INSERT … ON CONFLICT`
//! that only takes over an expired or abandoned row, so two gateways racing
//! for one key never both run the request.

use postgres::GenericClient;

use super::{Db, R, Tx, at};
use crate::store::idempotency::{HeldKey, KeyClaim, KeyScope, StoredAnswer, purge_due};

pub(super) fn claim(tx: &mut Tx<'_, '_>, claim: &KeyClaim) -> R<Option<HeldKey>> {
    let now = at(&claim.now)?;
    if purge_due() {
        tx.execute(
            "DELETE FROM idempotency_keys WHERE expires_at <= $1",
            &[&now],
        )?;
    }
    let KeyScope { client, route, key } = &claim.scope;
    let taken = tx.query_opt(
        "INSERT INTO idempotency_keys (client, route, key, fingerprint, owner, started_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (client, route, key) DO UPDATE SET
             fingerprint = excluded.fingerprint, owner = excluded.owner,
             started_at = excluded.started_at, expires_at = excluded.expires_at,
             status = NULL, headers = NULL, body = NULL
         WHERE idempotency_keys.expires_at <= $6
            OR (idempotency_keys.status IS NULL AND idempotency_keys.started_at <= $8)
         RETURNING owner",
        &[
            client,
            route,
            key,
            &claim.fingerprint,
            &claim.owner,
            &now,
            &at(&claim.expires_at)?,
            &at(&claim.stale_before)?,
        ],
    )?;
    if taken.is_some() {
        return Ok(None);
    }
    // The upsert that took nothing still locked the row it met (PostgreSQL
    // locks every conflicting row of `ON CONFLICT DO UPDATE`, its `WHERE`
    // true or not), so the owner cannot release it before this reads it.
    let row = tx.query_one(
        "SELECT fingerprint, status, headers, body FROM idempotency_keys
         WHERE client = $1 AND route = $2 AND key = $3",
        &[client, route, key],
    )?;
    let status: Option<i32> = row.try_get(1)?;
    let headers: Option<String> = row.try_get(2)?;
    let body: Option<String> = row.try_get(3)?;
    Ok(Some(HeldKey {
        fingerprint: row.try_get(0)?,
        answer: status.map(|status| StoredAnswer {
            status: u16::try_from(status).unwrap_or(500),
            headers: StoredAnswer::parse_headers(headers.as_deref().unwrap_or("[]")),
            body: body.unwrap_or_default(),
        }),
    }))
}

pub(super) fn finish<C: GenericClient>(
    c: &mut Db<'_, C>,
    scope: &KeyScope,
    owner: &str,
    answer: &StoredAnswer,
) -> R<()> {
    c.execute(
        "UPDATE idempotency_keys SET status = $1, headers = $2, body = $3
         WHERE client = $4 AND route = $5 AND key = $6 AND owner = $7 AND status IS NULL",
        &[
            &i32::from(answer.status),
            &answer.headers_json(),
            &answer.body,
            &scope.client,
            &scope.route,
            &scope.key,
            &owner,
        ],
    )?;
    Ok(())
}

pub(super) fn release<C: GenericClient>(c: &mut Db<'_, C>, scope: &KeyScope, owner: &str) -> R<()> {
    c.execute(
        "DELETE FROM idempotency_keys
         WHERE client = $1 AND route = $2 AND key = $3 AND owner = $4 AND status IS NULL",
        &[&scope.client, &scope.route, &scope.key, &owner],
    )?;
    Ok(())
}
