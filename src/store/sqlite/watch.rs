//! The store's [`ChangeMark`] on SQLite, from `PRAGMA data_version`, whose
//! value on a connection changes when any other connection has committed
//! since this one last asked. These connections never write, so every
//! commit is another connection's: the store's own writer as much as
//! another process on the same file (the CLI beside `cairn serve`). They
//! never wait: their busy timeout is zero, and a busy answer is no mark
//! (the caller then reads the store as usual).
//!
//! Each thread that asks has a connection of its own, so the usual mark
//! (nothing committed since this thread last looked) takes no lock: one
//! mutex around a single connection made every cached read of every worker
//! wait on the others' `PRAGMA`. When a thread sees a change (or looks for
//! the first time, and cannot know what it missed), it asks one shared
//! connection, the referee, under a lock. The generation moves on only when
//! the referee too sees a change, so one commit moves it once, however many
//! threads notice it: an answer cached by one worker after the commit is
//! answered by the others too.
//!
//! Why no cached answer older than a commit is served: a thread whose
//! `data_version` is unchanged has seen every commit up to its last look.
//! That look, or one before it, sent it to the referee after the commit, and
//! the referee's first look after that commit moved the generation. Every
//! answer cached under that generation or a later one was read after it
//! was made.
//!
//! While `data_version` is unchanged and no claim the thread's last mark
//! counted on has lapsed, that mark's first claim expiry is answered again
//! without reading it: a cached read costs one `PRAGMA` (one read
//! transaction).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use rusqlite::{Connection, OpenFlags};
use thread_local::ThreadLocal;

use crate::store::{ChangeMark, Now};

pub(super) struct Watch {
    path: PathBuf,
    flags: OpenFlags,
    /// Each asking thread's connection and what it saw last.
    looks: ThreadLocal<RefCell<Look>>,
    /// The connection asked when a thread sees a change, with the
    /// `data_version` it read last.
    referee: Mutex<(Connection, i64)>,
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
    /// Opens the referee now, so that a file that cannot be read is refused
    /// when the store opens rather than on its first read.
    pub(super) fn open(path: &Path, flags: OpenFlags) -> rusqlite::Result<Self> {
        let referee = connect(path, flags)?;
        let seen = data_version(&referee)?;
        Ok(Self {
            path: path.to_owned(),
            flags,
            looks: ThreadLocal::new(),
            referee: Mutex::new((referee, seen)),
            generation: AtomicU64::new(0),
            asked: AtomicU64::new(0),
        })
    }

    /// The generation, moved on first if this thread's `data_version` has
    /// and the referee's has too; then the first claim expiry after `now`
    /// (an index seek of `tasks_by_claim_expiry`). With `data_version` as it
    /// was at this thread's last look, nothing has committed since, and that
    /// expiry is current until it comes.
    pub(super) fn mark(&self, now: &Now<'_>) -> rusqlite::Result<ChangeMark> {
        let look = self.looks.get_or_try(|| {
            connect(&self.path, self.flags).map(|conn| RefCell::new(Look { conn, last: None }))
        })?;
        let Look { conn, last } = &mut *look.borrow_mut();
        let version = data_version(conn)?;
        let unchanged = last.as_ref().is_some_and(|(seen, _)| *seen == version);
        if unchanged
            && let Some((_, next_lapse)) = last.as_ref()
            && next_lapse
                .as_deref()
                .is_none_or(|lapse| now.as_str() < lapse)
        {
            return Ok(ChangeMark {
                generation: self.generation.load(Ordering::Acquire),
                next_lapse: next_lapse.clone(),
            });
        }
        if !unchanged {
            self.referee_looks()?;
        }
        let generation = self.generation.load(Ordering::Acquire);
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

    /// The referee asks `data_version` and moves the generation on if it
    /// changed: the commits this thread saw are then counted once.
    fn referee_looks(&self) -> rusqlite::Result<()> {
        let mut referee = self.referee.lock();
        let (conn, seen) = &mut *referee;
        let version = data_version(conn)?;
        if version != *seen {
            *seen = version;
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
        Ok(())
    }

    /// How many times the first claim expiry was read.
    #[cfg(test)]
    pub(super) fn asked(&self) -> u64 {
        self.asked.load(Ordering::Relaxed)
    }
}

/// A watching connection: it never waits for a lock.
fn connect(path: &Path, flags: OpenFlags) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(std::time::Duration::ZERO)?;
    Ok(conn)
}

fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("PRAGMA data_version")?
        .query_row([], |r| r.get(0))
}
