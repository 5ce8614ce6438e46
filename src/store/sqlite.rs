//! The embedded store: one SQLite file in WAL mode, one writer connection (so
//! in-process writers queue instead of fighting for the lock) and a reader pool.
//!
//! Driver failures are logged here (with the database file) and leave as
//! envelope codes without any driver text: busy or locked -> `store_busy`,
//! read-only or permission -> `read_only`, cannot open or gone ->
//! `store_unavailable`, a missing full-text index -> `search_unavailable`,
//! anything else -> `internal_error`.

use std::path::{Path, PathBuf};

use r2d2::{Pool, PooledConnection};
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{
    Connection, OpenFlags, OptionalExtension, Row, ToSql, TransactionBehavior, params,
    params_from_iter,
};
use uuid::Uuid;

use super::model::*;
use super::refusal;
use super::{Store, StoreOptions};
use crate::envelope::{ErrorCode, ToolError};

/// Versioned migrations, applied in order in one transaction; `PRAGMA user_version`
/// records the last one applied.
const MIGRATIONS: &[(i64, &str)] = &[(1, include_str!("migrations/0001_initial.sql"))];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = 1;

/// Recreates the full-text index when it is missing (same definition as migration 1).
const SEARCH_INDEX_REBUILD: &str = "
CREATE VIRTUAL TABLE search_index USING fts5 (
    title, body, kind UNINDEXED, entity_id UNINDEXED,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO search_index (rowid, title, body, kind, entity_id)
    SELECT seq * 2, title, description, 'task', id FROM tasks
    UNION ALL
    SELECT seq * 2 + 1, title, content, 'note', id FROM notes;
";

const TASK_COLUMNS: &str = "id, title, description, tags, priority, status, claim_holder, claim_expires_at, version, created_at, updated_at";
const NOTE_SUMMARY_COLUMNS: &str = "id, title, slug, tags, source_url, version, updated_at";
const EDGE_COLUMNS: &str = "id, source, target, kind";

/// SQLITE_READONLY_DBMOVED: the file was unlinked or renamed under an open connection.
const SQLITE_READONLY_DBMOVED: i32 = 1032;

type Conn = PooledConnection<SqliteConnectionManager>;

/// A failure inside a store operation: a driver error (mapped and logged at the
/// edge) or a domain outcome already expressed as a tool error.
enum Fail {
    Sql(rusqlite::Error),
    Tool(ToolError),
}

impl From<rusqlite::Error> for Fail {
    fn from(e: rusqlite::Error) -> Self {
        Fail::Sql(e)
    }
}

impl From<ToolError> for Fail {
    fn from(e: ToolError) -> Self {
        Fail::Tool(e)
    }
}

type R<T> = Result<T, Fail>;

/// What a driver error means to a caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    Busy,
    ReadOnly,
    Unavailable,
    SearchMissing,
    Internal,
}

fn classify(e: &rusqlite::Error) -> Cause {
    use rusqlite::ErrorCode as C;
    match e {
        rusqlite::Error::SqliteFailure(f, message) => match f.code {
            C::DatabaseBusy | C::DatabaseLocked => Cause::Busy,
            C::ReadOnly if f.extended_code == SQLITE_READONLY_DBMOVED => Cause::Unavailable,
            C::ReadOnly | C::PermissionDenied => Cause::ReadOnly,
            C::CannotOpen | C::NotADatabase | C::SystemIoFailure | C::DatabaseCorrupt => {
                Cause::Unavailable
            }
            _ if is_missing_index(message.as_deref()) => Cause::SearchMissing,
            _ => Cause::Internal,
        },
        _ => Cause::Internal,
    }
}

fn is_missing_index(message: Option<&str>) -> bool {
    message.is_some_and(|m| m.contains("no such table") && m.contains("search_index"))
}

fn busy() -> ToolError {
    ToolError::new(
        ErrorCode::StoreBusy,
        "The store is busy with other writes; retry shortly.",
    )
    .retry_after(250)
}

fn read_only() -> ToolError {
    ToolError::new(
        ErrorCode::ReadOnly,
        "The store is read-only in this deployment; writes are refused.",
    )
}

fn unavailable() -> ToolError {
    ToolError::new(
        ErrorCode::StoreUnavailable,
        "The store cannot be opened or is gone; check the database file and restart cairn.",
    )
}

/// The embedded SQLite store.
pub struct SqliteStore {
    path: PathBuf,
    writer: Pool<SqliteConnectionManager>,
    readers: Pool<SqliteConnectionManager>,
}

