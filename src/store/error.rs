//! What a store call fails with, in the store's own terms: an entity that is
//! not there, a conflict carrying what the caller needs to recover, a store
//! that cannot serve now, or a fault inside it. The tools turn each into its
//! envelope (`src/tools/store_error.rs`), the one place that does.

use super::model::Counts;
use crate::envelope::ToolError;

/// A task, note or link, as what a [`StoreError::NotFound`] looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    Task,
    Note,
    Link,
}

impl Missing {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Task => "task",
            Self::Note => "note",
            Self::Link => "link",
        }
    }
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    // Not found.
    #[error("no {kind} with id `{id}`")]
    NotFound { kind: Missing, id: String },

    // Conflicts: each carries what the caller needs to recover.
    /// The entity's version moved on; nothing was written.
    #[error("the entity is now at version {current_version}")]
    VersionConflict { current_version: i64 },
    /// Another agent holds a live claim.
    #[error("`{holder}` holds a live claim until {expires_at}")]
    ClaimHeld { holder: String, expires_at: String },
    /// The caller holds no live claim (`holder`: who does, if anyone).
    #[error("the caller holds no live claim")]
    ClaimNotHeld { holder: Option<String> },
    /// The task's status is not one `operation` starts from.
    #[error("cannot {operation} a task whose status is `{status}`")]
    InvalidTransition {
        operation: &'static str,
        status: &'static str,
        allowed: &'static [&'static str],
    },
    /// Another note's title has this slug.
    #[error("note `{existing_id}` already has this slug")]
    SlugCollision { existing_id: String },
    /// Another note holds this `source_url`.
    #[error("note `{id}` already holds source_url {source_url}")]
    Duplicate {
        id: String,
        title: String,
        source_url: String,
    },
    /// A `depends_on` or `blocks` edge would close a cycle of waits: the
    /// nodes on it in order, each waiting for the next.
    #[error("the edge would close a cycle of {} tasks", cycle.len())]
    DependencyCycle { cycle: Vec<String> },
    /// No project with this key in the registry.
    #[error("no project `{key}`")]
    ProjectNotFound { key: String },
    /// The registry holds a project with this key already.
    #[error("project `{key}` exists")]
    ProjectExists { key: String },
    /// A restore without merge into a store that holds data.
    #[error("the store already holds data")]
    NotEmpty(Counts),

    // The store cannot serve now.
    /// Locked, pool exhausted, or a race the database gave up on.
    #[error("the store is busy")]
    Busy,
    /// Read-only file, role, transaction or deployment.
    #[error("the store is read-only")]
    ReadOnly,
    /// Cannot open, gone, unreachable.
    #[error("the store cannot be reached or opened")]
    Unavailable,
    /// The connection broke while a write was committing: it may or may not
    /// have been applied.
    #[error("the connection broke while a write was committing")]
    WriteOutcomeUnknown,
    /// A database migrated by a newer cairn than this one.
    #[error("schema version {found} is newer than the supported {supported}")]
    SchemaTooNew { found: i64, supported: i64 },
    /// A statement ran past the store's time limit.
    #[error("the store did not finish in time")]
    Timeout,
    /// The full-text index is missing.
    #[error("the full-text index is unavailable")]
    SearchUnavailable,
    // Idempotency keys.
    /// The key was used for a different request.
    #[error("the idempotency key was used for a different request")]
    KeyReused,
    /// The first request with the key is still running.
    #[error("the first request with this idempotency key is still running")]
    KeyInProgress,

    /// The location given for the store cannot be parsed.
    #[error("not a valid postgres:// URL")]
    InvalidUrl,

    // Faults.
    /// Anything else is a bug (the driver's text is logged, never shown).
    #[error("internal store error")]
    Internal,
    /// A [`Store::dump`](super::Store::dump) sink stopped the dump with its
    /// own error, handed back as it was.
    #[error("the dump was stopped: {0}")]
    Stopped(Box<ToolError>),
}

impl StoreError {
    /// A dump's sink refused a record with `error`.
    pub fn stopped(error: ToolError) -> Self {
        Self::Stopped(Box::new(error))
    }
}
