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

/// The refusals are what callers branch on, so each is pinned here: its code,
/// the details it promises (docs/contract.md, "Errors"), and what its message names.
/// cargo-mutants cannot mutate these functions (a `ToolError` has no
/// default), so tests/MUTANTS.md lists the hand-made mutants these catch.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::model::{Claim, Priority};

    fn task(status: TaskStatus, holder: Option<&str>) -> Task {
        Task {
            id: "t1".into(),
            title: "T".into(),
            description: String::new(),
            tags: Vec::new(),
            priority: Priority::Normal,
            status,
            claim: holder.map(|h| Claim {
                holder: h.into(),
                expires_at: "2026-01-01T01:00:00.000000Z".into(),
            }),
            version: 7,
            created_at: String::new(),
            updated_at: String::new(),
        }
    }

    fn details(e: &ToolError) -> Value {
        Value::Object((*e.details).clone())
    }

    #[test]
    fn not_found_refusals_name_the_id_they_looked_for() {
        for (e, code, what) in [
            (task_not_found("abc123"), ErrorCode::TaskNotFound, "task"),
            (note_not_found("abc123"), ErrorCode::NoteNotFound, "note"),
            (link_not_found("abc123"), ErrorCode::LinkNotFound, "link"),
        ] {
            assert_eq!(e.code, code);
            assert_eq!(details(&e), json!({"id": "abc123"}));
            assert!(e.message.contains(what) && e.message.contains("`abc123`"));
        }
        assert!(!task_not_found("x").suggestions.is_empty());
        assert!(!note_not_found("x").suggestions.is_empty());
    }

    #[test]
    fn a_version_conflict_carries_the_current_version() {
        let e = version_conflict(4);
        assert_eq!(e.code, ErrorCode::VersionConflict);
        assert_eq!(details(&e), json!({"current_version": 4}));
        assert!(e.message.contains("version 4"));
        assert_eq!(check_version(Some(3), 4).unwrap_err().code, e.code);
        assert!(check_version(Some(4), 4).is_ok());
        assert!(check_version(None, 4).is_ok());
    }

    #[test]
    fn claim_refusals_name_the_holder_and_expiry() {
        let e = claim_held("ada", "2026-01-01T01:00:00.000000Z");
        assert_eq!(e.code, ErrorCode::ClaimHeld);
        assert_eq!(
            details(&e),
            json!({"holder": "ada", "expires_at": "2026-01-01T01:00:00.000000Z"})
        );
        assert!(e.message.contains("`ada`"));
        let e = claim_not_held(Some("ada"));
        assert_eq!(e.code, ErrorCode::ClaimNotHeld);
        assert_eq!(details(&e), json!({"holder": "ada"}));
        assert_eq!(details(&claim_not_held(None)), json!({"holder": null}));
    }

    #[test]
    fn an_invalid_transition_names_the_operation_status_and_allowed_starts() {
        let e = invalid_transition("reopen", "open", &["done", "cancelled"]);
        assert_eq!(e.code, ErrorCode::InvalidTransition);
        assert_eq!(
            details(&e),
            json!({"status": "open", "allowed": ["done", "cancelled"]})
        );
        assert_eq!(e.message, "Cannot reopen a task whose status is `open`.");
    }

    #[test]
    fn note_conflicts_point_at_the_note_in_the_way() {
        let e = slug_collision("n1");
        assert_eq!(e.code, ErrorCode::SlugCollision);
        assert_eq!(details(&e), json!({"existing_id": "n1"}));
        let e = duplicate("n1", "Title", "https://x.test/");
        assert_eq!(e.code, ErrorCode::Duplicate);
        assert_eq!(
            details(&e),
            json!({"duplicate_of": {"id": "n1", "title": "Title", "source_url": "https://x.test/"}})
        );
        assert_eq!(search_unavailable().code, ErrorCode::SearchUnavailable);
    }

    #[test]
    fn a_write_on_a_missing_task_is_task_not_found_whatever_the_attempt() {
        for attempt in [
            TaskWrite::Update,
            TaskWrite::Claim,
            TaskWrite::Renew,
            TaskWrite::Release,
            TaskWrite::Transition(Transition::Reopen),
        ] {
            let e = explain(attempt, "gone", None, None);
            assert_eq!(e.code, ErrorCode::TaskNotFound, "{attempt:?}");
            assert_eq!(e.details["id"], "gone");
        }
    }

    #[test]
    fn a_failed_update_is_a_version_conflict_at_the_current_version() {
        let e = explain(
            TaskWrite::Update,
            "t1",
            Some(&task(TaskStatus::Open, None)),
            None,
        );
        assert_eq!(e.code, ErrorCode::VersionConflict);
        assert_eq!(e.details["current_version"], 7);
    }

    #[test]
    fn a_failed_claim_is_claim_held_on_a_live_claim_else_invalid_transition() {
        let held = task(TaskStatus::Claimed, Some("ada"));
        let e = explain(TaskWrite::Claim, "t1", Some(&held), None);
        assert_eq!(e.code, ErrorCode::ClaimHeld);
        assert_eq!(e.details["holder"], "ada");
        for status in [TaskStatus::Done, TaskStatus::Cancelled] {
            let e = explain(TaskWrite::Claim, "t1", Some(&task(status, None)), None);
            assert_eq!(e.code, ErrorCode::InvalidTransition);
            assert_eq!(e.details["status"], status.as_str());
            assert_eq!(e.details["allowed"], json!(["open"]));
            assert!(e.message.starts_with("Cannot claim "));
        }
    }

    #[test]
    fn a_failed_renew_or_release_is_claim_not_held_naming_the_holder() {
        for attempt in [TaskWrite::Renew, TaskWrite::Release] {
            let e = explain(
                attempt,
                "t1",
                Some(&task(TaskStatus::Claimed, Some("ada"))),
                None,
            );
            assert_eq!(e.code, ErrorCode::ClaimNotHeld);
            assert_eq!(e.details["holder"], "ada");
            let e = explain(attempt, "t1", Some(&task(TaskStatus::Open, None)), None);
            assert_eq!(e.details["holder"], Value::Null);
        }
    }

    #[test]
    fn a_failed_transition_is_claim_held_only_from_an_allowed_status() {
        let claimed = task(TaskStatus::Claimed, Some("ada"));
        for t in [Transition::Complete, Transition::Cancel] {
            let e = explain(TaskWrite::Transition(t), "t1", Some(&claimed), None);
            assert_eq!(e.code, ErrorCode::ClaimHeld, "{t:?}");
            assert_eq!(e.details["expires_at"], "2026-01-01T01:00:00.000000Z");
            let done = task(TaskStatus::Done, None);
            let e = explain(TaskWrite::Transition(t), "t1", Some(&done), None);
            assert_eq!(e.code, ErrorCode::InvalidTransition);
            assert_eq!(e.details["allowed"], json!(["open", "claimed"]));
            assert!(e.message.starts_with(&format!("Cannot {} ", t.operation())));
        }
        // Reopening a claimed task: not an allowed start, so not claim_held.
        let e = explain(
            TaskWrite::Transition(Transition::Reopen),
            "t1",
            Some(&claimed),
            None,
        );
        assert_eq!(e.code, ErrorCode::InvalidTransition);
        assert_eq!(e.details["status"], "claimed");
        assert_eq!(e.details["allowed"], json!(["done", "cancelled"]));
        assert!(e.message.starts_with("Cannot reopen "));
    }
}
