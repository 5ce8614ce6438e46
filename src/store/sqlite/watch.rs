//! The store's [`ChangeMark`] on SQLite: one connection of its own asks
//! `PRAGMA data_version`, whose value changes when any other connection (of
//! this process or another, the CLI's included) has committed since that
//! connection last asked. It never waits: its busy timeout is zero, and a
//! busy answer is no mark (the caller then reads the store as usual).
//!
//! Asking costs two read transactions (a lock of the WAL index and a futex
//! each), which was most of a cached board's cost. So the mark is kept with
//! the WAL-index header it was read under ([`WalIndex`]) and answered again,
//! with no transaction, while that header is unchanged and no claim it
//! counted on has lapsed.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::store::{ChangeMark, Now};

pub(super) struct Watch {
    conn: Connection,
    /// The WAL index of a store this process may write; declared after
    /// `conn`, so it is closed after it (see [`WalIndex`]).
    index: Option<WalIndex>,
    /// The `data_version` last read; `None` before the first.
    seen: Option<i64>,
    generation: u64,
    /// The last mark read from the database, and the WAL-index header read
    /// just before it.
    last: Option<(Header, ChangeMark)>,
    /// How many marks were read from the database (the rest were answered
    /// by an unchanged header).
    asked: u64,
}

impl Watch {
    pub(super) fn open(path: &Path, flags: OpenFlags, writable: bool) -> rusqlite::Result<Self> {
        let conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(std::time::Duration::ZERO)?;
        // A first read maps this connection into the WAL index, which it
        // then keeps (and SQLite keeps the file while any connection has it).
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        let index = (writable && mode.eq_ignore_ascii_case("wal"))
            .then(|| WalIndex::open(path))
            .flatten();
        Ok(Self {
            conn,
            index,
            seen: None,
            generation: 0,
            last: None,
            asked: 0,
        })
    }

    /// The generation moves on whenever `data_version` has; then the first
    /// claim expiry after `now` (an index seek of `tasks_by_claim_expiry`).
    /// With the WAL-index header as it was at the last mark, nothing has
    /// committed since, and that mark is current until its expiry.
    pub(super) fn mark(&mut self, now: &Now) -> rusqlite::Result<ChangeMark> {
        // Read before the database is asked: a commit in between then shows
        // as a changed header next time, never as a mark older than its header.
        let header = self.index.as_ref().and_then(WalIndex::header);
        if let (Some(header), Some((seen, mark))) = (&header, &self.last)
            && header == seen
            && mark
                .next_lapse
                .as_deref()
                .is_none_or(|lapse| now.as_str() < lapse)
        {
            return Ok(mark.clone());
        }
        self.asked += 1;
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
            .query_row([now.as_str()], |r| r.get(0))?;
        let mark = ChangeMark {
            generation: self.generation,
            next_lapse,
        };
        self.last = header.map(|header| (header, mark.clone()));
        Ok(mark)
    }

    /// How many marks were read from the database.
    #[cfg(test)]
    pub(super) fn asked(&self) -> u64 {
        self.asked
    }
}

/// Both copies of the WAL-index header: 48 bytes each, in the byte order of
/// the machine.
type Header = [u8; HEADER_BYTES];

const HEADER_BYTES: usize = 96;

/// The `-shm` file beside a database in WAL mode, mapped (never written,
/// never locked) for its header, whose change counter every commit moves.
/// SQLite writes the header's second copy, then the first, before a commit
/// returns, so a read that finds both copies equal and the same as before saw
/// no commit completed in between ("WAL-index format" in SQLite's file format
/// documentation; every SQLite since 3.7.0 shares it, as processes of
/// different versions share one file). SQLite's own connections read it from
/// the same shared mapping; a mapped read costs no system call, where a
/// `pread` was one per request.
///
/// Closing any descriptor of a file drops every POSIX lock this process
/// holds on it, SQLite's included: this one is closed only with the store.
struct WalIndex {
    /// The header's bytes, mapped shared and read-only.
    map: memmap2::Mmap,
    _file: std::fs::File,
}

/// `iVersion` of the WAL-index format.
const WAL_INDEX_VERSION: u32 = 3_007_000;

impl WalIndex {
    #[cfg(unix)]
    fn open(db: &Path) -> Option<Self> {
        let mut name = db.as_os_str().to_owned();
        name.push("-shm");
        let file = std::fs::File::open(name).ok()?;
        // Bytes past the end of a file cannot be read from its mapping.
        if file.metadata().ok()?.len() < HEADER_BYTES as u64 {
            return None;
        }
        // SAFETY: the file is not truncated while the mapping is read:
        // SQLite shrinks a `-shm` file only when it opens it with no other
        // connection on the database, and `Watch` reads the mapping only
        // while its own connection is open. Its bytes change under the
        // mapping, so they are read only by `header`, with volatile reads.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .len(HEADER_BYTES)
                .map(&file)
                .ok()?
        };
        let index = Self { map, _file: file };
        index.header().map(|_| index)
    }

    #[cfg(not(unix))]
    fn open(_db: &Path) -> Option<Self> {
        None
    }

    /// The header, when it reads whole: both copies equal, initialised, of
    /// the format known here.
    fn header(&self) -> Option<Header> {
        let mut header = [0; HEADER_BYTES];
        let mapped = self.map.as_ptr();
        let (first, second) = header.split_at_mut(HEADER_BYTES / 2);
        // As SQLite reads it: the first copy, a barrier, the second (which
        // a writer writes first), so copies that agree are one header.
        for (copy, at) in [(first, 0), (second, HEADER_BYTES / 2)] {
            for (i, byte) in copy.iter_mut().enumerate() {
                // SAFETY: `at + i` is within the mapping, `HEADER_BYTES`
                // long; other connections write these bytes, so each is read
                // volatile, never through a reference.
                *byte = unsafe { mapped.add(at + i).read_volatile() };
            }
            std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        }
        let (first, second) = header.split_at(HEADER_BYTES / 2);
        let version = u32::from_ne_bytes(first[..4].try_into().ok()?);
        let initialised = first[12] == 1;
        (first == second && version == WAL_INDEX_VERSION && initialised).then_some(header)
    }
}
