//! The store: the database behind a small synchronous trait. SQL stays in this
//! module (`sqlite.rs` and its `migrations/`); the trait speaks only in domain
//! records, so a PostgreSQL implementation can sit beside SQLite.
//!
//! Every write that must not lose a race (versions, claims) is decided by the
//! database in one conditional statement or one transaction; the refusals
//! it then returns (conflicts, not-found) come from [`refusal`], shared by every backend.

pub mod model;
pub mod sqlite;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::envelope::ToolError;

pub use model::*;

/// Everything the tools need from a database. Times are RFC 3339 UTC strings
/// of fixed width (see [`model::Timestamp`]); `now` comes from the caller so
/// claim expiry is decided in the database against one clock.
pub trait Store: Send + Sync + 'static {
    /// `sqlite` or `postgres`.
    fn kind(&self) -> &'static str;
    /// The applied schema version.
    fn schema_version(&self) -> Result<i64, ToolError>;
    /// How many tasks, notes and links there are.
    fn counts(&self) -> Result<Counts, ToolError>;
    /// Succeeds when the store would accept a write now (takes and drops the write lock).
    fn probe_write(&self) -> Result<(), ToolError>;
    /// Succeeds when the full-text index is present and answers.
    fn probe_search(&self) -> Result<(), ToolError>;

    /// Ids of `kind` starting with `prefix`, in id order, at most `limit`.
    fn find_ids(
        &self,
        kind: EntityKind,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<IdTitle>, ToolError>;

    fn task_create(&self, task: &NewTask, now: &str) -> Result<Task, ToolError>;
    fn task_get(&self, id: &str, now: &str) -> Result<Option<Task>, ToolError>;
    fn task_list(&self, query: &TaskQuery, now: &str) -> Result<Page<Task>, ToolError>;
    /// Applies `patch` if the version matches (when given): `task_not_found`, `version_conflict`.
    fn task_update(
        &self,
        id: &str,
        patch: &TaskPatch,
        expected_version: Option<i64>,
        now: &str,
    ) -> Result<Task, ToolError>;
    /// Claims (or re-claims, for the holder) until `expires_at`: `claim_held`, `invalid_transition`.
    fn task_claim(
        &self,
        id: &str,
        agent: &str,
        expires_at: &str,
        now: &str,
    ) -> Result<Task, ToolError>;
    /// Extends the holder's live claim: `claim_not_held`.
    fn task_renew(
        &self,
        id: &str,
        agent: &str,
        expires_at: &str,
        now: &str,
    ) -> Result<Task, ToolError>;
    /// Drops the holder's live claim: `claim_not_held`.
    fn task_release(&self, id: &str, agent: &str, now: &str) -> Result<Task, ToolError>;
    /// Completes, cancels or reopens: `invalid_transition`, `claim_held`.
    fn task_transition(
        &self,
        id: &str,
        transition: Transition,
        agent: Option<&str>,
        now: &str,
    ) -> Result<Task, ToolError>;

    /// Creates a note: `slug_collision`, `duplicate`.
    fn note_create(&self, draft: &NoteDraft, now: &str) -> Result<NoteWritten, ToolError>;
    /// Rewrites a note: `note_not_found`, `version_conflict`, `slug_collision`, `duplicate`.
    fn note_update(
        &self,
        id: &str,
        draft: &NoteDraft,
        expected_version: Option<i64>,
        now: &str,
    ) -> Result<NoteWritten, ToolError>;
    /// The note with its wiki-links: `links` (the notes they name, in any order;
    /// the tool orders them as the content does) and `unresolved_links`.
    fn note_get(&self, id: &str) -> Result<Option<Note>, ToolError>;
    fn note_by_slug(&self, slug: &str) -> Result<Option<IdTitle>, ToolError>;
    fn note_list(&self, query: &NoteQuery) -> Result<Page<NoteSummary>, ToolError>;
    /// Deletes a note and every edge touching it: `note_not_found`, `version_conflict`.
    fn note_delete(&self, id: &str, expected_version: Option<i64>) -> Result<IdTitle, ToolError>;

    /// Adds an edge; an identical edge already present is returned with `created: false`.
    fn link_add(
        &self,
        source: &str,
        target: &str,
        kind: LinkKind,
        now: &str,
    ) -> Result<(Edge, bool), ToolError>;
    fn link_remove(&self, id: &str) -> Result<Edge, ToolError>;
    /// Nodes (tasks and notes) with these ids; unknown ids are skipped.
    fn nodes(&self, ids: &[String], now: &str) -> Result<Vec<Node>, ToolError>;
    /// Edges with an end in `ids`.
    fn edges_touching(&self, ids: &[String]) -> Result<Vec<Edge>, ToolError>;
    /// Every node and every edge.
    fn graph_all(&self, now: &str) -> Result<(Vec<Node>, Vec<Edge>), ToolError>;
    /// Finds (and with `fix`, removes) dangling edges, self loops and duplicates.
    fn graph_doctor(
        &self,
        fix: bool,
        orphan_limit: usize,
        now: &str,
    ) -> Result<DoctorScan, ToolError>;

    /// Ranked full-text hits for documents containing every term: `search_unavailable`.
    fn search(
        &self,
        terms: &[SearchTerm],
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<SearchHit>, u64), ToolError>;
}

/// How the embedded store opens its file.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// How long a write waits for the lock before answering `store_busy`.
    pub busy_timeout: Duration,
    /// Open without write access: every write answers `read_only`.
    pub read_only: bool,
    /// Connections in the reader pool.
    pub readers: u32,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            busy_timeout: Duration::from_secs(5),
            read_only: false,
            readers: 8,
        }
    }
}

/// Opens (creating and migrating on first start) the embedded SQLite store at `path`.
/// A file that cannot be opened answers `store_unavailable`.
pub fn open_sqlite(path: &Path) -> Result<Arc<dyn Store>, ToolError> {
    open_sqlite_with(path, &StoreOptions::default())
}

/// [`open_sqlite`] with explicit options.
pub fn open_sqlite_with(path: &Path, options: &StoreOptions) -> Result<Arc<dyn Store>, ToolError> {
    Ok(Arc::new(sqlite::SqliteStore::open(path, options)?))
}

/// The refusals (conflicts, not-found) every backend raises the same way.
pub mod refusal {
    use serde_json::{Value, json};

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
}