impl SqliteStore {
    /// Opens `path`, creating and migrating it on first start.
    pub fn open(path: &Path, options: &StoreOptions) -> Result<Self, ToolError> {
        let on_open = |e: rusqlite::Error| {
            tracing::error!(
                db = %path.display(),
                pid = std::process::id(),
                cause = %e,
                "cannot open the store"
            );
            match classify(&e) {
                Cause::Busy => busy(),
                _ => unavailable(),
            }
        };
        let base = OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let flags = if options.read_only {
            base | OpenFlags::SQLITE_OPEN_READ_ONLY
        } else {
            base | OpenFlags::SQLITE_OPEN_READ_WRITE
        };
        {
            let create = if options.read_only {
                flags
            } else {
                flags | OpenFlags::SQLITE_OPEN_CREATE
            };
            let mut conn = Connection::open_with_flags(path, create).map_err(on_open)?;
            conn.busy_timeout(options.busy_timeout).map_err(on_open)?;
            let version: i64 = conn
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(on_open)?;
            if version > SCHEMA_VERSION {
                tracing::error!(db = %path.display(), version, "the database was written by a newer cairn");
                return Err(unavailable());
            }
            // A write-protected file opens read-only even when asked for read-write;
            // it then serves reads and answers `read_only` to writes.
            let read_only =
                options.read_only || conn.is_readonly(rusqlite::MAIN_DB).map_err(on_open)?;
            if !read_only {
                conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
                    .map_err(on_open)?;
                migrate(&mut conn).map_err(on_open)?;
                ensure_search_index(&mut conn).map_err(on_open)?;
            } else if version < SCHEMA_VERSION {
                tracing::error!(db = %path.display(), version, "a read-only store cannot be migrated");
                return Err(unavailable());
            }
        }
        let busy_timeout = options.busy_timeout;
        let manager = || {
            SqliteConnectionManager::file(path)
                .with_flags(flags)
                .with_init(move |c| {
                    c.busy_timeout(busy_timeout)?;
                    c.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")
                })
        };
        let pool = |size: u32| {
            Pool::builder()
                .max_size(size)
                .min_idle(Some(1))
                .connection_timeout(busy_timeout.max(std::time::Duration::from_millis(100)))
                .build(manager())
                .map_err(|e| {
                    tracing::error!(db = %path.display(), cause = %e, "cannot open the store's connections");
                    unavailable()
                })
        };
        Ok(Self {
            path: path.to_owned(),
            writer: pool(1)?,
            readers: pool(options.readers.max(1))?,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Loads many tasks and notes in one transaction (fixtures, imports).
    /// Wiki-links in the notes are not resolved.
    pub fn bulk_load(
        &self,
        tasks: &[NewTask],
        notes: &[NoteDraft],
        now: &str,
    ) -> Result<(), ToolError> {
        self.write("bulk_load", |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            {
                let mut insert_task = tx.prepare(
                    "INSERT INTO tasks (id, title, description, tags, priority, created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                )?;
                let mut insert_note = tx.prepare(
                    "INSERT INTO notes (id, title, slug, content, tags, source_url, created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
                )?;
                let mut index = tx.prepare(
                    "INSERT INTO search_index (rowid, title, body, kind, entity_id) VALUES (?1, ?2, ?3, ?4, ?5)",
                )?;
                for t in tasks {
                    insert_task.execute(params![
                        t.id,
                        t.title,
                        t.description,
                        tags_json(&t.tags),
                        t.priority.as_str(),
                        now
                    ])?;
                    let seq = tx.last_insert_rowid();
                    index.execute(params![seq * 2, t.title, t.description, "task", t.id])?;
                }
                for n in notes {
                    insert_note.execute(params![
                        n.id,
                        n.title,
                        n.slug,
                        n.content,
                        tags_json(n.tags.as_deref().unwrap_or_default()),
                        n.source_url.as_deref().filter(|u| !u.is_empty()),
                        now
                    ])?;
                    let seq = tx.last_insert_rowid();
                    index.execute(params![seq * 2 + 1, n.title, n.content, "note", n.id])?;
                }
            }
            tx.commit()?;
            Ok(())
        })
    }

    /// The store is gone when its file is: pooled connections would otherwise
    /// keep serving an unlinked file.
    fn check_present(&self) -> Result<(), ToolError> {
        if std::fs::metadata(&self.path).is_err() {
            tracing::error!(
                db = %self.path.display(),
                pid = std::process::id(),
                "the database file is gone"
            );
            return Err(unavailable());
        }
        Ok(())
    }

    fn connection(&self, pool: &Pool<SqliteConnectionManager>) -> Result<Conn, ToolError> {
        self.check_present()?;
        pool.get().map_err(|e| {
            tracing::warn!(
                db = %self.path.display(),
                pid = std::process::id(),
                thread = std::thread::current().name().unwrap_or("unnamed"),
                cause = %e,
                "no store connection became free in time"
            );
            if std::fs::metadata(&self.path).is_err() {
                unavailable()
            } else {
                busy()
            }
        })
    }

    fn read<T>(
        &self,
        op: &'static str,
        f: impl FnOnce(&Connection) -> R<T>,
    ) -> Result<T, ToolError> {
        let conn = self.connection(&self.readers)?;
        f(&conn).map_err(|e| self.map_fail(op, e))
    }

    fn write<T>(
        &self,
        op: &'static str,
        f: impl FnOnce(&mut Connection) -> R<T>,
    ) -> Result<T, ToolError> {
        let mut conn = self.connection(&self.writer)?;
        f(&mut conn).map_err(|e| self.map_fail(op, e))
    }

    /// Maps a failure to its envelope code; driver errors are logged with the
    /// database file, process and thread (the dispatcher's span adds tool and request id).
    fn map_fail(&self, op: &'static str, fail: Fail) -> ToolError {
        let e = match fail {
            Fail::Tool(t) => return t,
            Fail::Sql(e) => e,
        };
        let cause = classify(&e);
        let thread = std::thread::current();
        let thread = thread.name().unwrap_or("unnamed");
        let db = self.path.display();
        let pid = std::process::id();
        match cause {
            Cause::Busy | Cause::SearchMissing => {
                tracing::warn!(op, %db, pid, thread, cause = %e, "store operation refused")
            }
            _ => tracing::error!(op, %db, pid, thread, cause = %e, "store operation failed"),
        }
        match cause {
            Cause::Busy => busy(),
            Cause::ReadOnly => read_only(),
            Cause::Unavailable => unavailable(),
            Cause::SearchMissing => refusal::search_unavailable(),
            Cause::Internal => ToolError::internal(),
        }
    }
}

fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (version, sql) in MIGRATIONS {
        if *version > current {
            tx.execute_batch(sql)?;
            tx.pragma_update(None, "user_version", version)?;
        }
    }
    tx.commit()
}

/// Rebuilds the full-text index if someone dropped it.
fn ensure_search_index(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let present: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'search_index')",
        [],
        |r| r.get(0),
    )?;
    if !present {
        tracing::warn!("the full-text index was missing; rebuilding it");
        tx.execute_batch(SEARCH_INDEX_REBUILD)?;
    }
    tx.commit()
}

fn tags_json(tags: &[String]) -> String {
    serde_json::to_string(tags).unwrap_or_else(|_| "[]".to_owned())
}

fn parse_tags(s: &str) -> Vec<String> {
    serde_json::from_str(s).unwrap_or_default()
}

/// The upper bound of ids starting with `prefix` ('~' sorts after every id character).
fn prefix_end(prefix: &str) -> String {
    format!("{prefix}~")
}

