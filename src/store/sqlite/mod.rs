//! The embedded store: one SQLite file in WAL mode, one writer connection (so
//! in-process writers queue instead of fighting for the lock, task writes on
//! a thread of its own: see `commit`) and a reader pool.
//! This module opens, migrates and classifies driver errors; the SQL of each
//! domain is in its own file.
//!
//! Driver failures: busy or locked -> `store_busy`, read-only or permission ->
//! `read_only`, cannot open or gone -> `store_unavailable`, a missing full-text
//! index -> `search_unavailable`, anything else -> `internal_error`.

#[forbid(unsafe_code)]
mod commit;
#[forbid(unsafe_code)]
mod feed;
#[forbid(unsafe_code)]
mod graph;
#[forbid(unsafe_code)]
mod idempotency;
#[forbid(unsafe_code)]
mod notes;
mod projects;
mod rank;
#[forbid(unsafe_code)]
mod search;
#[forbid(unsafe_code)]
mod tasks;
#[forbid(unsafe_code)]
mod transfer;
#[forbid(unsafe_code)]
mod watch;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use r2d2::{Pool, PooledConnection};
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags, Row, TransactionBehavior, params_from_iter};

use super::fault::{self, Cause, Fail};
use super::feed::{ChangePage, ChangeQuery, Written};
use super::model::*;
use super::{ChangeMark, Store, StoreOptions, WriteCall, nowait};
use crate::store::StoreError;

/// Versioned migrations, applied in order in one transaction; `PRAGMA user_version`
/// records the last one applied.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("migrations/0001_initial.sql")),
    (2, include_str!("migrations/0002_changes.sql")),
    (3, include_str!("migrations/0003_idempotency.sql")),
    (4, include_str!("migrations/0004_claimed_column.sql")),
    (5, include_str!("migrations/0005_projects.sql")),
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = 5;

/// SQLITE_READONLY_DBMOVED: the file was unlinked or renamed under an open connection.
const SQLITE_READONLY_DBMOVED: i32 = 1032;

type Conn = PooledConnection<SqliteConnectionManager>;

impl From<rusqlite::Error> for Fail<rusqlite::Error> {
    fn from(e: rusqlite::Error) -> Self {
        Fail::Driver(e)
    }
}

type R<T> = Result<T, Fail<rusqlite::Error>>;

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
            _ if search::is_missing_index(message.as_deref()) => Cause::SearchMissing,
            _ => Cause::Internal,
        },
        _ => Cause::Internal,
    }
}

/// The embedded SQLite store.
pub struct SqliteStore {
    path: PathBuf,
    /// As opened, for the stores of other projects ([`Store::project_store`]).
    options: StoreOptions,
    writer: Pool<SqliteConnectionManager>,
    readers: Pool<SqliteConnectionManager>,
    /// Turns on the writer connection, and the group of writes it holds open.
    writes: commit::GroupCommit,
    feed_retention: i64,
    /// The newest change-feed `seq`; the one writer updates it after each commit.
    head: tokio::sync::watch::Sender<i64>,
    /// The connections that tell whether anything changed ([`Store::change_mark`]).
    watch: watch::Watch,
    /// The writer thread's queue ([`commit::writer`]), started by the first
    /// queued call.
    queue: std::sync::OnceLock<std::sync::mpsc::Sender<WriteCall>>,
    /// The database file, held open so that [`Self::check_present`] asks
    /// the file rather than walking its path on every call. Declared last,
    /// so closed after every connection: closing any descriptor of a file
    /// drops every POSIX lock this process holds on it, SQLite's included.
    file: std::fs::File,
}

