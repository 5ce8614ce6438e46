//! The store's [`ChangeMark`] on SQLite: one connection of its own asks
//! `PRAGMA data_version`, whose value changes when any other connection (of
//! this process or another, the CLI's included) has committed since that
//! connection last asked. It never waits: its busy timeout is zero, and a
//! busy answer is no mark (the caller then reads the store as usual).

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::store::ChangeMark;

pub(super) struct Watch {
    conn: Connection,
    /// The `data_version` last read; `None` before the first.
    seen: Option<i64>,
    generation: u64,
}

impl Watch {
    pub(super) fn open(path: &Path, flags: OpenFlags) -> rusqlite::Result<Self> {
        let conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(std::time::Duration::ZERO)?;
        Ok(Self {
            conn,
            seen: None,
            generation: 0,
        })
    }

    /// The generation moves on whenever `data_version` has; then the first
    /// claim expiry after `now` (an index seek of `tasks_by_claim_expiry`).
    pub(super) fn mark(&mut self, now: &str) -> rusqlite::Result<ChangeMark> {
        let version: i64 = self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))?;
        if self.seen != Some(version) {
            self.seen = Some(version);
            self.generation += 1;
        }
        let next_lapse = self
            .conn
            .prepare_cached("SELECT min(claim_expires_at) FROM tasks WHERE claim_expires_at > ?1")?
            .query_row([now], |r| r.get(0))?;
        Ok(ChangeMark {
            generation: self.generation,
            next_lapse,
        })
    }
}
