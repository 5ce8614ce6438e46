//! The registry of projects on SQLite, and where each project's own store
//! lives: `<file>.projects/<key>.db` beside the first store's file.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{R, row, rows};
use crate::store::StoreError;
use crate::store::feed::Written;
use crate::store::model::{Project, ProjectPatch, Timestamp};

const COLUMNS: &str = "key, name, archived, created_at, updated_at";

fn project(r: &Row<'_>) -> rusqlite::Result<Project> {
    Ok(Project {
        key: r.get(0)?,
        name: r.get(1)?,
        archived: r.get(2)?,
        created_at: r.get(3)?,
        updated_at: r.get(4)?,
    })
}

pub(super) fn list(c: &Connection) -> R<Vec<Project>> {
    rows(
        c,
        &format!("SELECT {COLUMNS} FROM projects ORDER BY key"),
        [],
        project,
    )
}

pub(super) fn get(c: &Connection, key: &str) -> R<Option<Project>> {
    Ok(row(
        c,
        &format!("SELECT {COLUMNS} FROM projects WHERE key = ?1"),
        [key],
        project,
    )
    .optional()?)
}

pub(super) fn create(c: &Connection, new: &Project) -> R<Written<Project>> {
    let added = c
        .prepare_cached(
            "INSERT INTO projects (key, name, archived, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (key) DO NOTHING",
        )?
        .execute(params![
            new.key,
            new.name,
            new.archived,
            new.created_at,
            new.updated_at
        ])?;
    if added == 0 {
        return Err(StoreError::ProjectExists {
            key: new.key.clone(),
        }
        .into());
    }
    Ok(Written::quiet(new.clone()))
}

pub(super) fn update(
    c: &Connection,
    key: &str,
    patch: &ProjectPatch,
    now: &Timestamp,
) -> R<Written<Project>> {
    let updated = row(
        c,
        &format!(
            "UPDATE projects SET name = coalesce(?2, name), archived = coalesce(?3, archived),
             updated_at = ?4 WHERE key = ?1 RETURNING {COLUMNS}"
        ),
        params![key, patch.name, patch.archived, now.as_str()],
        project,
    )
    .optional()?;
    match updated {
        Some(project) => Ok(Written::quiet(project)),
        None => Err(StoreError::ProjectNotFound {
            key: key.to_owned(),
        }
        .into()),
    }
}

/// The file of project `key`'s store, beside `first` (the first store's file).
pub(super) fn file_of(first: &Path, key: &str) -> PathBuf {
    let mut folder = first.as_os_str().to_owned();
    folder.push(".projects");
    PathBuf::from(folder).join(format!("{key}.db"))
}
