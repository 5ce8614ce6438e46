//! The one place a [`StoreError`] becomes the wire's [`ToolError`]: its
//! code, message, details and suggestions, as every surface answers them.

use serde_json::{Value, json};

use crate::envelope::{ErrorCode, ToolError};
use crate::store::idempotency::IN_PROGRESS_RETRY_AFTER_MS;
use crate::store::{Missing, StoreError};

impl From<StoreError> for ToolError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound { kind, id } => not_found(kind, &id),
            StoreError::DependencyCycle { cycle } => ToolError::new(
                ErrorCode::DependencyCycle,
                format!(
                    "The edge would make a task wait on itself through {} tasks; nothing was written.",
                    cycle.len()
                ),
            )
            .detail("cycle", cycle)
            .suggest(["remove one edge of the cycle, or link the other way".to_owned()]),
            StoreError::ProjectNotFound { key } => crate::tools::projects::not_found(&key),
            StoreError::ProjectExists { key } => ToolError::new(
                ErrorCode::ProjectExists,
                format!("A project with key `{key}` exists already."),
            )
            .detail("project", key)
            .suggest(["pick another key, or use the project that has it".to_owned()]),
            StoreError::VersionConflict { current_version } => ToolError::new(
                ErrorCode::VersionConflict,
                format!(
                    "The entity changed since you read it (now version {current_version}); nothing was written."
                ),
            )
            .detail("current_version", current_version)
            .suggest(["read it again, reapply your change, and send the new version".to_owned()]),
            StoreError::ClaimHeld { holder, expires_at } => ToolError::new(
                ErrorCode::ClaimHeld,
                format!("Another agent (`{holder}`) holds a live claim on this task."),
            )
            .detail("holder", holder)
            .detail("expires_at", expires_at)
            .suggest(["pick another task, or wait until the claim expires".to_owned()]),
            StoreError::ClaimNotHeld { holder } => ToolError::new(
                ErrorCode::ClaimNotHeld,
                "You do not hold a live claim on this task.",
            )
            .detail("holder", holder.map_or(Value::Null, Value::from))
            .suggest(["task_claim it first".to_owned()]),
            StoreError::InvalidTransition {
                operation,
                status,
                allowed,
            } => ToolError::new(
                ErrorCode::InvalidTransition,
                format!("Cannot {operation} a task whose status is `{status}`."),
            )
            .detail("status", status)
            .detail("allowed", json!(allowed)),
            StoreError::SlugCollision { existing_id } => ToolError::new(
                ErrorCode::SlugCollision,
                "Another note already has a title with this slug; choose a different title.",
            )
            .detail("existing_id", existing_id),
            StoreError::Duplicate {
                id,
                title,
                source_url,
            } => ToolError::new(
                ErrorCode::Duplicate,
                "Another note already holds this source_url.",
            )
            .detail(
                "duplicate_of",
                json!({"id": id, "title": title, "source_url": source_url}),
            )
            .suggest(["update that note instead (note_write with its id)".to_owned()]),
            StoreError::NotEmpty(held) => ToolError::new(
                ErrorCode::StoreNotEmpty,
                "The store already holds data; restore into an empty store, or pass --merge to add what it lacks.",
            )
            .detail("tasks", held.tasks)
            .detail("notes", held.notes)
            .detail("links", held.links),
            StoreError::Busy => ToolError::new(
                ErrorCode::StoreBusy,
                "The store is busy with other writes; retry shortly.",
            )
            .retry_after(250),
            StoreError::ReadOnly => ToolError::new(
                ErrorCode::ReadOnly,
                "The store is read-only in this deployment; writes are refused.",
            ),
            StoreError::Unavailable => ToolError::new(
                ErrorCode::StoreUnavailable,
                "The store cannot be reached or opened; check the database and its settings.",
            )
            .retry_after(2_000),
            StoreError::WriteOutcomeUnknown => ToolError::new(
                ErrorCode::StoreUnavailable,
                "The connection to the store broke while this write was committing, so it may or may not have been applied; read before you retry.",
            )
            .detail("write_outcome", "unknown")
            .retry_after(2_000),
            StoreError::SchemaTooNew { found, supported } => ToolError::new(
                ErrorCode::StoreUnavailable,
                format!(
                    "The database has schema version {found}, newer than this cairn understands ({supported}); run a newer cairn."
                ),
            )
            .detail("schema_version", found)
            .detail("supported_schema_version", supported),
            StoreError::Timeout => ToolError::new(
                ErrorCode::Timeout,
                "The store did not finish in time; retry, or narrow the request.",
            ),
            StoreError::SearchUnavailable => ToolError::new(
                ErrorCode::SearchUnavailable,
                "The full-text index is unavailable; restarting cairn rebuilds it.",
            ),
            StoreError::KeyReused => ToolError::new(
                ErrorCode::IdempotencyKeyReused,
                "This idempotency key was already used for a different request; send a new key for a new request.",
            )
            .suggest(["use a fresh key for every distinct request, and the same key only to retry it".to_owned()]),
            StoreError::KeyInProgress => ToolError::new(
                ErrorCode::IdempotencyRequestInProgress,
                "The first request with this idempotency key is still running; retry shortly to get its answer.",
            )
            .retry_after(IN_PROGRESS_RETRY_AFTER_MS),
            StoreError::InvalidUrl => ToolError::invalid_input(
                "db",
                "is not a valid postgres:// URL (postgres://user@host:port/database)",
            ),
            StoreError::Internal => ToolError::internal(),
            StoreError::Stopped(sink) => *sink,
        }
    }
}