impl SqliteStore {
    /// Opens `path`, creating and migrating it on first start.
    pub fn open(path: &Path, options: &StoreOptions) -> Result<Self, StoreError> {
        let on_open = |e: rusqlite::Error| {
            let cause = match classify(&e) {
                Cause::Busy => Cause::Busy,
                _ => Cause::Unavailable,
            };
            fault::log("open", &path.display(), cause, &e);
            cause.to_error()
        };
        let base = OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let flags = if options.read_only {
            base | OpenFlags::SQLITE_OPEN_READ_ONLY
        } else {
            base | OpenFlags::SQLITE_OPEN_READ_WRITE
        };
        // One connection of its own checks and migrates the file; it is
        // closed before the pools open theirs.
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
                return Err(StoreError::SchemaTooNew {
                    found: version,
                    supported: SCHEMA_VERSION,
                });
            }
            // A write-protected file opens read-only even when asked for read-write;
            // it then serves reads and answers `read_only` to writes.
            let read_only =
                options.read_only || conn.is_readonly(rusqlite::MAIN_DB).map_err(on_open)?;
            if !read_only {
                conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
                    .map_err(on_open)?;
                migrate(&mut conn).map_err(on_open)?;
                search::ensure_index(&mut conn).map_err(on_open)?;
            } else if version < SCHEMA_VERSION {
                tracing::error!(db = %path.display(), version, "a read-only store cannot be migrated");
                return Err(StoreError::Unavailable);
            }
        }
        let busy_timeout = options.busy_timeout;
        let manager = || {
            SqliteConnectionManager::file(path)
                .with_flags(flags)
                .with_init(move |c| {
                    c.busy_timeout(busy_timeout)?;
                    // Room for the store's statements, the lists' filter
                    // combinations among them, so that none is parsed again
                    // after an eviction (rusqlite keeps 16 by default).
                    c.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
                    // Plans that do not depend on bound values: without it,
                    // SQLite marks a statement whose plan read a bound value
                    // (a `LIMIT ?`, say) to be re-prepared on its next
                    // binding, so a cached statement was parsed anew on every
                    // call (a third of a `task_get`'s instructions).
                    c.set_db_config(
                        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
                        true,
                    )?;
                    rank::register(c)?;
                    // Temporary storage in memory: above all the savepoint
                    // journal of each write in a group (`commit`), which
                    // SQLite otherwise spills to a file past 64 KiB and so
                    // wrote every page a write touched twice, once there
                    // and once to the WAL.
                    c.execute_batch(
                        "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;
                         PRAGMA temp_store = MEMORY;",
                    )
                })
        };
        let pool = |size: u32| {
            Pool::builder()
                .max_size(size)
                .min_idle(Some(1))
                // A connection to a local file does not go stale the way a
                // network one does (a vanished file is `check_present`'s
                // job): no test query on every checkout.
                .test_on_check_out(false)
                .connection_timeout(busy_timeout.max(std::time::Duration::from_millis(100)))
                .build(manager())
                .map_err(|e| {
                    fault::log("open", &path.display(), Cause::Unavailable, &e);
                    StoreError::Unavailable
                })
        };
        let file = std::fs::File::open(path).map_err(|e| {
            fault::log("open", &path.display(), Cause::Unavailable, &e);
            StoreError::Unavailable
        })?;
        let store = Self {
            path: path.to_owned(),
            options: options.clone(),
            file,
            writer: pool(1)?,
            readers: pool(options.readers.max(1))?,
            writes: commit::GroupCommit::new(
                busy_timeout.max(std::time::Duration::from_millis(100)),
            ),
            feed_retention: options.feed_retention.max(1),
            head: tokio::sync::watch::Sender::new(0),
            watch: watch::Watch::open(path, flags).map_err(on_open)?,
            queue: std::sync::OnceLock::new(),
        };
        let head = store.changes(&ChangeQuery::default())?.head;
        store.head.send_replace(head);
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The store is gone when its file is: pooled connections would otherwise
    /// keep serving an unlinked file.
    fn check_present(&self) -> Result<(), StoreError> {
        if !self.linked() {
            fault::log(
                "connect",
                &self.path.display(),
                Cause::Unavailable,
                &"the database file is gone",
            );
            return Err(StoreError::Unavailable);
        }
        Ok(())
    }

    /// Whether the file the store opened is still linked into the file
    /// system: removed, or replaced by a rename (which the path's
    /// existence did not tell), it is not. One `statx` of the open file:
    /// 0.5-0.8 µs here, against 1.0-1.9 µs to walk the path.
    #[cfg(unix)]
    fn linked(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        self.file.metadata().is_ok_and(|m| m.nlink() > 0)
    }

    /// Whether the store's file is still where it was opened (no link
    /// count to ask off Unix).
    #[cfg(not(unix))]
    fn linked(&self) -> bool {
        self.file.metadata().is_ok() && std::fs::metadata(&self.path).is_ok()
    }

    /// A connection of the writer or the reader pool; the wait is measured
    /// (`pool` names which, for the metric).
    fn connection(
        &self,
        pool: &Pool<SqliteConnectionManager>,
        name: &'static str,
    ) -> Result<Conn, StoreError> {
        let waiting = std::time::Instant::now();
        let got = self.take_connection(pool);
        crate::metrics::record_pool_wait("sqlite", name, waiting.elapsed());
        got
    }

    /// A connection of `pool`, its wait not measured (a write measures its
    /// turn on the writer instead, see [`commit`]).
    fn take_connection(&self, pool: &Pool<SqliteConnectionManager>) -> Result<Conn, StoreError> {
        self.check_present()?;
        if nowait::active() {
            return Err(nowait::refuse());
        }
        pool.get().map_err(|e| {
            let cause = if !self.linked() {
                Cause::Unavailable
            } else {
                Cause::Busy
            };
            fault::log("connect", &self.path.display(), cause, &e);
            cause.to_error()
        })
    }

    /// A reader free right now, for a call that may not wait; its (next to
    /// no) wait is measured like any other checkout's.
    fn idle_reader(&self) -> Result<Conn, StoreError> {
        let waiting = std::time::Instant::now();
        self.check_present()?;
        let conn = self.readers.try_get().ok_or_else(nowait::refuse)?;
        crate::metrics::record_pool_wait("sqlite", "readers", waiting.elapsed());
        Ok(conn)
    }

    fn read<T>(
        &self,
        op: &'static str,
        f: impl FnOnce(&Connection) -> R<T>,
    ) -> Result<T, StoreError> {
        let conn = if nowait::active() {
            self.idle_reader()?
        } else {
            self.connection(&self.readers, "readers")?
        };
        f(&conn).map_err(|e| fault::map_fail(op, &self.path.display(), e, classify))
    }

    /// Runs `f` and appends its change-feed event, all or nothing, in the
    /// writer's open group of writes ([`commit`]), and answers once the group
    /// has committed.
    fn write<T>(
        &self,
        op: &'static str,
        f: impl FnOnce(&Connection) -> R<Written<T>>,
    ) -> Result<T, StoreError> {
        if nowait::active() {
            return Err(nowait::refuse());
        }
        self.writes.run(
            self,
            op,
            Box::new(|conn| {
                let written = f(conn)?;
                let seq = match &written.change {
                    Some(change) => Some(feed::append(conn, change, self.feed_retention)?),
                    None => None,
                };
                Ok((written.value, seq))
            }),
        )
    }
}

