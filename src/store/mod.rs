//! The store: the database behind a small synchronous trait that speaks only
//! in domain records. Two backends implement it: SQLite (`sqlite/`, the
//! embedded default) and PostgreSQL (`postgres/`, for several gateways on one
//! database). Each holds only its SQL and its driver's error classification;
//! the rules are written once beside this file: [`model`] (records, the
//! claim-status rule, the transition table), [`error`] (what a store call
//! fails with; the tools map it to the wire's error), [`refusal`] (conflicts
//! and not-found, and why a conditional write matched nothing), [`page`]
//! (keyset pages), [`fault`] (driver failures as store errors) and
//! [`idempotency`] (idempotency keys and their stored answers).
//!
//! Every write that must not lose a race (versions, claims) is decided by the
//! database in one conditional statement or one transaction.

#[forbid(unsafe_code)]
pub mod error;
#[forbid(unsafe_code)]
pub mod fault;
#[forbid(unsafe_code)]
pub mod feed;
#[forbid(unsafe_code)]
pub mod idempotency;
#[forbid(unsafe_code)]
pub mod model;
#[forbid(unsafe_code)]
pub mod nowait;
#[forbid(unsafe_code)]
pub mod page;
#[forbid(unsafe_code)]
pub mod postgres;
#[forbid(unsafe_code)]
pub mod refusal;
// Only `sqlite::rank` has `unsafe` (see there); its siblings forbid it.
pub mod sqlite;
#[forbid(unsafe_code)]
pub mod transfer;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::envelope::ToolError;

pub use error::{Missing, StoreError};
pub use feed::{ChangeEvent, ChangeKind, ChangePage, ChangeQuery, ChangedEntity, EntityType};
pub use model::*;

/// What an answer read now depends on besides its arguments: a number that
/// moves on whenever anything held may have changed (through any connection,
/// by any process), and the first claim expiry still ahead, when a claimed
/// task reads as open again with no write. An answer kept since a mark is
/// current while the store's mark has the same generation and that expiry
/// has not come.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeMark {
    pub generation: u64,
    /// RFC 3339 UTC, fixed width (compares as text); `None`: no live claim.
    pub next_lapse: Option<String>,
}

impl ChangeMark {
    /// An answer read at `self` is still current at `now`, when the store's mark is `current`.
    pub fn still_current(&self, current: &ChangeMark, now: &Now<'_>) -> bool {
        self.generation == current.generation
            && self
                .next_lapse
                .as_deref()
                .is_none_or(|lapse| now.as_str() < lapse)
    }
}

