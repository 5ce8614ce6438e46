//! Driver failures as callers see them. Each backend classifies its driver's
//! errors into a [`Cause`]; everything after that is shared: the
//! [`StoreError`] it is, and the log line (operation, database, process, thread and
//! the driver's text, which never reaches an answer).

use std::fmt::Display;

use super::StoreError;

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
    pub fn to_error(self) -> StoreError {
        match self {
            Self::Busy => StoreError::Busy,
            Self::ReadOnly => StoreError::ReadOnly,
            Self::Unavailable => StoreError::Unavailable,
            Self::SearchMissing => StoreError::SearchUnavailable,
            Self::Timeout => StoreError::Timeout,
            Self::Internal => StoreError::Internal,
        }
    }

    /// Refusals a healthy store gives under load are warnings; the rest are errors.
    fn is_expected(self) -> bool {
        matches!(self, Self::Busy | Self::SearchMissing | Self::Timeout)
    }
}

/// A failure inside a store operation: a driver error (classified, logged and
/// mapped at the edge by [`map_fail`]) or a domain outcome already expressed as
/// a store error (a refusal).
pub enum Fail<E> {
    Driver(E),
    Store(StoreError),
}

impl<E> From<StoreError> for Fail<E> {
    fn from(e: StoreError) -> Self {
        Fail::Store(e)
    }
}

/// Maps a failure to its store error; a driver error is logged with the
/// database it was talking to (the dispatcher's span adds tool and request id).
pub fn map_fail<E: std::error::Error>(
    op: &'static str,
    db: &dyn Display,
    fail: Fail<E>,
    classify: impl FnOnce(&E) -> Cause,
) -> StoreError {
    match fail {
        Fail::Store(e) => e,
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