fn task_from_row(row: &Row, now: &str) -> rusqlite::Result<Task> {
    let stored: String = row.get(5)?;
    let holder: Option<String> = row.get(6)?;
    let expires_at: Option<String> = row.get(7)?;
    let claim = match (stored.as_str(), holder, expires_at) {
        ("open", Some(holder), Some(expires_at)) if expires_at.as_str() > now => {
            Some(Claim { holder, expires_at })
        }
        _ => None,
    };
    let status = match stored.as_str() {
        "done" => TaskStatus::Done,
        "cancelled" => TaskStatus::Cancelled,
        _ if claim.is_some() => TaskStatus::Claimed,
        _ => TaskStatus::Open,
    };
    Ok(Task {
        id: row.get(0)?,
        title: row.get(1)?,
        description: row.get(2)?,
        tags: parse_tags(&row.get::<_, String>(3)?),
        priority: Priority::parse(&row.get::<_, String>(4)?),
        status,
        claim,
        version: row.get(8)?,
        created_at: row.get(9)?,
        updated_at: row.get(10)?,
    })
}

fn summary_from_row(row: &Row) -> rusqlite::Result<NoteSummary> {
    Ok(NoteSummary {
        id: row.get(0)?,
        title: row.get(1)?,
        slug: row.get(2)?,
        tags: parse_tags(&row.get::<_, String>(3)?),
        source_url: row.get(4)?,
        version: row.get(5)?,
        updated_at: row.get(6)?,
    })
}

fn edge_from_row(row: &Row) -> rusqlite::Result<Edge> {
    let kind: String = row.get(3)?;
    Ok(Edge {
        id: row.get(0)?,
        source: row.get(1)?,
        target: row.get(2)?,
        kind: LinkKind::parse(&kind).unwrap_or(LinkKind::RelatesTo),
    })
}

