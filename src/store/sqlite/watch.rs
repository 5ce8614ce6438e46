//! The store's [`ChangeMark`] on SQLite: each thread that asks has a
//! connection of its own asking `PRAGMA data_version`, whose value changes
//! when any other connection has committed since this one last asked. These
//! connections never write, so every commit is another connection's: the
//! store's own writer (the store's own writes) as much as another process on
//! the same file (the CLI beside `cairn serve`). They never wait: their busy
//! timeout is zero, and a busy answer is no mark (the caller then reads the
//! store as usual).
//!
//! The generation is one counter for the store, moved on by whichever
//! thread's connection first sees a commit (or by a thread asking for the
//! first time, which cannot know what it missed). A thread whose
//! `data_version` is unchanged has seen every commit up to its last look,
//! and each of those moved the counter after it committed: the counter it
//! reads now is past every mark made before them. No lock is shared: one
//! mutex around a single watching connection made every cached read of
//! every worker wait on the others' `PRAGMA`.
//!
//! While `data_version` is unchanged and no claim the thread's last mark
//! counted on has lapsed, that mark's first claim expiry is answered again
//! without reading it: a cached read costs one `PRAGMA` (one read
//! transaction).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::{Connection, OpenFlags};
use thread_local::ThreadLocal;

use crate::store::{ChangeMark, Now};

pub(super) struct Watch {
    path: PathBuf,
    flags: OpenFlags,
    /// Each asking thread's connection and what it saw last.
    looks: ThreadLocal<RefCell<Look>>,
    generation: AtomicU64,
    /// How many times the first claim expiry was read (the other marks
    /// were answered by an unchanged `data_version`).
    asked: AtomicU64,
}

/// One thread's connection, with the `data_version` it read last and the
/// first claim expiry read then; `None` before its first look.
struct Look {
    conn: Connection,
    last: Option<(i64, Option<String>)>,
}

impl Watch {
    /// Opens the first connection now, so that a file that cannot be read
    /// is refused when the store opens rather than on its first read.
    pub(super) fn open(path: &Path, flags: OpenFlags) -> rusqlite::Result<Self> {
        let watch = Self {
            path: path.to_owned(),
            flags,
            looks: ThreadLocal::new(),
            generation: AtomicU64::new(0),
            asked: AtomicU64::new(0),
        };
        watch.look()?;
        Ok(watch)
    }

    fn look(&self) -> rusqlite::Result<&RefCell<Look>> {
        self.looks.get_or_try(|| {
            let conn = Connection::open_with_flags(&self.path, self.flags)?;
            conn.busy_timeout(std::time::Duration::ZERO)?;
            Ok(RefCell::new(Look { conn, last: None }))
        })
    }

    /// The generation moves on whenever this thread's `data_version` has;
    /// then the first claim expiry after `now` (an index seek of
    /// `tasks_by_claim_expiry`). With `data_version` as it was at this
    /// thread's last look, nothing has committed since, and that expiry is
    /// current until it comes.
    pub(super) fn mark(&self, now: &Now<'_>) -> rusqlite::Result<ChangeMark> {
        let mut look = self.look()?.borrow_mut();
        let Look { conn, last } = &mut *look;
        let version: i64 = conn
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |r| r.get(0))?;
        if let Some((seen, next_lapse)) = last.as_ref()
            && *seen == version
            && next_lapse
                .as_deref()
                .is_none_or(|lapse| now.as_str() < lapse)
        {
            return Ok(ChangeMark {
                generation: self.generation.load(Ordering::Acquire),
                next_lapse: next_lapse.clone(),
            });
        }
        let generation = if last.as_ref().is_none_or(|(seen, _)| *seen != version) {
            self.generation.fetch_add(1, Ordering::AcqRel) + 1
        } else {
            self.generation.load(Ordering::Acquire)
        };
        self.asked.fetch_add(1, Ordering::Relaxed);
        // Read after `data_version`: a commit in between shows as a changed
        // version next time, never as a mark older than its version.
        let next_lapse: Option<String> = conn
            .prepare_cached("SELECT min(claim_expires_at) FROM tasks WHERE claim_expires_at > ?1")?
            .query_row([now.as_str()], |r| r.get(0))?;
        *last = Some((version, next_lapse.clone()));
        Ok(ChangeMark {
            generation,
            next_lapse,
        })
    }

    /// How many times the first claim expiry was read.
    #[cfg(test)]
    pub(super) fn asked(&self) -> u64 {
        self.asked.load(Ordering::Relaxed)
    }
}