fn not_found(kind: Missing, id: &str) -> ToolError {
    match kind {
        Missing::Task => {
            ToolError::new(ErrorCode::TaskNotFound, format!("No task with id `{id}`."))
                .detail("id", id)
                .suggest(["task_list shows the tasks that exist".to_owned()])
        }
        Missing::Note => {
            ToolError::new(ErrorCode::NoteNotFound, format!("No note with id `{id}`."))
                .detail("id", id)
                .suggest(["note_list or search find the notes that exist".to_owned()])
        }
        Missing::Link => {
            ToolError::new(ErrorCode::LinkNotFound, format!("No link with id `{id}`."))
                .detail("id", id)
        }
    }
}

/// The refusals are what callers branch on, so each envelope is pinned here: its code,
/// the details it promises (docs/contract.md, "Errors"), and what its message names.
/// cargo-mutants cannot mutate the refusals' envelopes (a `ToolError` has
/// no default), so tests/MUTANTS.md lists the hand-made mutants these catch.
#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::envelope::{ErrorCode, ToolError};
    use crate::store::model::{Claim, Priority, Task, TaskStatus, Transition};
    use crate::store::refusal::{self, TaskWrite};

    // Each refusal as the surfaces answer it.
    fn task_not_found(id: &str) -> ToolError {
        refusal::task_not_found(id).into()
    }
    fn note_not_found(id: &str) -> ToolError {
        refusal::note_not_found(id).into()
    }
    fn link_not_found(id: &str) -> ToolError {
        refusal::link_not_found(id).into()
    }
    fn version_conflict(current_version: i64) -> ToolError {
        refusal::version_conflict(current_version).into()
    }
    fn check_version(expected: Option<i64>, current: i64) -> Result<(), ToolError> {
        refusal::check_version(expected, current).map_err(ToolError::from)
    }
    fn claim_held(holder: &str, expires_at: &str) -> ToolError {
        refusal::claim_held(holder, expires_at).into()
    }
    fn claim_not_held(holder: Option<&str>) -> ToolError {
        refusal::claim_not_held(holder).into()
    }
    fn invalid_transition(
        operation: &'static str,
        status: &'static str,
        allowed: &'static [&'static str],
    ) -> ToolError {
        refusal::invalid_transition(operation, status, allowed).into()
    }
    fn slug_collision(existing_id: &str) -> ToolError {
        refusal::slug_collision(existing_id).into()
    }
    fn duplicate(id: &str, title: &str, source_url: &str) -> ToolError {
        refusal::duplicate(id, title, source_url).into()
    }
    fn search_unavailable() -> ToolError {
        refusal::search_unavailable().into()
    }
    fn explain(
        attempt: TaskWrite,
        id: &str,
        current: Option<&Task>,
        expected_version: Option<i64>,
    ) -> ToolError {
        refusal::explain(attempt, id, current, expected_version).into()
    }

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
