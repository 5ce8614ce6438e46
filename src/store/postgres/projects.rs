//! The registry of projects on PostgreSQL, and where each project's own
//! store lives: a schema `<schema>_p<id>` beside the first store's, made
//! under the migration lock the first time the project's store opens.

use postgres::Row;

use super::{Db, MIGRATION_LOCK, R, Tx, at, rows, time_of};
use crate::store::StoreError;
use crate::store::feed::Written;
use crate::store::model::{Project, ProjectPatch, Timestamp};

const COLUMNS: &str = "key, name, archived, created_at, updated_at";

fn project(r: &Row) -> R<Project> {
    Ok(Project {
        key: r.try_get(0)?,
        name: r.try_get(1)?,
        archived: r.try_get(2)?,
        created_at: time_of(r, 3)?,
        updated_at: time_of(r, 4)?,
    })
}

pub(super) fn list(c: &mut Db<'_, postgres::Client>) -> R<Vec<Project>> {
    rows(
        c,
        &format!("SELECT {COLUMNS} FROM projects ORDER BY key"),
        &[],
        project,
    )
}

pub(super) fn get(c: &mut Db<'_, postgres::Client>, key: &str) -> R<Option<Project>> {
    c.query_opt(
        &format!("SELECT {COLUMNS} FROM projects WHERE key = $1"),
        &[&key],
    )?
    .as_ref()
    .map(project)
    .transpose()
}

pub(super) fn create(tx: &mut Tx<'_, '_>, new: &Project) -> R<Written<Project>> {
    let (created, updated) = (at(&new.created_at)?, at(&new.updated_at)?);
    let added = tx.query_opt(
        &format!(
            "INSERT INTO projects (key, name, archived, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO NOTHING RETURNING {COLUMNS}"
        ),
        &[&new.key, &new.name, &new.archived, &created, &updated],
    )?;
    match added {
        Some(row) => Ok(Written::quiet(project(&row)?)),
        None => Err(StoreError::ProjectExists {
            key: new.key.clone(),
        }
        .into()),
    }
}

pub(super) fn update(
    tx: &mut Tx<'_, '_>,
    key: &str,
    patch: &ProjectPatch,
    now: &Timestamp,
) -> R<Written<Project>> {
    let now = at(now)?;
    let updated = tx.query_opt(
        &format!(
            "UPDATE projects SET name = coalesce($2, name), archived = coalesce($3, archived),
             updated_at = $4 WHERE key = $1 RETURNING {COLUMNS}"
        ),
        &[&key, &patch.name, &patch.archived, &now],
    )?;
    match updated {
        Some(row) => Ok(Written::quiet(project(&row)?)),
        None => Err(StoreError::ProjectNotFound {
            key: key.to_owned(),
        }
        .into()),
    }
}

/// The schema of project `key`, made if it is not there yet (under the
/// migration lock, as two gateways may open the project at once).
pub(super) fn schema_of(tx: &mut Tx<'_, '_>, key: &str) -> R<Written<String>> {
    let Some(row) = tx.query_opt(
        "SELECT id, current_schema() FROM projects WHERE key = $1",
        &[&key],
    )?
    else {
        return Err(StoreError::ProjectNotFound {
            key: key.to_owned(),
        }
        .into());
    };
    let (id, first): (i64, String) = (row.try_get(0)?, row.try_get(1)?);
    let schema = format!("{first}_p{id}");
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    tx.batch(&format!(
        "SET LOCAL client_min_messages = warning; CREATE SCHEMA IF NOT EXISTS \"{schema}\""
    ))?;
    Ok(Written::quiet(schema))
}
