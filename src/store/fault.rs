//! Driver failures as callers see them. Each backend classifies its driver's
//! errors into a [`Cause`]; everything after that is shared: the envelope code,
//! the retry hint, and the log line (operation, database, process, thread and
//! the driver's text, which never reaches an answer).

use std::fmt::Display;

use crate::envelope::{ErrorCode, ToolError};

/// What a driver error means to a caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// Locked, pool exhausted, or a race the database gave up on: `store_busy`.
    Busy,
    /// Read-only file, role or transaction: `read_only`.
    ReadOnly,
    /// Cannot open, gone, unreachable: `store_unavailable`.
    Unavailable,
    /// The full-text index is missing: `search_unavailable`.
    SearchMissing,
    /// A statement ran past the store's time limit: `timeout`.
    Timeout,
    /// Anything else is a bug: `internal_error`.
    Internal,
}

impl Cause {
    pub fn to_error(self) -> ToolError {
        match self {
            Self::Busy => busy(),
            Self::ReadOnly => read_only(),
            Self::Unavailable => unavailable(),
            Self::SearchMissing => super::refusal::search_unavailable(),
            Self::Timeout => timeout(),
            Self::Internal => ToolError::internal(),
        }
    }

    /// Refusals a healthy store gives under load are warnings; the rest are errors.
    fn is_expected(self) -> bool {
        matches!(self, Self::Busy | Self::SearchMissing | Self::Timeout)
    }
}

pub fn busy() -> ToolError {
    ToolError::new(
        ErrorCode::StoreBusy,
        "The store is busy with other writes; retry shortly.",
    )
    .retry_after(250)
}

pub fn read_only() -> ToolError {
    ToolError::new(
        ErrorCode::ReadOnly,
        "The store is read-only in this deployment; writes are refused.",
    )
}

pub fn unavailable() -> ToolError {
    ToolError::new(
        ErrorCode::StoreUnavailable,
        "The store cannot be reached or opened; check the database and its settings.",
    )
    .retry_after(2_000)
}

/// The connection broke while a write was committing: the database may or
/// may not have applied it, and nobody can tell until it answers again.
pub fn write_outcome_unknown() -> ToolError {
    ToolError::new(
        ErrorCode::StoreUnavailable,
        "The connection to the store broke while this write was committing, so it may or may not have been applied; read before you retry.",
    )
    .detail("write_outcome", "unknown")
    .retry_after(2_000)
}

pub fn timeout() -> ToolError {
    ToolError::new(
        ErrorCode::Timeout,
        "The store did not finish in time; retry, or narrow the request.",
    )
}

/// A database migrated by a newer cairn than this one.
pub fn schema_too_new(found: i64, supported: i64) -> ToolError {
    ToolError::new(
        ErrorCode::StoreUnavailable,
        format!(
            "The database has schema version {found}, newer than this cairn understands ({supported}); run a newer cairn."
        ),
    )
    .detail("schema_version", found)
    .detail("supported_schema_version", supported)
}

/// A failure inside a store operation: a driver error (classified, logged and
/// mapped at the edge by [`map_fail`]) or a domain outcome already expressed as
/// a tool error (a refusal).
pub enum Fail<E> {
    Driver(E),
    Tool(ToolError),
}

impl<E> From<ToolError> for Fail<E> {
    fn from(e: ToolError) -> Self {
        Fail::Tool(e)
    }
}

/// Maps a failure to its envelope code; a driver error is logged with the
/// database it was talking to (the dispatcher's span adds tool and request id).
pub fn map_fail<E: std::error::Error>(
    op: &'static str,
    db: &dyn Display,
    fail: Fail<E>,
    classify: impl FnOnce(&E) -> Cause,
) -> ToolError {
    match fail {
        Fail::Tool(t) => t,
        Fail::Driver(e) => {
            let cause = classify(&e);
            log(op, db, cause, &Chain(&e));
            cause.to_error()
        }
    }
}

/// An error and the errors under it, `: `-separated: a driver's own text
/// is often only its outermost layer (PostgreSQL's is "db error", the
/// server's message being its source).
struct Chain<'a>(&'a dyn std::error::Error);

impl Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut under = self.0.source();
        while let Some(e) = under {
            write!(f, ": {e}")?;
            under = e.source();
        }
        Ok(())
    }
}

/// Logs a driver failure with where it happened.
pub fn log(op: &'static str, db: &dyn Display, cause: Cause, error: &dyn Display) {
    let thread = std::thread::current();
    let thread = thread.name().unwrap_or("unnamed");
    let pid = std::process::id();
    if cause.is_expected() {
        tracing::warn!(op, %db, pid, thread, ?cause, error = %error, "store operation refused");
    } else {
        tracing::error!(op, %db, pid, thread, ?cause, error = %error, "store operation failed");
    }
}
