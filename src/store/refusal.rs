//! The refusals every backend raises the same way: not-found, conflicts and
//! transitions (as [`StoreError`]s), and the explanation of a conditional write that matched nothing.
//!
//! Backends decide a race in one conditional statement; when it matches no row
//! they read the task again and [`explain`] says why, so the answer a caller
//! gets never depends on which database decided it.

use super::error::{Missing, StoreError};
use super::model::{Task, TaskStatus, Transition};

pub fn task_not_found(id: &str) -> StoreError {
    not_found(Missing::Task, id)
}

pub fn note_not_found(id: &str) -> StoreError {
    not_found(Missing::Note, id)
}

pub fn link_not_found(id: &str) -> StoreError {
    not_found(Missing::Link, id)
}

fn not_found(kind: Missing, id: &str) -> StoreError {
    StoreError::NotFound {
        kind,
        id: id.to_owned(),
    }
}

pub fn version_conflict(current_version: i64) -> StoreError {
    StoreError::VersionConflict { current_version }
}

/// The version check of every conditional write: `expected` (when given) must be `current`.
pub fn check_version(expected: Option<i64>, current: i64) -> Result<(), StoreError> {
    match expected {
        Some(v) if v != current => Err(version_conflict(current)),
        _ => Ok(()),
    }
}

pub fn claim_held(holder: &str, expires_at: &str) -> StoreError {
    StoreError::ClaimHeld {
        holder: holder.to_owned(),
        expires_at: expires_at.to_owned(),
    }
}

pub fn claim_not_held(holder: Option<&str>) -> StoreError {
    StoreError::ClaimNotHeld {
        holder: holder.map(str::to_owned),
    }
}

/// `allowed` lists the statuses the operation may start from.
pub fn invalid_transition(
    operation: &'static str,
    status: &'static str,
    allowed: &'static [&'static str],
) -> StoreError {
    StoreError::InvalidTransition {
        operation,
        status,
        allowed,
    }
}

pub fn slug_collision(existing_id: &str) -> StoreError {
    StoreError::SlugCollision {
        existing_id: existing_id.to_owned(),
    }
}

pub fn duplicate(id: &str, title: &str, source_url: &str) -> StoreError {
    StoreError::Duplicate {
        id: id.to_owned(),
        title: title.to_owned(),
        source_url: source_url.to_owned(),
    }
}

pub fn search_unavailable() -> StoreError {
    StoreError::SearchUnavailable
}

/// A conditional task write that can match nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskWrite {
    /// A field update with an optional expected version.
    Update,
    Claim,
    Renew,
    Release,
    Transition(Transition),
}

/// Why `attempt` on task `id` matched nothing, given the task as it is now
/// (`None`: it does not exist) and the version the write expected: a version
/// that moved on explains it first, whatever else would have refused it.
pub fn explain(
    attempt: TaskWrite,
    id: &str,
    current: Option<&Task>,
    expected_version: Option<i64>,
) -> StoreError {
    let Some(task) = current else {
        return task_not_found(id);
    };
    if let Err(conflict) = check_version(expected_version, task.version) {
        return conflict;
    }
    let status = task.status.as_str();
    match attempt {
        TaskWrite::Update => version_conflict(task.version),
        TaskWrite::Claim => match &task.claim {
            Some(claim) if task.status == TaskStatus::Claimed => {
                claim_held(&claim.holder, &claim.expires_at)
            }
            _ => invalid_transition("claim", status, &["open"]),
        },
        TaskWrite::Renew | TaskWrite::Release => {
            claim_not_held(task.claim.as_ref().map(|c| c.holder.as_str()))
        }
        TaskWrite::Transition(transition) => {
            let allowed = transition.allowed_from();
            match &task.claim {
                Some(claim) if allowed.contains(&status) => {
                    claim_held(&claim.holder, &claim.expires_at)
                }
                _ => invalid_transition(transition.operation(), status, allowed),
            }
        }
    }
}
