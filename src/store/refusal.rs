//! The refusals every backend raises the same way: not-found, conflicts and
//! transitions, and the explanation of a conditional write that matched nothing.
//!
//! Backends decide a race in one conditional statement; when it matches no row
//! they read the task again and [`explain`] says why, so the answer a caller
//! gets never depends on which database decided it.

use serde_json::{Value, json};

use super::model::{Task, TaskStatus, Transition};
use crate::envelope::{ErrorCode, ToolError};

pub fn task_not_found(id: &str) -> ToolError {
    ToolError::new(ErrorCode::TaskNotFound, format!("No task with id `{id}`."))
        .detail("id", id)
        .suggest(["task_list shows the tasks that exist".to_owned()])
}

pub fn note_not_found(id: &str) -> ToolError {
    ToolError::new(ErrorCode::NoteNotFound, format!("No note with id `{id}`."))
        .detail("id", id)
        .suggest(["note_list or search find the notes that exist".to_owned()])
}

pub fn link_not_found(id: &str) -> ToolError {
    ToolError::new(ErrorCode::LinkNotFound, format!("No link with id `{id}`.")).detail("id", id)
}

pub fn version_conflict(current_version: i64) -> ToolError {
    ToolError::new(
        ErrorCode::VersionConflict,
        format!(
            "The entity changed since you read it (now version {current_version}); nothing was written."
        ),
    )
    .detail("current_version", current_version)
    .suggest(["read it again, reapply your change, and send the new version".to_owned()])
}

/// The version check of every conditional write: `expected` (when given) must be `current`.
pub fn check_version(expected: Option<i64>, current: i64) -> Result<(), ToolError> {
    match expected {
        Some(v) if v != current => Err(version_conflict(current)),
        _ => Ok(()),
    }
}

pub fn claim_held(holder: &str, expires_at: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ClaimHeld,
        format!("Another agent (`{holder}`) holds a live claim on this task."),
    )
    .detail("holder", holder)
    .detail("expires_at", expires_at)
    .suggest(["pick another task, or wait until the claim expires".to_owned()])
}

pub fn claim_not_held(holder: Option<&str>) -> ToolError {
    ToolError::new(
        ErrorCode::ClaimNotHeld,
        "You do not hold a live claim on this task.",
    )
    .detail("holder", holder.map_or(Value::Null, Value::from))
    .suggest(["task_claim it first".to_owned()])
}

/// `allowed` lists the statuses the operation may start from.
pub fn invalid_transition(operation: &str, status: &str, allowed: &[&str]) -> ToolError {
    ToolError::new(
        ErrorCode::InvalidTransition,
        format!("Cannot {operation} a task whose status is `{status}`."),
    )
    .detail("status", status)
    .detail("allowed", json!(allowed))
}

pub fn slug_collision(existing_id: &str) -> ToolError {
    ToolError::new(
        ErrorCode::SlugCollision,
        "Another note already has a title with this slug; choose a different title.",
    )
    .detail("existing_id", existing_id)
}

pub fn duplicate(id: &str, title: &str, source_url: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Duplicate,
        "Another note already holds this source_url.",
    )
    .detail(
        "duplicate_of",
        json!({"id": id, "title": title, "source_url": source_url}),
    )
    .suggest(["update that note instead (note_write with its id)".to_owned()])
}

pub fn search_unavailable() -> ToolError {
    ToolError::new(
        ErrorCode::SearchUnavailable,
        "The full-text index is unavailable; restarting cairn rebuilds it.",
    )
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
) -> ToolError {
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