/// Prepared statements kept per connection.
const STATEMENT_CACHE: usize = 128;

/// Runs one statement that takes no parameters from the connection's
/// statement cache: parsed once per connection, not once per write (the
/// transaction control of every write, see [`commit`]).
fn run_cached(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    exec(conn, sql, []).map(drop)
}

/// Runs one statement from the connection's statement cache, with its
/// parameters; the rows it changed (`Connection::execute` prepares anew).
fn exec(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize> {
    conn.prepare_cached(sql)?.execute(params)
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

fn tags_json(tags: &[String]) -> String {
    serde_json::to_string(tags).unwrap_or_else(|_| "[]".to_owned())
}

fn parse_tags(s: &str) -> Vec<String> {
    serde_json::from_str(s).unwrap_or_default()
}

/// The one row of a query, from the connection's statement cache: parsed once
/// per connection, not on every call (`Connection::query_row` prepares anew).
fn row<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    map: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    conn.prepare_cached(sql)?.query_row(params, map)
}

/// Rows of a prepared query with positional parameters, mapped.
fn rows<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    map: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
) -> R<Vec<T>> {
    Ok(conn
        .prepare_cached(sql)?
        .query_map(params, map)?
        .collect::<rusqlite::Result<_>>()?)
}

/// A WHERE clause and its positional parameters, built filter by filter.
#[derive(Default)]
struct Filter {
    clauses: Vec<String>,
    params: Vec<Box<dyn rusqlite::ToSql>>,
}