/// Everything the tools need from a database. Times are [`Timestamp`]s
/// (RFC 3339 UTC text of fixed width); `now` comes from the caller's
/// clock and each write decides claim expiry against that one value, inside
/// the database, in the same statement that writes.
pub trait Store: Send + Sync + 'static {
    /// `sqlite` or `postgres`.
    fn kind(&self) -> &'static str;
    /// The applied schema version.
    fn schema_version(&self) -> Result<i64, StoreError>;
    /// How many tasks, notes and links there are.
    fn counts(&self) -> Result<Counts, StoreError>;
    /// Succeeds when the store would accept a write now (takes and drops the write lock).
    fn probe_write(&self) -> Result<(), StoreError>;

    // The registry of projects: read in the first store only (the one
    // `--db` names, which is the `default` project's), see [`model::project`].
    /// Every project, by key.
    fn project_list(&self) -> Result<Vec<Project>, StoreError>;
    fn project_get(&self, key: &str) -> Result<Option<Project>, StoreError>;
    /// Adds `project` (`ProjectExists` when its key is taken).
    fn project_create(&self, project: &Project) -> Result<Project, StoreError>;
    /// Renames or (un)archives `key` (`ProjectNotFound` when there is none).
    fn project_update(
        &self,
        key: &str,
        patch: &ProjectPatch,
        now: &Timestamp,
    ) -> Result<Project, StoreError>;
    /// Opens the store that holds the data of `key`, a project of this
    /// store's registry other than `default`, creating and migrating it on
    /// first use.
    fn project_store(&self, key: &str) -> Result<Arc<dyn Store>, StoreError>;
    /// Succeeds when the full-text index is present and answers.
    fn probe_search(&self) -> Result<(), StoreError>;

    /// Ids of `kind` starting with `prefix`, in id order, at most `limit`.
    fn find_ids(
        &self,
        kind: EntityKind,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<IdTitle>, StoreError>;

    fn task_create(&self, task: &NewTask, now: &Timestamp) -> Result<Task, StoreError>;
    fn task_get(&self, id: &str, now: &Timestamp) -> Result<Option<Task>, StoreError>;
    fn task_list(&self, query: &TaskQuery, now: &Timestamp) -> Result<Page<Task>, StoreError>;
    /// A page of `limit` for each board column asked for, in the order
    /// asked; each column is the `task_list` of its status. Backends that can
    /// read them in one round trip override this.
    fn task_board(
        &self,
        columns: &[BoardColumnQuery],
        limit: usize,
        now: &Timestamp,
    ) -> Result<Vec<Page<Task>>, StoreError> {
        columns
            .iter()
            .map(|column| {
                self.task_list(
                    &TaskQuery {
                        status: Some(column.status),
                        limit,
                        after: column.after.clone(),
                        ..TaskQuery::default()
                    },
                    now,
                )
            })
            .collect()
    }
    /// Applies `patch` if the version matches (when given): `task_not_found`, `version_conflict`.
    fn task_update(
        &self,
        id: &str,
        patch: &TaskPatch,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<Task, StoreError>;
    /// Claims (or re-claims, for the holder) until `expires_at`: `claim_held`,
    /// `invalid_transition`. Like every task write below, refused with
    /// `version_conflict` (and nothing written) when `expected_version` is
    /// given and is not the task's version, decided in the same statement.
    fn task_claim(
        &self,
        id: &str,
        agent: &str,
        expires_at: &Timestamp,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<Task, StoreError>;
    /// Extends the holder's live claim: `claim_not_held`.
    fn task_renew(
        &self,
        id: &str,
        agent: &str,
        expires_at: &Timestamp,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<Task, StoreError>;
    /// Drops the holder's live claim: `claim_not_held`.
    fn task_release(
        &self,
        id: &str,
        agent: &str,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<Task, StoreError>;
    /// Completes, cancels or reopens: `invalid_transition`, `claim_held`.
    fn task_transition(
        &self,
        id: &str,
        transition: Transition,
        agent: Option<&str>,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<Task, StoreError>;

    /// Creates a note: `slug_collision`, `duplicate`.
    fn note_create(&self, draft: &NoteDraft, now: &Timestamp) -> Result<NoteWritten, StoreError>;
    /// Rewrites a note: `note_not_found`, `version_conflict`, `slug_collision`, `duplicate`.
    fn note_update(
        &self,
        id: &str,
        draft: &NoteDraft,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<NoteWritten, StoreError>;
    /// The note with its wiki-links: `links` (the notes they name, in any order;
    /// the tool orders them as the content does) and `unresolved_links`.
    fn note_get(&self, id: &str) -> Result<Option<Note>, StoreError>;
    fn note_by_slug(&self, slug: &str) -> Result<Option<IdTitle>, StoreError>;
    fn note_list(&self, query: &NoteQuery) -> Result<Page<NoteSummary>, StoreError>;
    /// Deletes a note and every edge touching it: `note_not_found`, `version_conflict`.
    fn note_delete(
        &self,
        id: &str,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<IdTitle, StoreError>;

    /// Adds an edge; an identical edge already present is returned with `created: false`.
    fn link_add(
        &self,
        source: &str,
        target: &str,
        kind: LinkKind,
        now: &Timestamp,
    ) -> Result<(Edge, bool), StoreError>;
    fn link_remove(&self, id: &str, now: &Timestamp) -> Result<Edge, StoreError>;
    /// Nodes (tasks and notes) with these ids; unknown ids are skipped.
    fn nodes(&self, ids: &[String], now: &Timestamp) -> Result<Vec<Node>, StoreError>;
    /// Edges with an end in `ids`.
    fn edges_touching(&self, ids: &[String]) -> Result<Vec<Edge>, StoreError>;
    /// Every node and every edge.
    fn graph_all(&self, now: &Timestamp) -> Result<(Vec<Node>, Vec<Edge>), StoreError>;
    /// Finds (and with `fix`, removes) dangling edges, self loops and duplicates.
    fn graph_doctor(
        &self,
        fix: bool,
        orphan_limit: usize,
        now: &Timestamp,
    ) -> Result<DoctorScan, StoreError>;

    /// Loads many tasks and notes in one transaction (fixtures, imports, benches).
    /// Wiki-links in the notes are not resolved.
    fn bulk_load(
        &self,
        tasks: &[NewTask],
        notes: &[NoteDraft],
        now: &Timestamp,
    ) -> Result<(), StoreError>;

    /// Whether a point read is worth [`nowait::attempt`]ing on the caller's
    /// own thread: an embedded store's idle reader answers one in
    /// microseconds (SQLite); where every read is a network round trip
    /// (PostgreSQL) it is not, and calls go to the blocking pool.
    fn reads_without_waiting(&self) -> bool {
        false
    }

    /// Takes a call that writes once, as its last store call, to run on the
    /// store's own writer thread (SQLite: [`WriteCall`]); answers it back
    /// when the store runs its calls where they wait for nothing, and the
    /// caller then runs it as any other call.
    fn queue_write(self: Arc<Self>, call: WriteCall) -> Result<(), WriteCall> {
        Err(call)
    }

    /// The store's [`ChangeMark`] now, read without waiting: `None` when it
    /// cannot be told cheaply, and then no answer is served from a cache.
    /// PostgreSQL has none: gateways commit out of order, so no counter read
    /// from it says that nothing older is still to become visible.
    fn change_mark(&self, now: &Now<'_>) -> Option<ChangeMark> {
        let _ = now;
        None
    }

    /// A page of the change feed (see [`feed`]).
    fn changes(&self, query: &ChangeQuery) -> Result<ChangePage, StoreError>;
    /// The newest `seq`, updated as writes commit (through any gateway, on
    /// PostgreSQL); a change wakes SSE streams, which then read the feed.
    fn watch_changes(&self) -> tokio::sync::watch::Receiver<i64>;

    /// Ranked full-text hits for documents containing every term: `search_unavailable`.
    fn search(
        &self,
        terms: &[SearchTerm],
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<SearchHit>, Total), StoreError>;

    /// Every task, note and link, each kind in the order the store made them
    /// (which restore keeps, so lists and exports answer alike), read in one
    /// transaction (one consistent snapshot while others write) and handed to
    /// `sink` one at a time; an error from `sink` stops the dump and comes
    /// back as [`StoreError::Stopped`].
    fn dump(
        &self,
        sink: &mut dyn FnMut(transfer::Record) -> Result<(), ToolError>,
    ) -> Result<(), StoreError>;

    /// Claims an idempotency key in one atomic statement: `None` when the
    /// claim is now the caller's (the key was free, expired, or left in
    /// progress before `stale_before`), else the claim that holds it.
    fn idempotency_claim(
        &self,
        claim: &idempotency::KeyClaim,
    ) -> Result<Option<idempotency::HeldKey>, StoreError>;
    /// Writes the final answer over the caller's own claim (a claim taken
    /// over since is left alone).
    fn idempotency_finish(
        &self,
        scope: &idempotency::KeyScope,
        owner: &str,
        answer: &idempotency::StoredAnswer,
    ) -> Result<(), StoreError>;
    /// Drops the caller's own claim still in progress (its answer was not
    /// final), so a retry runs the request again.
    fn idempotency_release(
        &self,
        scope: &idempotency::KeyScope,
        owner: &str,
    ) -> Result<(), StoreError>;

    /// Loads a snapshot in one write transaction, keeping ids, versions,
    /// timestamps, claims and wiki-links: `store_not_empty` when the store
    /// holds anything, unless `merge` (then what it holds is skipped).
    fn restore(
        &self,
        snapshot: &transfer::Snapshot,
        merge: bool,
    ) -> Result<transfer::RestoreReport, StoreError>;
}

/// A tool call handed to the store's writer thread ([`Store::queue_write`]).
/// It runs there with the calls queued beside it, each write in the open
/// group of writes, and returns how to answer it; the writer answers it
/// only once that group's commit is over, with the commit's outcome (an
/// error there replaces the call's own answer).
pub type WriteCall = Box<dyn FnOnce() -> Queued + Send>;

/// A [`WriteCall`] that ran, waiting for its writes' commit.
pub struct Queued {
    /// Answers the call, given its writes' commit.
    pub answer: Box<dyn FnOnce(Result<(), StoreError>) + Send>,
    /// The call's span: a commit is logged in the span of the last call of
    /// its group, as the last writer of a group commits it elsewhere.
    pub span: tracing::Span,
}

/// How a store opens its database.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// How long a call waits for a connection or a lock before answering
    /// `store_busy` (or `store_unavailable` when the database cannot be reached).
    pub busy_timeout: Duration,
    /// Open without write access: every write answers `read_only`.
    pub read_only: bool,
    /// Connections in the reader pool (SQLite) or in the pool (PostgreSQL).
    pub readers: u32,
    /// How many change-feed events to keep; older ones are pruned.
    pub feed_retention: i64,
}

impl StoreOptions {
    /// Connections in the reader pool unless told otherwise.
    pub const DEFAULT_READERS: u32 = 8;
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            busy_timeout: Duration::from_secs(5),
            read_only: false,
            readers: Self::DEFAULT_READERS,
            feed_retention: feed::DEFAULT_RETENTION,
        }
    }
}

/// Where the data lives, as given by `--db` / `$CAIRN_DB`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A `postgres://` or `postgresql://` URL.
    Postgres(String),
    /// A SQLite file.
    Sqlite(std::path::PathBuf),
}

impl Location {
    pub fn parse(db: &str) -> Self {
        if db.starts_with("postgres://") || db.starts_with("postgresql://") {
            Self::Postgres(db.to_owned())
        } else {
            Self::Sqlite(db.into())
        }
    }
}

/// Opens the store `db` names (a `postgres://` URL or a SQLite path), creating
/// and migrating it on first start. One that cannot be opened answers
/// `store_unavailable`.
pub fn open(db: &str, options: &StoreOptions) -> Result<Arc<dyn Store>, StoreError> {
    match Location::parse(db) {
        Location::Postgres(url) => Ok(Arc::new(postgres::PgStore::open(&url, options)?)),
        Location::Sqlite(path) => open_sqlite_with(&path, options),
    }
}

/// Opens (creating and migrating on first start) the embedded SQLite store at `path`.
/// A file that cannot be opened answers `store_unavailable`.
pub fn open_sqlite(path: &Path) -> Result<Arc<dyn Store>, StoreError> {
    open_sqlite_with(path, &StoreOptions::default())
}

/// [`open_sqlite`] with explicit options.
pub fn open_sqlite_with(path: &Path, options: &StoreOptions) -> Result<Arc<dyn Store>, StoreError> {
    Ok(Arc::new(sqlite::SqliteStore::open(path, options)?))
}
