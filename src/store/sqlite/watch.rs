//! The store's [`ChangeMark`] on SQLite: one connection of its own asks
//! `PRAGMA data_version`, whose value changes when any other connection has
//! committed since this one last asked. This connection never writes, so
//! every commit is another connection's: the store's own writer (the
//! store's own writes) as much as another process on the same file (the
//! CLI beside `cairn serve`). It never waits: its busy timeout is zero, and
//! a busy answer is no mark (the caller then reads the store as usual).
//!
//! While `data_version` is unchanged and no claim the last mark counted on
//! has lapsed, that mark is answered again without reading the first claim
//! expiry: a cached read costs one `PRAGMA` (one read transaction).

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::store::{ChangeMark, Now};

pub(super) struct Watch {
    conn: Connection,
    /// The `data_version` last read, and the mark made when it was read;
    /// `None` before the first.
    last: Option<(i64, ChangeMark)>,
    generation: u64,
    /// How many times the first claim expiry was read (the other marks
    /// were answered by an unchanged `data_version`).
    asked: u64,
}

impl Watch {
    pub(super) fn open(path: &Path, flags: OpenFlags) -> rusqlite::Result<Self> {
        let conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(std::time::Duration::ZERO)?;
        Ok(Self {
            conn,
            last: None,
            generation: 0,
            asked: 0,
        })
    }

    /// The generation moves on whenever `data_version` has; then the first
    /// claim expiry after `now` (an index seek of `tasks_by_claim_expiry`).
    /// With `data_version` as it was at the last mark, nothing has committed
    /// since, and that mark is current until its expiry.
    pub(super) fn mark(&mut self, now: &Now<'_>) -> rusqlite::Result<ChangeMark> {
        let version: i64 = self
            .conn
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |r| r.get(0))?;
        if let Some((seen, mark)) = &self.last
            && *seen == version
            && mark
                .next_lapse
                .as_deref()
                .is_none_or(|lapse| now.as_str() < lapse)
        {
            return Ok(mark.clone());
        }
        if self.last.as_ref().is_none_or(|(seen, _)| *seen != version) {
            self.generation += 1;
        }
        self.asked += 1;
        // Read after `data_version`: a commit in between shows as a changed
        // version next time, never as a mark older than its version.
        let next_lapse = self
            .conn
            .prepare_cached("SELECT min(claim_expires_at) FROM tasks WHERE claim_expires_at > ?1")?
            .query_row([now.as_str()], |r| r.get(0))?;
        let mark = ChangeMark {
            generation: self.generation,
            next_lapse,
        };
        self.last = Some((version, mark.clone()));
        Ok(mark)
    }

    /// How many times the first claim expiry was read.
    #[cfg(test)]
    pub(super) fn asked(&self) -> u64 {
        self.asked
    }
}