impl Filter {
    fn push(&mut self, clause: &str, values: Vec<Box<dyn rusqlite::ToSql>>) {
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

fn boxed(v: impl rusqlite::ToSql + 'static) -> Box<dyn rusqlite::ToSql> {
    Box::new(v)
}

/// Runs a keyset page query: `filter` narrows, `after` positions, one extra row tells if more follow.
fn keyset_page<T: super::page::Keyed>(
    conn: &Connection,
    table: &str,
    columns: &str,
    mut filter: Filter,
    after: Option<&Keyset>,
    limit: usize,
    map: impl Fn(&Row<'_>) -> rusqlite::Result<T>,
) -> R<Page<T>> {
    let counted: i64 = row(
        conn,
        &capped_count_sql(&format!("FROM {table} {}", filter.sql()), TOTAL_CAP),
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
        super::page::rows_to_fetch(limit)
    );
    let items = rows(conn, &sql, params_from_iter(filter.params.iter()), map)?;
    Ok(super::page::from_rows(
        items,
        limit,
        Total::counted(counted as u64, TOTAL_CAP),
    ))
}

/// Runs `sql` (with one or more `{ids}` placeholders for a list of `?`) over `ids` in chunks.
fn for_chunks<T>(
    conn: &Connection,
    sql: &str,
    ids: &[String],
    map: impl Fn(&Row<'_>) -> rusqlite::Result<T>,
) -> R<Vec<T>> {
    let mut out = Vec::new();
    for chunk in ids.chunks(400) {
        let marks = vec!["?"; chunk.len()].join(", ");
        // The list may appear more than once; bind it as many times as it appears.
        let repeats = sql.matches("{ids}").count();
        let params: Vec<&String> = (0..repeats).flat_map(|_| chunk.iter()).collect();
        out.extend(rows(
            conn,
            &sql.replace("{ids}", &marks),
            params_from_iter(params),
            &map,
        )?);
    }
    Ok(out)
}

impl Store for SqliteStore {
    fn kind(&self) -> &'static str {
        "sqlite"
    }

    fn schema_version(&self) -> Result<i64, StoreError> {
        self.read("schema_version", |c| {
            Ok(c.query_row("PRAGMA user_version", [], |r| r.get(0))?)
        })
    }

    fn counts(&self) -> Result<Counts, StoreError> {
        self.read("counts", |c| {
            Ok(row(
                c,
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

    fn probe_write(&self) -> Result<(), StoreError> {
        let conn = self.connection(&self.writer, "writer")?;
        let probe = || -> R<()> {
            if conn.is_readonly(rusqlite::MAIN_DB)? {
                return Err(StoreError::ReadOnly.into());
            }
            conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK;")?;
            Ok(())
        };
        probe().map_err(|e| fault::map_fail("probe_write", &self.path.display(), e, classify))
    }

    fn probe_search(&self) -> Result<(), StoreError> {
        self.read("probe_search", search::probe)
    }

    fn project_list(&self) -> Result<Vec<Project>, StoreError> {
        self.read("project_list", projects::list)
    }

    fn project_get(&self, key: &str) -> Result<Option<Project>, StoreError> {
        self.read("project_get", |c| projects::get(c, key))
    }

    fn project_create(&self, project: &Project) -> Result<Project, StoreError> {
        self.write("project_create", |c| projects::create(c, project))
    }

    fn project_update(
        &self,
        key: &str,
        patch: &ProjectPatch,
        now: &Timestamp,
    ) -> Result<Project, StoreError> {
        self.write("project_update", |c| projects::update(c, key, patch, now))
    }

    fn project_store(&self, key: &str) -> Result<Arc<dyn Store>, StoreError> {
        if self.project_get(key)?.is_none() {
            return Err(StoreError::ProjectNotFound {
                key: key.to_owned(),
            });
        }
        let path = projects::file_of(&self.path, key);
        if let Some(folder) = path.parent()
            && !self.options.read_only
        {
            std::fs::create_dir_all(folder).map_err(|e| {
                fault::log("open", &folder.display(), Cause::Unavailable, &e);
                StoreError::Unavailable
            })?;
        }
        Ok(Arc::new(Self::open(&path, &self.options)?))
    }

    fn find_ids(
        &self,
        kind: EntityKind,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<IdTitle>, StoreError> {
        self.read("find_ids", |c| graph::find_ids(c, kind, prefix, limit))
    }

    fn task_create(&self, task: &NewTask, now: &Timestamp) -> Result<Task, StoreError> {
        self.write("task_create", |c| tasks::create(c, task, now))
    }

    fn task_get(&self, id: &str, now: &Timestamp) -> Result<Option<Task>, StoreError> {
        self.read("task_get", |c| tasks::load(c, id, now))
    }

    fn task_list(&self, query: &TaskQuery, now: &Timestamp) -> Result<Page<Task>, StoreError> {
        self.read("task_list", |c| tasks::list(c, query, now))
    }

    fn task_update(
        &self,
        id: &str,
        patch: &TaskPatch,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<Task, StoreError> {
        self.write("task_update", |c| {
            tasks::update(c, id, patch, expected_version, now)
        })
    }

    fn task_claim(
        &self,
        id: &str,
        agent: &str,
        expires_at: &Timestamp,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<Task, StoreError> {
        self.write("task_claim", |c| {
            tasks::claim(c, id, agent, expires_at, expected_version, now)
        })
    }

    fn task_renew(
        &self,
        id: &str,
        agent: &str,
        expires_at: &Timestamp,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<Task, StoreError> {
        self.write("task_renew", |c| {
            tasks::renew(c, id, agent, expires_at, expected_version, now)
        })
    }

    fn task_release(
        &self,
        id: &str,
        agent: &str,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<Task, StoreError> {
        self.write("task_release", |c| {
            tasks::release(c, id, agent, expected_version, now)
        })
    }

    fn task_transition(
        &self,
        id: &str,
        transition: Transition,
        agent: Option<&str>,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<Task, StoreError> {
        self.write("task_transition", |c| {
            tasks::transition(c, id, transition, agent, expected_version, now)
        })
    }

    fn note_create(&self, draft: &NoteDraft, now: &Timestamp) -> Result<NoteWritten, StoreError> {
        self.write("note_create", |c| notes::create(c, draft, now))
    }

    fn note_update(
        &self,
        id: &str,
        draft: &NoteDraft,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<NoteWritten, StoreError> {
        self.write("note_update", |c| {
            notes::update(c, id, draft, expected_version, now)
        })
    }

    fn note_get(&self, id: &str) -> Result<Option<Note>, StoreError> {
        self.read("note_get", |c| notes::get(c, id))
    }

    fn note_by_slug(&self, slug: &str) -> Result<Option<IdTitle>, StoreError> {
        self.read("note_by_slug", |c| notes::by_slug(c, slug))
    }

    fn note_list(&self, query: &NoteQuery) -> Result<Page<NoteSummary>, StoreError> {
        self.read("note_list", |c| notes::list(c, query))
    }

    fn note_delete(
        &self,
        id: &str,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<IdTitle, StoreError> {
        self.write("note_delete", |c| {
            notes::delete(c, id, expected_version, now)
        })
    }

    fn link_add(
        &self,
        source: &str,
        target: &str,
        kind: LinkKind,
        now: &Timestamp,
    ) -> Result<(Edge, bool), StoreError> {
        self.write("link_add", |c| {
            graph::link_add(c, source, target, kind, now)
        })
    }

    fn link_remove(&self, id: &str, now: &Timestamp) -> Result<Edge, StoreError> {
        self.write("link_remove", |c| graph::link_remove(c, id, now))
    }

    fn nodes(&self, ids: &[String], now: &Timestamp) -> Result<Vec<Node>, StoreError> {
        self.read("nodes", |c| graph::nodes(c, ids, now))
    }

    fn edges_touching(&self, ids: &[String]) -> Result<Vec<Edge>, StoreError> {
        self.read("edges_touching", |c| graph::edges_touching(c, ids))
    }

    fn graph_all(&self, now: &Timestamp) -> Result<(Vec<Node>, Vec<Edge>), StoreError> {
        self.read("graph_all", |c| graph::all(c, now))
    }

    fn graph_doctor(
        &self,
        fix: bool,
        orphan_limit: usize,
        now: &Timestamp,
    ) -> Result<DoctorScan, StoreError> {
        if fix {
            self.write("graph_doctor", |c| {
                graph::doctor(c, true, orphan_limit, now).map(Written::quiet)
            })
        } else {
            self.read("graph_doctor", |c| {
                graph::doctor(c, false, orphan_limit, now)
            })
        }
    }

    fn bulk_load(
        &self,
        tasks: &[NewTask],
        notes: &[NoteDraft],
        now: &Timestamp,
    ) -> Result<(), StoreError> {
        self.write("bulk_load", |c| {
            tasks::insert_many(c, tasks, now)?;
            notes::insert_many(c, notes, now).map(Written::quiet)
        })
    }

    fn changes(&self, query: &ChangeQuery) -> Result<ChangePage, StoreError> {
        self.read("changes", |c| feed::page(c, query))
    }

    fn watch_changes(&self) -> tokio::sync::watch::Receiver<i64> {
        self.head.subscribe()
    }

    fn reads_without_waiting(&self) -> bool {
        true
    }

    fn queue_write(self: Arc<Self>, call: WriteCall) -> Result<(), WriteCall> {
        let queue = self.queue.get_or_init(|| {
            let (queue, calls) = std::sync::mpsc::channel();
            let store = Arc::downgrade(&self);
            let writer = std::thread::Builder::new()
                .name("sqlite-writer".to_owned())
                .spawn(move || commit::writer(store, calls));
            if let Err(e) = writer {
                // The queue then has no receiver: every call is handed back.
                tracing::error!(error = %e, "cannot start the writer thread");
            }
            queue
        });
        queue
            .send(call)
            .map_err(|std::sync::mpsc::SendError(call)| call)
    }

    fn change_mark(&self, now: &Now<'_>) -> Option<ChangeMark> {
        // A vanished file still answers on an open connection: no mark, so
        // the read itself answers (and logs) `store_unavailable`.
        if !self.linked() {
            return None;
        }
        match self.watch.mark(now) {
            Ok(mark) => Some(mark),
            Err(e) => {
                tracing::debug!(error = %e, "no change mark");
                None
            }
        }
    }

    fn search(
        &self,
        terms: &[SearchTerm],
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<SearchHit>, Total), StoreError> {
        self.read("search", |c| search::run(c, terms, limit, offset))
    }

    fn dump(
        &self,
        sink: &mut dyn FnMut(
            crate::store::transfer::Record,
        ) -> Result<(), crate::envelope::ToolError>,
    ) -> Result<(), StoreError> {
        self.read("dump", |c| transfer::dump(c, sink))
    }

    fn idempotency_claim(
        &self,
        claim: &crate::store::idempotency::KeyClaim,
    ) -> Result<Option<crate::store::idempotency::HeldKey>, StoreError> {
        self.write("idempotency_claim", |c| {
            idempotency::claim(c, claim).map(Written::quiet)
        })
    }

    fn idempotency_finish(
        &self,
        scope: &crate::store::idempotency::KeyScope,
        owner: &str,
        answer: &crate::store::idempotency::StoredAnswer,
    ) -> Result<(), StoreError> {
        self.write("idempotency_finish", |c| {
            idempotency::finish(c, scope, owner, answer).map(Written::quiet)
        })
    }

    fn idempotency_release(
        &self,
        scope: &crate::store::idempotency::KeyScope,
        owner: &str,
    ) -> Result<(), StoreError> {
        self.write("idempotency_release", |c| {
            idempotency::release(c, scope, owner).map(Written::quiet)
        })
    }

    fn restore(
        &self,
        snapshot: &crate::store::transfer::Snapshot,
        merge: bool,
    ) -> Result<crate::store::transfer::RestoreReport, StoreError> {
        self.write("restore", |c| {
            transfer::restore(c, snapshot, merge).map(Written::quiet)
        })
    }
}

/// A [`Timestamp`] binds as its text, as the times always have.
impl rusqlite::ToSql for Timestamp {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(rusqlite::types::ToSqlOutput::from(self.as_str()))
    }
}

/// SQL counting the rows of `from_where` (`FROM ... WHERE ...`), stopping
/// after `cap + 1` (what [`Total::counted`] takes).
fn capped_count_sql(from_where: &str, cap: u64) -> String {
    format!(
        "SELECT count(*) FROM (SELECT 1 {from_where} LIMIT {}) AS capped",
        cap + 1
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_that_may_not_wait_takes_an_idle_reader_or_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let options = StoreOptions {
            readers: 1,
            ..StoreOptions::default()
        };
        let store = SqliteStore::open(&dir.path().join("t.db"), &options).unwrap();
        let now = timestamp(chrono::Utc::now());
        let held = store.readers.get().unwrap();
        assert!(
            nowait::attempt(|| store.task_get("abcdef", &now)).is_none(),
            "the only reader is taken: refused, not waited for"
        );
        drop(held);
        let read = nowait::attempt(|| store.task_get("abcdef", &now));
        assert!(
            matches!(read, Some(Ok(None))),
            "an idle reader answers at once"
        );
        let write = nowait::attempt(|| store.probe_write());
        assert!(write.is_none(), "the writer is never taken without waiting");
    }

    #[test]
    fn a_mark_is_asked_of_the_database_only_after_a_commit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let store = SqliteStore::open(&path, &StoreOptions::default()).unwrap();
        let read = || timestamp(chrono::Utc::now()).into();
        let now = Now::new(&read);
        let asked = || store.watch.asked();
        let first = store.change_mark(&now).unwrap();
        assert_eq!(store.change_mark(&now), Some(first.clone()));
        assert_eq!(
            asked(),
            1,
            "an unchanged data_version answers without the claim-expiry query"
        );

        // A commit through a connection of its own, as another process's.
        let other = Connection::open(&path).unwrap();
        other
            .execute_batch("CREATE TABLE elsewhere (n INTEGER)")
            .unwrap();
        let after = store.change_mark(&now).unwrap();
        assert!(after.generation > first.generation, "the commit is seen");
        assert_eq!(asked(), 2);
        other
            .execute("INSERT INTO elsewhere (n) VALUES (1)", [])
            .unwrap();
        let last = store.change_mark(&now).unwrap();
        assert!(last.generation > after.generation, "and the next one");
        assert_eq!(store.change_mark(&now), Some(last));
        assert_eq!(asked(), 3);
    }

    #[test]
    fn one_commit_moves_the_generation_once_however_many_threads_see_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let store = SqliteStore::open(&path, &StoreOptions::default()).unwrap();
        let read = || timestamp(chrono::Utc::now()).into();
        let now = Now::new(&read);
        let on_another_thread = || {
            std::thread::scope(|s| s.spawn(|| store.change_mark(&now)).join().unwrap())
                .unwrap()
                .generation
        };
        let here = store.change_mark(&now).unwrap().generation;
        assert_eq!(
            on_another_thread(),
            here,
            "a thread's first look moves nothing"
        );

        let other = Connection::open(&path).unwrap();
        other
            .execute_batch("CREATE TABLE elsewhere (n INTEGER)")
            .unwrap();
        let after = on_another_thread();
        assert!(after > here, "the commit is seen");
        assert_eq!(
            store.change_mark(&now).unwrap().generation,
            after,
            "and counted once"
        );
    }
}