fn load_task(conn: &Connection, id: &str, now: &str) -> rusqlite::Result<Option<Task>> {
    conn.prepare_cached(&format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"))?
        .query_row([id], |r| task_from_row(r, now))
        .optional()
}

/// Replaces the index entry of one entity. A missing index is logged and
/// skipped, so writes keep working while search reports itself unavailable.
fn index_entity(
    conn: &Connection,
    rowid: i64,
    kind: &str,
    id: &str,
    title: &str,
    body: &str,
) -> R<()> {
    let result = conn
        .prepare_cached("DELETE FROM search_index WHERE rowid = ?1")
        .and_then(|mut s| s.execute([rowid]))
        .and_then(|_| {
            conn.prepare_cached(
                "INSERT INTO search_index (rowid, title, body, kind, entity_id) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![rowid, title, body, kind, id])
        });
    match result {
        Ok(_) => Ok(()),
        Err(rusqlite::Error::SqliteFailure(_, ref m)) if is_missing_index(m.as_deref()) => {
            tracing::warn!(id, "the full-text index is missing; entity not indexed");
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

fn unindex(conn: &Connection, rowid: i64) -> R<()> {
    match conn.execute("DELETE FROM search_index WHERE rowid = ?1", [rowid]) {
        Ok(_) => Ok(()),
        Err(rusqlite::Error::SqliteFailure(_, ref m)) if is_missing_index(m.as_deref()) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// After a conditional task update matched nothing: explains why.
fn explain_task_refusal(
    conn: &Connection,
    id: &str,
    now: &str,
    explain: impl FnOnce(&Task) -> ToolError,
) -> Fail {
    match load_task(conn, id, now) {
        Ok(None) => refusal::task_not_found(id).into(),
        Ok(Some(task)) => explain(&task).into(),
        Err(e) => e.into(),
    }
}

/// An FTS5 query of quoted terms (AND), so no text a caller types is FTS syntax.
fn fts5_query(terms: &[SearchTerm]) -> String {
    terms
        .iter()
        .map(|t| {
            let quoted = format!("\"{}\"", t.word.replace('"', "\"\""));
            if t.prefix {
                format!("{quoted}*")
            } else {
                quoted
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A WHERE clause and its positional parameters, built filter by filter.
#[derive(Default)]
struct Filter {
    clauses: Vec<String>,
    params: Vec<Box<dyn ToSql>>,
}

impl Filter {
    fn push(&mut self, clause: &str, values: Vec<Box<dyn ToSql>>) {
        self.clauses.push(clause.to_owned());
        self.params.extend(values);
    }

    fn sql(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", self.clauses.join(" AND "))
        }
    }
}

fn boxed(v: impl ToSql + 'static) -> Box<dyn ToSql> {
    Box::new(v)
}

/// A list item's position in (updated_at, id) order.
trait Keyed {
    fn keyset(&self) -> Keyset;
}

impl Keyed for Task {
    fn keyset(&self) -> Keyset {
        Keyset {
            updated_at: self.updated_at.clone(),
            id: self.id.clone(),
        }
    }
}

impl Keyed for NoteSummary {
    fn keyset(&self) -> Keyset {
        Keyset {
            updated_at: self.updated_at.clone(),
            id: self.id.clone(),
        }
    }
}

/// Runs a keyset page query: `filter` narrows, `after` positions, one extra row tells if more follow.
fn keyset_page<T: Keyed>(
    conn: &Connection,
    table: &str,
    columns: &str,
    mut filter: Filter,
    after: Option<&Keyset>,
    limit: usize,
    map: impl Fn(&Row) -> rusqlite::Result<T>,
) -> R<Page<T>> {
    let total: i64 = conn.query_row(
        &format!("SELECT count(*) FROM {table} {}", filter.sql()),
        params_from_iter(filter.params.iter()),
        |r| r.get(0),
    )?;
    if let Some(k) = after {
        filter.push(
            "(updated_at, id) < (?, ?)",
            vec![boxed(k.updated_at.clone()), boxed(k.id.clone())],
        );
    }
    let sql = format!(
        "SELECT {columns} FROM {table} {} ORDER BY updated_at DESC, id DESC LIMIT {}",
        filter.sql(),
        limit + 1
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut items = stmt
        .query_map(params_from_iter(filter.params.iter()), map)?
        .collect::<rusqlite::Result<Vec<T>>>()?;
    let next = if items.len() > limit {
        items.truncate(limit);
        items.last().map(Keyed::keyset)
    } else {
        None
    };
    Ok(Page {
        items,
        next,
        total: total as u64,
    })
}

fn task_filter(query: &TaskQuery, now: &str) -> Filter {
    let mut f = Filter::default();
    match query.status {
        None => {}
        Some(TaskStatus::Open) => f.push(
            "status = 'open' AND (claim_expires_at IS NULL OR claim_expires_at <= ?)",
            vec![boxed(now.to_owned())],
        ),
        // `+status` keeps the planner on the (small) live-claim index.
        Some(TaskStatus::Claimed) => f.push(
            "+status = 'open' AND claim_expires_at > ?",
            vec![boxed(now.to_owned())],
        ),
        Some(s) => f.push("status = ?", vec![boxed(s.as_str())]),
    }
    if let Some(tag) = &query.tag {
        f.push(
            "EXISTS (SELECT 1 FROM json_each(tasks.tags) WHERE value = ?)",
            vec![boxed(tag.clone())],
        );
    }
    if let Some(agent) = &query.claimant {
        f.push(
            "+status = 'open' AND claim_holder = ? AND claim_expires_at > ?",
            vec![boxed(agent.clone()), boxed(now.to_owned())],
        );
    }
    if let Some(q) = &query.q {
        let q = q.to_lowercase();
        f.push(
            "(instr(lower(title), ?) > 0 OR instr(lower(description), ?) > 0)",
            vec![boxed(q.clone()), boxed(q)],
        );
    }
    f
}

fn note_filter(query: &NoteQuery) -> Filter {
    let mut f = Filter::default();
    if let Some(tag) = &query.tag {
        f.push(
            "EXISTS (SELECT 1 FROM json_each(notes.tags) WHERE value = ?)",
            vec![boxed(tag.clone())],
        );
    }
    if let Some(q) = &query.q {
        let q = q.to_lowercase();
        f.push(
            "(instr(lower(title), ?) > 0 OR instr(lower(content), ?) > 0)",
            vec![boxed(q.clone()), boxed(q)],
        );
    }
    f
}

/// Refuses a note write whose source_url or slug another note holds.
fn check_note_unique(conn: &Connection, draft: &NoteDraft, own_id: Option<&str>) -> R<()> {
    if let Some(url) = draft.source_url.as_ref().filter(|u| !u.is_empty()) {
        let other: Option<(String, String)> = conn
            .query_row(
                "SELECT id, title FROM notes WHERE source_url = ?1 AND id IS NOT ?2",
                params![url, own_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        if let Some((id, title)) = other {
            return Err(refusal::duplicate(&id, &title, url).into());
        }
    }
    let other: Option<String> = conn
        .query_row(
            "SELECT id FROM notes WHERE slug = ?1 AND id IS NOT ?2",
            params![draft.slug, own_id],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(id) = other {
        return Err(refusal::slug_collision(&id).into());
    }
    Ok(())
}

/// Rewrites a note's wiki-link references and every `links_to` edge they make:
/// from this note to the notes its links name, and to this note from notes
/// whose links name its (possibly new) slug.
fn relink(conn: &Connection, id: &str, slug: &str, wiki_links: &[String], now: &str) -> R<()> {
    conn.execute("DELETE FROM note_refs WHERE source_id = ?1", [id])?;
    {
        let mut insert = conn
            .prepare_cached("INSERT OR IGNORE INTO note_refs (source_id, slug) VALUES (?1, ?2)")?;
        for link in wiki_links {
            insert.execute(params![id, link])?;
        }
    }
    conn.execute(
        "DELETE FROM links WHERE kind = 'links_to' AND source = ?1",
        [id],
    )?;
    conn.execute(
        "DELETE FROM links WHERE kind = 'links_to' AND target = ?1
           AND source NOT IN (SELECT source_id FROM note_refs WHERE slug = ?2)",
        params![id, slug],
    )?;
    let outgoing: Vec<String> = conn
        .prepare_cached(
            "SELECT DISTINCT n.id FROM note_refs r JOIN notes n ON n.slug = r.slug
             WHERE r.source_id = ?1 AND n.id <> ?1",
        )?
        .query_map([id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let incoming: Vec<String> = conn
        .prepare_cached(
            "SELECT r.source_id FROM note_refs r WHERE r.slug = ?1 AND r.source_id <> ?2
             AND NOT EXISTS (SELECT 1 FROM links l WHERE l.source = r.source_id AND l.target = ?2 AND l.kind = 'links_to')",
        )?
        .query_map(params![slug, id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO links (id, source, target, kind, created_at) VALUES (?1, ?2, ?3, 'links_to', ?4)",
    )?;
    for target in &outgoing {
        insert.execute(params![new_id(), id, target, now])?;
    }
    for source in &incoming {
        insert.execute(params![new_id(), source, id, now])?;
    }
    Ok(())
}

fn new_id() -> String {
    Uuid::new_v4().simple().to_string()
}

/// The notes a note's wiki-links name (self included), by slug.
fn note_refs_resolved(conn: &Connection, id: &str) -> R<Vec<NoteLink>> {
    Ok(conn
        .prepare_cached(
            "SELECT n.id, n.title, n.slug FROM note_refs r JOIN notes n ON n.slug = r.slug
             WHERE r.source_id = ?1 ORDER BY n.slug",
        )?
        .query_map([id], |r| {
            Ok(NoteLink {
                id: r.get(0)?,
                title: r.get(1)?,
                slug: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?)
}

/// The wiki-links of a note: resolved targets and unresolved slugs.
fn note_links(conn: &Connection, id: &str) -> R<(Vec<String>, Vec<String>)> {
    let linked: Vec<String> = conn
        .prepare_cached(
            "SELECT target FROM links WHERE source = ?1 AND kind = 'links_to' ORDER BY target",
        )?
        .query_map([id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let unresolved: Vec<String> = conn
        .prepare_cached(
            "SELECT r.slug FROM note_refs r WHERE r.source_id = ?1
             AND NOT EXISTS (SELECT 1 FROM notes n WHERE n.slug = r.slug) ORDER BY r.slug",
        )?
        .query_map([id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok((linked, unresolved))
}

fn written(conn: &Connection, id: &str, created: bool) -> R<NoteWritten> {
    let (title, slug, version, updated_at) = conn.query_row(
        "SELECT title, slug, version, updated_at FROM notes WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    let (linked, unresolved_links) = note_links(conn, id)?;
    Ok(NoteWritten {
        id: id.to_owned(),
        title,
        slug,
        version,
        created,
        updated_at,
        linked,
        unresolved_links,
    })
}

/// Runs `sql` (with one `{ids}` placeholder for a list of `?`) over `ids` in chunks.
fn for_chunks<T>(
    conn: &Connection,
    sql: &str,
    ids: &[String],
    map: impl Fn(&Row) -> rusqlite::Result<T>,
) -> R<Vec<T>> {
    let mut out = Vec::new();
    for chunk in ids.chunks(400) {
        let marks = vec!["?"; chunk.len()].join(", ");
        let mut stmt = conn.prepare(&sql.replace("{ids}", &marks))?;
        // The list appears twice in edge queries; bind it as many times as it appears.
        let repeats = sql.matches("{ids}").count();
        let params: Vec<&String> = (0..repeats).flat_map(|_| chunk.iter()).collect();
        let rows = stmt.query_map(params_from_iter(params), &map)?;
        for row in rows {
            out.push(row?);
        }
    }
    Ok(out)
}

fn task_node(row: &Row, now: &str) -> rusqlite::Result<Node> {
    let stored: String = row.get(2)?;
    let expires: Option<String> = row.get(3)?;
    let status = match stored.as_str() {
        "done" => TaskStatus::Done,
        "cancelled" => TaskStatus::Cancelled,
        _ if expires.is_some_and(|e| e.as_str() > now) => TaskStatus::Claimed,
        _ => TaskStatus::Open,
    };
    Ok(Node {
        id: row.get(0)?,
        kind: NodeKind::Task,
        title: row.get(1)?,
        status: Some(status),
        slug: None,
    })
}

fn note_node(row: &Row) -> rusqlite::Result<Node> {
    Ok(Node {
        id: row.get(0)?,
        kind: NodeKind::Note,
        title: row.get(1)?,
        status: None,
        slug: Some(row.get(2)?),
    })
}

impl Store for SqliteStore {
    fn kind(&self) -> &'static str {
        "sqlite"
    }

    fn schema_version(&self) -> Result<i64, ToolError> {
        self.read("schema_version", |c| {
            Ok(c.query_row("PRAGMA user_version", [], |r| r.get(0))?)
        })
    }

    fn counts(&self) -> Result<Counts, ToolError> {
        self.read("counts", |c| {
            Ok(c.query_row(
                "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM notes), (SELECT count(*) FROM links)",
                [],
                |r| {
                    Ok(Counts {
                        tasks: r.get::<_, i64>(0)? as u64,
                        notes: r.get::<_, i64>(1)? as u64,
                        links: r.get::<_, i64>(2)? as u64,
                    })
                },
            )?)
        })
    }

    fn probe_write(&self) -> Result<(), ToolError> {
        self.write("probe_write", |c| {
            if c.is_readonly(rusqlite::MAIN_DB)? {
                return Err(read_only().into());
            }
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.rollback()?;
            Ok(())
        })
    }

    fn probe_search(&self) -> Result<(), ToolError> {
        self.read("probe_search", |c| {
            c.query_row(
                "SELECT count(*) FROM search_index WHERE rowid = 0",
                [],
                |r| r.get::<_, i64>(0),
            )?;
            Ok(())
        })
    }

    fn find_ids(
        &self,
        kind: EntityKind,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<IdTitle>, ToolError> {
        let sql = match kind {
            EntityKind::Task => {
                "SELECT id, title FROM tasks WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT ?3"
            }
            EntityKind::Note => {
                "SELECT id, title FROM notes WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT ?3"
            }
            EntityKind::Link => {
                "SELECT id, kind FROM links WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT ?3"
            }
        };
        self.read("find_ids", |c| {
            Ok(c.prepare_cached(sql)?
                .query_map(params![prefix, prefix_end(prefix), limit as i64], |r| {
                    Ok(IdTitle {
                        id: r.get(0)?,
                        title: r.get(1)?,
                    })
                })?
                .collect::<rusqlite::Result<_>>()?)
        })
    }

    fn task_create(&self, task: &NewTask, now: &str) -> Result<Task, ToolError> {
        self.write("task_create", |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO tasks (id, title, description, tags, priority, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                params![
                    task.id,
                    task.title,
                    task.description,
                    tags_json(&task.tags),
                    task.priority.as_str(),
                    now
                ],
            )?;
            let seq = tx.last_insert_rowid();
            index_entity(
                &tx,
                seq * 2,
                "task",
                &task.id,
                &task.title,
                &task.description,
            )?;
            tx.commit()?;
            Ok(Task {
                id: task.id.clone(),
                title: task.title.clone(),
                description: task.description.clone(),
                tags: task.tags.clone(),
                priority: task.priority,
                status: TaskStatus::Open,
                claim: None,
                version: 1,
                created_at: now.to_owned(),
                updated_at: now.to_owned(),
            })
        })
    }

    fn task_get(&self, id: &str, now: &str) -> Result<Option<Task>, ToolError> {
        self.read("task_get", |c| Ok(load_task(c, id, now)?))
    }

    fn task_list(&self, query: &TaskQuery, now: &str) -> Result<Page<Task>, ToolError> {
        self.read("task_list", |c| {
            keyset_page(
                c,
                "tasks",
                TASK_COLUMNS,
                task_filter(query, now),
                query.after.as_ref(),
                query.limit,
                |r| task_from_row(r, now),
            )
        })
    }

    fn task_update(
        &self,
        id: &str,
        patch: &TaskPatch,
        expected_version: Option<i64>,
        now: &str,
    ) -> Result<Task, ToolError> {
        self.write("task_update", |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let seq: Option<i64> = tx
                .query_row(
                    "UPDATE tasks SET
                        title = coalesce(?1, title),
                        description = coalesce(?2, description),
                        tags = coalesce(?3, tags),
                        priority = coalesce(?4, priority),
                        version = version + 1,
                        updated_at = ?5
                     WHERE id = ?6 AND (?7 IS NULL OR version = ?7)
                     RETURNING seq",
                    params![
                        patch.title,
                        patch.description,
                        patch.tags.as_deref().map(tags_json),
                        patch.priority.map(Priority::as_str),
                        now,
                        id,
                        expected_version
                    ],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(seq) = seq else {
                return Err(explain_task_refusal(&tx, id, now, |t| {
                    refusal::version_conflict(t.version)
                }));
            };
            let task = load_task(&tx, id, now)?.ok_or_else(|| refusal::task_not_found(id))?;
            if patch.title.is_some() || patch.description.is_some() {
                index_entity(&tx, seq * 2, "task", id, &task.title, &task.description)?;
            }
            tx.commit()?;
            Ok(task)
        })
    }

    fn task_claim(
        &self,
        id: &str,
        agent: &str,
        expires_at: &str,
        now: &str,
    ) -> Result<Task, ToolError> {
        self.write("task_claim", |c| {
            let claimed = c
                .prepare_cached(&format!(
                    "UPDATE tasks SET claim_holder = ?2, claim_expires_at = ?3
                     WHERE id = ?1 AND status = 'open'
                       AND (claim_holder IS NULL OR claim_expires_at IS NULL
                            OR claim_expires_at <= ?4 OR claim_holder = ?2)
                     RETURNING {TASK_COLUMNS}"
                ))?
                .query_row(params![id, agent, expires_at, now], |r| {
                    task_from_row(r, now)
                })
                .optional()?;
            claimed.ok_or_else(|| {
                explain_task_refusal(c, id, now, |t| match &t.claim {
                    Some(claim) if t.status == TaskStatus::Claimed => {
                        refusal::claim_held(&claim.holder, &claim.expires_at)
                    }
                    _ => refusal::invalid_transition("claim", t.status.as_str(), &["open"]),
                })
            })
        })
    }

    fn task_renew(
        &self,
        id: &str,
        agent: &str,
        expires_at: &str,
        now: &str,
    ) -> Result<Task, ToolError> {
        self.write("task_renew", |c| {
            let renewed = c
                .prepare_cached(&format!(
                    "UPDATE tasks SET claim_expires_at = ?3
                     WHERE id = ?1 AND status = 'open' AND claim_holder = ?2 AND claim_expires_at > ?4
                     RETURNING {TASK_COLUMNS}"
                ))?
                .query_row(params![id, agent, expires_at, now], |r| task_from_row(r, now))
                .optional()?;
            renewed.ok_or_else(|| {
                explain_task_refusal(c, id, now, |t| {
                    refusal::claim_not_held(t.claim.as_ref().map(|c| c.holder.as_str()))
                })
            })
        })
    }

    fn task_release(&self, id: &str, agent: &str, now: &str) -> Result<Task, ToolError> {
        self.write("task_release", |c| {
            let released = c
                .prepare_cached(&format!(
                    "UPDATE tasks SET claim_holder = NULL, claim_expires_at = NULL
                     WHERE id = ?1 AND status = 'open' AND claim_holder = ?2 AND claim_expires_at > ?3
                     RETURNING {TASK_COLUMNS}"
                ))?
                .query_row(params![id, agent, now], |r| task_from_row(r, now))
                .optional()?;
            released.ok_or_else(|| {
                explain_task_refusal(c, id, now, |t| {
                    refusal::claim_not_held(t.claim.as_ref().map(|c| c.holder.as_str()))
                })
            })
        })
    }

    fn task_transition(
        &self,
        id: &str,
        transition: Transition,
        agent: Option<&str>,
        now: &str,
    ) -> Result<Task, ToolError> {
        let (sql, operation, allowed): (String, &str, &[&str]) = match transition {
            Transition::Complete | Transition::Cancel => (
                format!(
                    "UPDATE tasks SET status = ?2, claim_holder = NULL, claim_expires_at = NULL,
                            version = version + 1, updated_at = ?4
                     WHERE id = ?1 AND status = 'open'
                       AND (?3 IS NULL OR claim_holder IS NULL OR claim_expires_at IS NULL
                            OR claim_expires_at <= ?4 OR claim_holder = ?3)
                     RETURNING {TASK_COLUMNS}"
                ),
                if transition == Transition::Complete {
                    "complete"
                } else {
                    "cancel"
                },
                &["open", "claimed"],
            ),
            Transition::Reopen => (
                format!(
                    "UPDATE tasks SET status = ?2, claim_holder = NULL, claim_expires_at = NULL,
                            version = version + 1, updated_at = ?4
                     WHERE id = ?1 AND status IN ('done', 'cancelled')
                       AND (?3 IS NULL OR 1) -- the agent does not matter here; bound for one parameter list
                     RETURNING {TASK_COLUMNS}"
                ),
                "reopen",
                &["done", "cancelled"],
            ),
        };
        let new_status = match transition {
            Transition::Complete => "done",
            Transition::Cancel => "cancelled",
            Transition::Reopen => "open",
        };
        self.write("task_transition", |c| {
            let changed = c
                .prepare_cached(&sql)?
                .query_row(params![id, new_status, agent, now], |r| {
                    task_from_row(r, now)
                })
                .optional()?;
            changed.ok_or_else(|| {
                explain_task_refusal(c, id, now, |t| {
                    let status = t.status.as_str();
                    match &t.claim {
                        Some(claim) if allowed.contains(&status) => {
                            refusal::claim_held(&claim.holder, &claim.expires_at)
                        }
                        _ => refusal::invalid_transition(operation, status, allowed),
                    }
                })
            })
        })
    }

    fn note_create(&self, draft: &NoteDraft, now: &str) -> Result<NoteWritten, ToolError> {
        self.write("note_create", |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            check_note_unique(&tx, draft, None)?;
            tx.execute(
                "INSERT INTO notes (id, title, slug, content, tags, source_url, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
                params![
                    draft.id,
                    draft.title,
                    draft.slug,
                    draft.content,
                    tags_json(draft.tags.as_deref().unwrap_or_default()),
                    draft.source_url.as_deref().filter(|u| !u.is_empty()),
                    now
                ],
            )?;
            let seq = tx.last_insert_rowid();
            index_entity(&tx, seq * 2 + 1, "note", &draft.id, &draft.title, &draft.content)?;
            relink(&tx, &draft.id, &draft.slug, &draft.wiki_links, now)?;
            let out = written(&tx, &draft.id, true)?;
            tx.commit()?;
            Ok(out)
        })
    }

    fn note_update(
        &self,
        id: &str,
        draft: &NoteDraft,
        expected_version: Option<i64>,
        now: &str,
    ) -> Result<NoteWritten, ToolError> {
        self.write("note_update", |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let current: Option<(i64, i64)> = tx
                .query_row("SELECT seq, version FROM notes WHERE id = ?1", [id], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()?;
            let Some((seq, version)) = current else {
                return Err(refusal::note_not_found(id).into());
            };
            if expected_version.is_some_and(|v| v != version) {
                return Err(refusal::version_conflict(version).into());
            }
            check_note_unique(&tx, draft, Some(id))?;
            tx.execute(
                "UPDATE notes SET title = ?2, slug = ?3, content = ?4, tags = coalesce(?5, tags),
                        source_url = CASE WHEN ?6 IS NULL THEN source_url ELSE nullif(?6, '') END,
                        version = version + 1, updated_at = ?7
                 WHERE id = ?1",
                params![
                    id,
                    draft.title,
                    draft.slug,
                    draft.content,
                    draft.tags.as_deref().map(tags_json),
                    draft.source_url,
                    now
                ],
            )?;
            index_entity(&tx, seq * 2 + 1, "note", id, &draft.title, &draft.content)?;
            relink(&tx, id, &draft.slug, &draft.wiki_links, now)?;
            let out = written(&tx, id, false)?;
            tx.commit()?;
            Ok(out)
        })
    }

    fn note_get(&self, id: &str) -> Result<Option<Note>, ToolError> {
        self.read("note_get", |c| {
            let note = c
                .query_row(
                    "SELECT id, title, slug, content, tags, source_url, version, created_at, updated_at
                     FROM notes WHERE id = ?1",
                    [id],
                    |r| {
                        Ok(Note {
                            id: r.get(0)?,
                            title: r.get(1)?,
                            slug: r.get(2)?,
                            content: r.get(3)?,
                            tags: parse_tags(&r.get::<_, String>(4)?),
                            source_url: r.get(5)?,
                            version: r.get(6)?,
                            created_at: r.get(7)?,
                            updated_at: r.get(8)?,
                            links: Vec::new(),
                            unresolved_links: Vec::new(),
                        })
                    },
                )
                .optional()?;
            match note {
                None => Ok(None),
                Some(mut note) => {
                    note.links = note_refs_resolved(c, id)?;
                    note.unresolved_links = note_links(c, id)?.1;
                    Ok(Some(note))
                }
            }
        })
    }

    fn note_by_slug(&self, slug: &str) -> Result<Option<IdTitle>, ToolError> {
        self.read("note_by_slug", |c| {
            Ok(
                c.query_row("SELECT id, title FROM notes WHERE slug = ?1", [slug], |r| {
                    Ok(IdTitle {
                        id: r.get(0)?,
                        title: r.get(1)?,
                    })
                })
                .optional()?,
            )
        })
    }

    fn note_list(&self, query: &NoteQuery) -> Result<Page<NoteSummary>, ToolError> {
        self.read("note_list", |c| {
            keyset_page(
                c,
                "notes",
                NOTE_SUMMARY_COLUMNS,
                note_filter(query),
                query.after.as_ref(),
                query.limit,
                summary_from_row,
            )
        })
    }

    fn note_delete(&self, id: &str, expected_version: Option<i64>) -> Result<IdTitle, ToolError> {
        self.write("note_delete", |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let current: Option<(i64, i64, String)> = tx
                .query_row(
                    "SELECT seq, version, title FROM notes WHERE id = ?1",
                    [id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()?;
            let Some((seq, version, title)) = current else {
                return Err(refusal::note_not_found(id).into());
            };
            if expected_version.is_some_and(|v| v != version) {
                return Err(refusal::version_conflict(version).into());
            }
            tx.execute("DELETE FROM links WHERE source = ?1 OR target = ?1", [id])?;
            tx.execute("DELETE FROM notes WHERE id = ?1", [id])?;
            unindex(&tx, seq * 2 + 1)?;
            tx.commit()?;
            Ok(IdTitle {
                id: id.to_owned(),
                title,
            })
        })
    }

    fn link_add(
        &self,
        source: &str,
        target: &str,
        kind: LinkKind,
        now: &str,
    ) -> Result<(Edge, bool), ToolError> {
        self.write("link_add", |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let existing = tx
                .query_row(
                    &format!(
                        "SELECT {EDGE_COLUMNS} FROM links WHERE source = ?1 AND target = ?2 AND kind = ?3 ORDER BY seq LIMIT 1"
                    ),
                    params![source, target, kind.as_str()],
                    edge_from_row,
                )
                .optional()?;
            if let Some(edge) = existing {
                return Ok((edge, false));
            }
            let edge = Edge {
                id: new_id(),
                source: source.to_owned(),
                target: target.to_owned(),
                kind,
            };
            tx.execute(
                "INSERT INTO links (id, source, target, kind, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![edge.id, source, target, kind.as_str(), now],
            )?;
            tx.commit()?;
            Ok((edge, true))
        })
    }

    fn link_remove(&self, id: &str) -> Result<Edge, ToolError> {
        self.write("link_remove", |c| {
            let removed = c
                .query_row(
                    &format!("DELETE FROM links WHERE id = ?1 RETURNING {EDGE_COLUMNS}"),
                    [id],
                    edge_from_row,
                )
                .optional()?;
            removed.ok_or_else(|| refusal::link_not_found(id).into())
        })
    }

    fn nodes(&self, ids: &[String], now: &str) -> Result<Vec<Node>, ToolError> {
        self.read("nodes", |c| {
            let mut nodes = for_chunks(
                c,
                "SELECT id, title, status, claim_expires_at FROM tasks WHERE id IN ({ids})",
                ids,
                |r| task_node(r, now),
            )?;
            nodes.extend(for_chunks(
                c,
                "SELECT id, title, slug FROM notes WHERE id IN ({ids})",
                ids,
                note_node,
            )?);
            Ok(nodes)
        })
    }

    fn edges_touching(&self, ids: &[String]) -> Result<Vec<Edge>, ToolError> {
        self.read("edges_touching", |c| {
            let mut edges = for_chunks(
                c,
                &format!(
                    "SELECT {EDGE_COLUMNS} FROM links WHERE source IN ({{ids}}) OR target IN ({{ids}}) ORDER BY seq"
                ),
                ids,
                edge_from_row,
            )?;
            let mut seen = std::collections::HashSet::new();
            edges.retain(|e| seen.insert(e.id.clone()));
            Ok(edges)
        })
    }

    fn graph_all(&self, now: &str) -> Result<(Vec<Node>, Vec<Edge>), ToolError> {
        self.read("graph_all", |c| {
            let mut nodes: Vec<Node> = c
                .prepare("SELECT id, title, status, claim_expires_at FROM tasks ORDER BY seq")?
                .query_map([], |r| task_node(r, now))?
                .collect::<rusqlite::Result<_>>()?;
            nodes.extend(
                c.prepare("SELECT id, title, slug FROM notes ORDER BY seq")?
                    .query_map([], note_node)?
                    .collect::<rusqlite::Result<Vec<_>>>()?,
            );
            let edges = c
                .prepare(&format!("SELECT {EDGE_COLUMNS} FROM links ORDER BY seq"))?
                .query_map([], edge_from_row)?
                .collect::<rusqlite::Result<_>>()?;
            Ok((nodes, edges))
        })
    }

    fn graph_doctor(
        &self,
        fix: bool,
        orphan_limit: usize,
        now: &str,
    ) -> Result<DoctorScan, ToolError> {
        let scan = |c: &Connection| -> R<DoctorScan> {
            let edges = |sql: &str| -> R<Vec<Edge>> {
                Ok(c.prepare(sql)?
                    .query_map([], edge_from_row)?
                    .collect::<rusqlite::Result<_>>()?)
            };
            let dangling = edges(
                "SELECT id, source, target, kind FROM links l
                 WHERE (NOT EXISTS (SELECT 1 FROM tasks WHERE id = l.source)
                        AND NOT EXISTS (SELECT 1 FROM notes WHERE id = l.source))
                    OR (NOT EXISTS (SELECT 1 FROM tasks WHERE id = l.target)
                        AND NOT EXISTS (SELECT 1 FROM notes WHERE id = l.target))
                 ORDER BY seq",
            )?;
            let mut self_loops = edges(
                "SELECT id, source, target, kind FROM links WHERE source = target ORDER BY seq",
            )?;
            let mut duplicates = edges(
                "SELECT id, source, target, kind FROM links l
                 WHERE EXISTS (SELECT 1 FROM links m WHERE m.source = l.source AND m.target = l.target
                               AND m.kind = l.kind AND m.seq < l.seq)
                 ORDER BY seq",
            )?;
            let flagged: std::collections::HashSet<String> =
                dangling.iter().map(|e| e.id.clone()).collect();
            self_loops.retain(|e| !flagged.contains(&e.id));
            let flagged: std::collections::HashSet<String> = flagged
                .into_iter()
                .chain(self_loops.iter().map(|e| e.id.clone()))
                .collect();
            duplicates.retain(|e| !flagged.contains(&e.id));
            let lonely = "NOT EXISTS (SELECT 1 FROM links WHERE source = x.id)
                          AND NOT EXISTS (SELECT 1 FROM links WHERE target = x.id)";
            let orphan_count: i64 = c.query_row(
                &format!(
                    "SELECT (SELECT count(*) FROM tasks x WHERE {lonely}) + (SELECT count(*) FROM notes x WHERE {lonely})"
                ),
                [],
                |r| r.get(0),
            )?;
            let mut orphans: Vec<Node> = c
                .prepare(&format!(
                    "SELECT id, title, status, claim_expires_at FROM tasks x WHERE {lonely} ORDER BY seq LIMIT ?1"
                ))?
                .query_map([orphan_limit as i64], |r| task_node(r, now))?
                .collect::<rusqlite::Result<_>>()?;
            let left = orphan_limit.saturating_sub(orphans.len());
            orphans.extend(
                c.prepare(&format!(
                    "SELECT id, title, slug FROM notes x WHERE {lonely} ORDER BY seq LIMIT ?1"
                ))?
                .query_map([left as i64], note_node)?
                .collect::<rusqlite::Result<Vec<_>>>()?,
            );
            Ok(DoctorScan {
                dangling,
                self_loops,
                duplicates,
                orphans,
                orphan_count: orphan_count as u64,
            })
        };
        if !fix {
            return self.read("graph_doctor", |c| scan(c));
        }
        self.write("graph_doctor", |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let found = scan(&tx)?;
            {
                let mut delete = tx.prepare("DELETE FROM links WHERE id = ?1")?;
                for edge in found
                    .dangling
                    .iter()
                    .chain(&found.self_loops)
                    .chain(&found.duplicates)
                {
                    delete.execute([&edge.id])?;
                }
            }
            tx.commit()?;
            Ok(found)
        })
    }

    fn search(
        &self,
        terms: &[SearchTerm],
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<SearchHit>, u64), ToolError> {
        let fts_query = fts5_query(terms);
        let fts_query = fts_query.as_str();
        self.read("search", |c| {
            let total: i64 = c
                .prepare_cached("SELECT count(*) FROM search_index WHERE search_index MATCH ?1")?
                .query_row([fts_query], |r| r.get(0))?;
            let hits = c
                .prepare_cached(
                    "SELECT entity_id, kind, title,
                            snippet(search_index, -1, '<mark>', '</mark>', '…', 16),
                            bm25(search_index, 4.0, 1.0) AS score
                     FROM search_index WHERE search_index MATCH ?1
                     ORDER BY score, rowid LIMIT ?2 OFFSET ?3",
                )?
                .query_map(params![fts_query, limit as i64, offset as i64], |r| {
                    let kind: String = r.get(1)?;
                    Ok(SearchHit {
                        id: r.get(0)?,
                        kind: if kind == "note" {
                            NodeKind::Note
                        } else {
                            NodeKind::Task
                        },
                        title: r.get(2)?,
                        snippet: r.get(3)?,
                        score: -r.get::<_, f64>(4)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok((hits, total as u64))
        })
    }
}
