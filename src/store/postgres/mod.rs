//! The scale-out store: PostgreSQL, shared by any number of gateways. This
//! module connects, migrates (under an advisory lock, so gateways starting
//! together are safe), retries what the database asks to retry, and classifies
//! driver errors; the SQL of each domain is in its own file.
//!
//! Driver failures: unreachable, refused or shut down -> `store_unavailable`;
//! no free connection while the server answers -> `store_busy`; serialization
//! failures and deadlocks are retried a few times, then `store_busy`; a
//! statement over its time limit -> `timeout`; a read-only transaction or
//! missing privilege -> `read_only`; anything else -> `internal_error`.
//!
//! The synchronous `postgres` client runs a small runtime per connection, so it
//! must not be created, used or dropped on an async executor thread: the store
//! opens on a thread of its own, tools call it from the blocking pool, and
//! dropping it hands the pool to a plain thread.

mod feed;
mod graph;
mod idempotency;
mod notes;
mod projects;
mod search;
mod tasks;
mod transfer;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, Utc};
use postgres::error::SqlState;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;
use postgres::{Client, GenericClient, NoTls, Row, Statement, Transaction};
use r2d2::{ManageConnection, Pool, PooledConnection};

use super::fault::{self, Cause, Fail};
use super::feed::{ChangePage, ChangeQuery, Written};
use super::model::*;
use super::{Store, StoreOptions};
use crate::store::StoreError;

/// Versioned migrations, applied in order; `cairn_schema_migrations` records them.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("migrations/0001_initial.sql")),
    (2, include_str!("migrations/0002_changes.sql")),
    (3, include_str!("migrations/0003_idempotency.sql")),
    (4, include_str!("migrations/0004_claimed_column.sql")),
    (5, include_str!("migrations/0005_projects.sql")),
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = 5;

/// Advisory lock keys ("cairn" in ASCII, then a purpose).
const MIGRATION_LOCK: i64 = 0x6361_6972_6e00_0001;
/// Held by every write that rewrites `links_to` edges or adds links, so two
/// gateways cannot interleave the read-then-write of the link graph.
const GRAPH_LOCK: i64 = 0x6361_6972_6e00_0002;

/// How often a write the database asked to retry (serialization failure,
/// deadlock, a unique race) is run again before answering `store_busy`.
const WRITE_ATTEMPTS: u32 = 4;

/// Session limits: a statement past `STATEMENT_TIMEOUT` answers `timeout`, a
/// lock wait past `LOCK_TIMEOUT` answers `store_busy`.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(8);
const LOCK_TIMEOUT: Duration = Duration::from_secs(4);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest a call waits for a pooled connection (less when the store's
/// busy timeout is shorter): short, so an outage is answered within seconds.
const POOL_WAIT: Duration = Duration::from_secs(3);

impl From<postgres::Error> for Fail<postgres::Error> {
    fn from(e: postgres::Error) -> Self {
        Fail::Driver(e)
    }
}

type R<T> = Result<T, Fail<postgres::Error>>;

fn classify(e: &postgres::Error) -> Cause {
    let Some(code) = e.code() else {
        // No SQLSTATE: the connection failed, closed or timed out.
        return Cause::Unavailable;
    };
    if is_retryable(code) || *code == SqlState::LOCK_NOT_AVAILABLE {
        return Cause::Busy;
    }
    match code.code() {
        "57014" => Cause::Timeout,
        "25006" | "42501" => Cause::ReadOnly,
        // Connection exceptions, server shutting down or starting, too many connections.
        c if c.starts_with("08") || c.starts_with("57P") || c == "53300" => Cause::Unavailable,
        _ => Cause::Internal,
    }
}

/// A statement prepared before another gateway's migration changed the type
/// of what it returns: PostgreSQL refuses to run its cached plan (SQLSTATE
/// 0A000). Nothing ran; the statement prepared again works.
fn is_stale_plan(e: &postgres::Error) -> bool {
    e.code() == Some(&SqlState::FEATURE_NOT_SUPPORTED)
        && e.as_db_error()
            .is_some_and(|db| db.message() == "cached plan must not change result type")
}

/// Failures the database resolves by running the transaction again.
fn is_retryable(code: &SqlState) -> bool {
    *code == SqlState::T_R_SERIALIZATION_FAILURE
        || *code == SqlState::T_R_DEADLOCK_DETECTED
        || *code == SqlState::UNIQUE_VIOLATION
}

/// A time as PostgreSQL stores it.
fn at(t: &str) -> R<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(t)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| {
            tracing::error!(time = t, "a time the store was given is not RFC 3339");
            StoreError::Internal.into()
        })
}

/// Column `i` of `row`, a `timestamptz`, as a [`timestamp`].
fn time_of(row: &Row, i: usize) -> R<String> {
    Ok(timestamp(row.try_get::<_, DateTime<Utc>>(i)?).into())
}

fn time_opt(row: &Row, i: usize) -> R<Option<String>> {
    Ok(row
        .try_get::<_, Option<DateTime<Utc>>>(i)?
        .map(|t| timestamp(t).into()))
}

type Params<'a> = [&'a (dyn ToSql + Sync)];

/// Rows of a query, mapped.
fn rows<C: GenericClient, T>(
    c: &mut Db<'_, C>,
    sql: &str,
    params: &Params<'_>,
    map: impl Fn(&Row) -> R<T>,
) -> R<Vec<T>> {
    c.query(sql, params)?.iter().map(map).collect()
}

/// A pooled client and the statements it has prepared.
struct Conn {
    client: Client,
    prepared: Prepared,
}

/// How many statements a connection keeps prepared. The store's own are
/// fewer (a list's filter combinations among them); past the cap a statement
/// runs as before, prepared for that run only.
const PREPARED_CAP: usize = 256;

/// Statements prepared on one connection, by their text.
#[derive(Default)]
struct Prepared(HashMap<String, Statement>);

impl Prepared {
    /// Drops every statement (they are closed on the server as they go).
    fn forget(&mut self) {
        self.0.clear();
    }

    /// `sql` prepared on `c`'s connection: parsed there the first time only.
    fn statement<C: GenericClient>(&mut self, c: &mut C, sql: &str) -> R<Statement> {
        if let Some(statement) = self.0.get(sql) {
            return Ok(statement.clone());
        }
        let statement = c.prepare(sql)?;
        if self.0.len() < PREPARED_CAP {
            self.0.insert(sql.to_owned(), statement.clone());
        }
        Ok(statement)
    }
}

/// A client, or a transaction open on one, with its connection's prepared
/// statements: every statement the store runs through it is parsed on the
/// connection once, and is one round trip from then on (run by its text, a
/// statement costs two: parse, then bind and execute).
pub(super) struct Db<'a, C> {
    client: &'a mut C,
    prepared: &'a mut Prepared,
}

/// A [`Db`] inside a transaction: what a write runs in.
pub(super) type Tx<'a, 'b> = Db<'a, Transaction<'b>>;

impl<'a, C: GenericClient> Db<'a, C> {
    fn new(client: &'a mut C, prepared: &'a mut Prepared) -> Self {
        Self { client, prepared }
    }

    fn statement(&mut self, sql: &str) -> R<Statement> {
        self.prepared.statement(self.client, sql)
    }

    pub(super) fn query(&mut self, sql: &str, params: &Params<'_>) -> R<Vec<Row>> {
        let statement = self.statement(sql)?;
        Ok(self.client.query(&statement, params)?)
    }

    pub(super) fn query_opt(&mut self, sql: &str, params: &Params<'_>) -> R<Option<Row>> {
        let statement = self.statement(sql)?;
        Ok(self.client.query_opt(&statement, params)?)
    }

    pub(super) fn query_one(&mut self, sql: &str, params: &Params<'_>) -> R<Row> {
        let statement = self.statement(sql)?;
        Ok(self.client.query_one(&statement, params)?)
    }

    pub(super) fn execute(&mut self, sql: &str, params: &Params<'_>) -> R<u64> {
        let statement = self.statement(sql)?;
        Ok(self.client.execute(&statement, params)?)
    }

    /// Statements run by their text, none prepared (DDL, `SET`).
    pub(super) fn batch(&mut self, sql: &str) -> R<()> {
        Ok(self.client.batch_execute(sql)?)
    }
}

/// Connects clients with the session limits set, and remembers when the last
/// connection attempt failed, so a pool timeout can tell "server down" from
/// "every connection busy".
struct Manager {
    config: postgres::Config,
    read_only: bool,
    last_connect_failure_ms: Arc<AtomicU64>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl ManageConnection for Manager {
    type Connection = Conn;
    type Error = postgres::Error;

    fn connect(&self) -> Result<Conn, postgres::Error> {
        let connected = self.config.connect(NoTls).and_then(|mut client| {
            client.batch_execute(&format!(
                "SET statement_timeout = {}; SET lock_timeout = {}; SET default_transaction_read_only = {};",
                STATEMENT_TIMEOUT.as_millis(),
                LOCK_TIMEOUT.as_millis(),
                if self.read_only { "on" } else { "off" },
            ))?;
            Ok(client)
        });
        if connected.is_err() {
            self.last_connect_failure_ms
                .store(now_ms(), Ordering::Relaxed);
        }
        connected.map(|client| Conn {
            client,
            prepared: Prepared::default(),
        })
    }

    fn is_valid(&self, conn: &mut Conn) -> Result<(), postgres::Error> {
        conn.client.simple_query("").map(|_| ())
    }

    fn has_broken(&self, conn: &mut Conn) -> bool {
        conn.client.is_closed()
    }
}

/// r2d2 reports connection failures here; the store logs them once per failure.
#[derive(Debug)]
struct LogConnectErrors(String);

impl r2d2::HandleError<postgres::Error> for LogConnectErrors {
    fn handle_error(&self, error: postgres::Error) {
        fault::log("connect", &self.0, Cause::Unavailable, &error);
    }
}

/// The PostgreSQL store.
pub struct PgStore {
    /// `None` only while dropping.
    pool: Option<Pool<Manager>>,
    /// As opened, for the stores of other projects ([`Store::project_store`]).
    config: postgres::Config,
    options: StoreOptions,
    /// `host:port/database`, for the log (never for an answer).
    target: String,
    /// How long a call waits for a connection to free up.
    pool_wait: Duration,
    last_connect_failure_ms: Arc<AtomicU64>,
    feed_retention: i64,
    /// The newest change-feed `seq`, from this process's commits and from
    /// every gateway's NOTIFY (see [`listen`]).
    head: tokio::sync::watch::Sender<i64>,
    /// Tells the listener thread to stop.
    closing: Arc<std::sync::atomic::AtomicBool>,
}

impl PgStore {
    /// Connects to `url` and applies pending migrations. An unparsable URL is
    /// `invalid_input`; a server that cannot be reached, or a database migrated
    /// by a newer cairn, `store_unavailable`.
    pub fn open(url: &str, options: &StoreOptions) -> Result<Self, StoreError> {
        let config: postgres::Config = url.parse().map_err(|_| StoreError::InvalidUrl)?;
        Self::open_config(config, options)
    }

    fn open_config(
        mut config: postgres::Config,
        options: &StoreOptions,
    ) -> Result<Self, StoreError> {
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(10))
            .tcp_user_timeout(Duration::from_secs(10));
        if config.get_application_name().is_none() {
            config.application_name("cairn");
        }
        let target = describe(&config);
        let listen_config = config.clone();
        let own_config = config.clone();
        let last_connect_failure_ms = Arc::new(AtomicU64::new(0));
        let manager = Manager {
            config,
            read_only: options.read_only,
            last_connect_failure_ms: last_connect_failure_ms.clone(),
        };
        let pool_wait = options
            .busy_timeout
            .clamp(Duration::from_millis(200), POOL_WAIT);
        // The client must not start its runtime on an executor thread.
        let opened = std::thread::scope(|s| {
            s.spawn(|| -> Result<(Pool<Manager>, i64), StoreError> {
                // One connection of its own for the migrations: a server that
                // refuses it answers at once, not after a pool wait.
                let mut conn = manager.connect().map_err(|e| {
                    fault::log("open", &target, Cause::Unavailable, &e);
                    StoreError::Unavailable
                })?;
                migrate(&mut conn.client, options.read_only, &target)?;
                let head: i64 = conn
                    .client
                    .query_one("SELECT last_seq FROM change_counter", &[])
                    .and_then(|r| r.try_get(0))
                    .map_err(|e| fault::map_fail("open", &target, Fail::Driver(e), classify))?;
                drop(conn);
                let pool = Pool::builder()
                    .max_size(options.readers.max(2))
                    .min_idle(Some(0))
                    .connection_timeout(pool_wait)
                    .error_handler(Box::new(LogConnectErrors(target.clone())))
                    .build(manager)
                    .map_err(|e| {
                        fault::log("open", &target, Cause::Unavailable, &e);
                        StoreError::Unavailable
                    })?;
                Ok((pool, head))
            })
            .join()
            .unwrap_or_else(|_| Err(StoreError::Internal))
        });
        let (pool, head) = opened?;
        let store = Self {
            pool: Some(pool),
            config: own_config,
            options: options.clone(),
            target,
            pool_wait,
            last_connect_failure_ms,
            feed_retention: options.feed_retention.max(1),
            head: tokio::sync::watch::Sender::new(head),
            closing: Arc::default(),
        };
        listen(
            listen_config,
            store.head.clone(),
            store.closing.clone(),
            store.target.clone(),
        );
        Ok(store)
    }

    fn pool(&self) -> &Pool<Manager> {
        self.pool.as_ref().expect("the pool lives until drop")
    }

    /// Whether a connection attempt failed within the last `window`.
    fn failed_to_connect_within(&self, window: Duration) -> bool {
        let failed_at = self.last_connect_failure_ms.load(Ordering::Relaxed);
        now_ms().saturating_sub(failed_at) <= window.as_millis() as u64
    }

    /// A pooled connection, the wait measured.
    fn connection(&self) -> Result<PooledConnection<Manager>, StoreError> {
        let waiting = std::time::Instant::now();
        let got = self.wait_for_connection();
        crate::metrics::record_pool_wait("postgres", "pool", waiting.elapsed());
        got
    }

    /// An idle connection at once; none while the server is known to be down
    /// (the pool keeps reconnecting in the background, at least every
    /// `pool_wait / 2`, and records each failure); otherwise whichever frees
    /// up within `pool_wait`.
    fn wait_for_connection(&self) -> Result<PooledConnection<Manager>, StoreError> {
        if let Some(conn) = self.pool().try_get() {
            return Ok(conn);
        }
        let down_window = self.pool_wait / 2 + Duration::from_secs(1);
        if self.failed_to_connect_within(down_window) {
            fault::log(
                "connect",
                &self.target,
                Cause::Unavailable,
                &"the server refused or did not answer the last connection attempt",
            );
            return Err(StoreError::Unavailable);
        }
        self.pool().get_timeout(self.pool_wait).map_err(|e| {
            // Connection attempts failed during the wait: the server is down or
            // unreachable. Otherwise every connection was in use.
            let cause = if self.failed_to_connect_within(self.pool_wait + down_window) {
                Cause::Unavailable
            } else {
                Cause::Busy
            };
            fault::log("connect", &self.target, cause, &e);
            cause.to_error()
        })
    }

    /// Runs `f` on a pooled connection with its prepared statements; once
    /// more, with statements prepared anew, when they went stale.
    fn read<T>(
        &self,
        op: &'static str,
        mut f: impl FnMut(&mut Db<'_, Client>) -> R<T>,
    ) -> Result<T, StoreError> {
        let mut conn = self.connection()?;
        let Conn { client, prepared } = &mut *conn;
        let read = match f(&mut Db::new(client, prepared)) {
            Err(Fail::Driver(e)) if is_stale_plan(&e) => {
                tracing::info!(op, "prepared statements went stale; preparing them again");
                prepared.forget();
                f(&mut Db::new(client, prepared))
            }
            read => read,
        };
        read.map_err(|e| fault::map_fail(op, &self.target, e, classify))
    }

    /// A read that cannot run twice (the dump: what it gave is gone), on the
    /// client itself: its statements run by their text, so none can have
    /// gone stale.
    fn read_once<T>(
        &self,
        op: &'static str,
        f: impl FnOnce(&mut Client) -> R<T>,
    ) -> Result<T, StoreError> {
        let mut conn = self.connection()?;
        f(&mut conn.client).map_err(|e| fault::map_fail(op, &self.target, e, classify))
    }

    /// The tables a bulk write filled, vacuumed and analyzed once it is
    /// committed, as autovacuum would leave them in its next round (never,
    /// where it is off). Until then the planner guesses, and index-only
    /// scans visit the heap for every row: at 100,000 tasks (the bench's
    /// fixture) the board took 22 ms with neither, 6.8 ms analyzed only,
    /// 1.4 ms after both. The write stands whatever becomes of this (a
    /// failure, a store too large for the statement timeout, is logged).
    fn vacuum(&self, op: &'static str) {
        let vacuumed = self.read_once(op, |c| {
            Ok(c.batch_execute("VACUUM (ANALYZE) tasks, notes, links, note_refs, changes")?)
        });
        if let Err(e) = vacuumed {
            tracing::warn!(op, error = %e, "the loaded tables were not vacuumed");
        }
    }

    /// Runs `f` in one transaction, appends its change-feed event as the last
    /// statement, and commits ([`Self::attempt`] retries and classifies).
    fn write<T>(
        &self,
        op: &'static str,
        f: impl Fn(&mut Tx<'_, '_>) -> R<Written<T>>,
    ) -> Result<T, StoreError> {
        self.attempt(op, |conn| {
            let mut tx = conn.client.transaction()?;
            let mut db = Db::new(&mut tx, &mut conn.prepared);
            let written = f(&mut db)?;
            let seq = match &written.change {
                Some(change) => Some(feed::append(&mut db, change, self.feed_retention)?),
                None => None,
            };
            tx.commit().map_err(|e| self.sent_unanswered(op, e))?;
            Ok((written.value, seq))
        })
    }

    /// Runs `f`, one statement that writes and appends its change-feed event
    /// (it answers what it wrote and the event's `seq`), on its own: the
    /// statement is its own transaction, so the write is one round trip.
    /// Pruning the feed, every [`PRUNE_EVERY`](crate::store::feed::PRUNE_EVERY)
    /// events, is a second statement after the commit.
    fn write_alone<T>(
        &self,
        op: &'static str,
        f: impl Fn(&mut Db<'_, Client>) -> R<(T, i64)>,
    ) -> Result<T, StoreError> {
        let (value, seq) = self.attempt(op, |conn| {
            let (value, seq) = self.alone(op, conn, &f)?;
            Ok(((value, seq), Some(seq)))
        })?;
        if let Err(e) = self.read(op, |db| feed::prune(db, seq, self.feed_retention)) {
            // The write is committed; the next prune catches up.
            tracing::warn!(op, error = %e, "the change feed was not pruned");
        }
        Ok(value)
    }

    /// Runs `f`, one statement that appends no change-feed event, on its own
    /// (its own transaction): one round trip, retried as [`Self::write`] is.
    fn write_quiet<T>(
        &self,
        op: &'static str,
        f: impl Fn(&mut Db<'_, Client>) -> R<T>,
    ) -> Result<T, StoreError> {
        self.attempt(op, |conn| Ok((self.alone(op, conn, &f)?, None)))
    }

    /// `f` on `conn` outside a transaction: a failed connection after the
    /// statement was sent leaves its outcome unknown.
    fn alone<T>(
        &self,
        op: &'static str,
        conn: &mut Conn,
        f: &impl Fn(&mut Db<'_, Client>) -> R<T>,
    ) -> R<T> {
        f(&mut Db::new(&mut conn.client, &mut conn.prepared)).map_err(|e| match e {
            Fail::Driver(e) if e.code().is_none() => self.sent_unanswered(op, e),
            e => e,
        })
    }

    /// A statement sent whose answer never came (the connection failed): its
    /// outcome is the server's secret.
    fn sent_unanswered(&self, op: &'static str, e: postgres::Error) -> Fail<postgres::Error> {
        match e.code() {
            Some(_) => Fail::Driver(e),
            None => {
                fault::log(op, &self.target, Cause::Unavailable, &e);
                Fail::Store(StoreError::WriteOutcomeUnknown)
            }
        }
    }

    /// Runs `once` on a pooled connection, again (a bounded number of times)
    /// when the database asks to retry, and raises the head to the `seq` it
    /// appended.
    fn attempt<T>(
        &self,
        op: &'static str,
        once: impl Fn(&mut Conn) -> R<(T, Option<i64>)>,
    ) -> Result<T, StoreError> {
        let mut attempt = 1;
        loop {
            let mut conn = self.connection()?;
            match once(&mut conn) {
                Err(Fail::Driver(e))
                    if attempt < WRITE_ATTEMPTS && e.code().is_some_and(is_retryable) =>
                {
                    tracing::debug!(op, attempt, error = %e, "retrying a write the database refused");
                    std::thread::sleep(Duration::from_millis(5 << attempt));
                    attempt += 1;
                }
                Err(Fail::Driver(e)) if attempt < WRITE_ATTEMPTS && is_stale_plan(&e) => {
                    tracing::info!(op, "prepared statements went stale; preparing them again");
                    conn.prepared.forget();
                    attempt += 1;
                }
                Ok((value, seq)) => {
                    if let Some(seq) = seq {
                        self.head.send_if_modified(|head| raise(head, seq));
                    }
                    return Ok(value);
                }
                Err(e) => return Err(fault::map_fail(op, &self.target, e, classify)),
            }
        }
    }
}

/// Raises `head` to `seq` if it is newer (commits and notifications may arrive out of order).
fn raise(head: &mut i64, seq: i64) -> bool {
    let newer = seq > *head;
    if newer {
        *head = seq;
    }
    newer
}

/// Wakes this gateway when any gateway commits a change: a thread holding its
/// own connection in LISTEN, updating `head` from each NOTIFY. It reconnects
/// after an outage and then re-reads the head, so nothing is missed (the feed
/// itself is the source of truth; notifications only wake readers).
fn listen(
    config: postgres::Config,
    head: tokio::sync::watch::Sender<i64>,
    closing: Arc<std::sync::atomic::AtomicBool>,
    target: String,
) {
    let run = move || {
        while !closing.load(Ordering::Relaxed) {
            let session = || -> Result<(), postgres::Error> {
                let mut client = config.connect(NoTls)?;
                client.batch_execute(&format!("LISTEN {}", feed::CHANNEL))?;
                let row = client
                    .query_one("SELECT current_schema(), last_seq FROM change_counter", &[])?;
                let (schema, newest): (String, i64) = (row.try_get(0)?, row.try_get(1)?);
                head.send_if_modified(|h| raise(h, newest));
                let mut notifications = client.notifications();
                let mut waiting = notifications.timeout_iter(Duration::from_millis(500));
                while !closing.load(Ordering::Relaxed) {
                    match waiting.next() {
                        Ok(Some(n)) => {
                            if let Some(seq) = feed::notified_seq(n.payload(), &schema) {
                                head.send_if_modified(|h| raise(h, seq));
                            }
                        }
                        Ok(None) => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            };
            if let Err(e) = session() {
                fault::log("listen", &target, Cause::Unavailable, &e);
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    };
    if let Err(e) = std::thread::Builder::new()
        .name("cairn-pg-listen".into())
        .spawn(run)
    {
        tracing::error!(error = %e, "cannot start the change-feed listener");
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        self.closing.store(true, Ordering::Relaxed);
        // Each client closes through its own runtime, which panics on an
        // executor thread: close them on a plain one.
        if let Some(pool) = self.pool.take()
            && tokio::runtime::Handle::try_current().is_ok()
        {
            let _ = std::thread::spawn(move || drop(pool)).join();
        }
    }
}

/// `host:port/database` for the log.
fn describe(config: &postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config
        .get_dbname()
        .or(config.get_user())
        .unwrap_or("postgres");
    format!("postgres {host}:{port}/{db}")
}

/// Applies pending migrations in one transaction under an advisory lock.
fn migrate(conn: &mut Client, read_only: bool, target: &str) -> Result<(), StoreError> {
    let fail = |e: postgres::Error| fault::map_fail("migrate", &target, Fail::Driver(e), classify);
    let mut tx = conn.transaction().map_err(fail)?;
    if !read_only {
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(fail)?;
        // Without the `SET`, the server's notice that the table exists
        // became an INFO line in the log of every command.
        tx.batch_execute(
            "SET LOCAL client_min_messages = warning;
             CREATE TABLE IF NOT EXISTS cairn_schema_migrations (
                 version    bigint PRIMARY KEY,
                 applied_at timestamptz NOT NULL DEFAULT now()
             )",
        )
        .map_err(fail)?;
    }
    let current: i64 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM cairn_schema_migrations",
            &[],
        )
        .and_then(|r| r.try_get(0))
        .map_err(fail)?;
    if current > SCHEMA_VERSION {
        tracing::error!(
            db = target,
            current,
            "the database was migrated by a newer cairn"
        );
        return Err(StoreError::SchemaTooNew {
            found: current,
            supported: SCHEMA_VERSION,
        });
    }
    if read_only {
        if current < SCHEMA_VERSION {
            tracing::error!(db = target, current, "a read-only store cannot be migrated");
            return Err(StoreError::Unavailable);
        }
        return Ok(());
    }
    for (version, sql) in MIGRATIONS {
        if *version > current {
            tx.batch_execute(sql).map_err(fail)?;
            tx.execute(
                "INSERT INTO cairn_schema_migrations (version) VALUES ($1)",
                &[version],
            )
            .map_err(fail)?;
            tracing::info!(db = target, version, "applied a schema migration");
        }
    }
    tx.commit().map_err(fail)
}

/// A WHERE clause and its numbered parameters, built filter by filter.
#[derive(Default)]
struct Filter {
    clauses: Vec<String>,
    params: Vec<Box<dyn ToSql + Sync>>,
}

impl Filter {
    /// `clause` has one `$` per value, numbered here in order.
    fn push(&mut self, clause: &str, values: Vec<Box<dyn ToSql + Sync>>) {
        let mut parts = clause.split('$');
        let mut numbered = parts.next().unwrap_or_default().to_owned();
        for (n, part) in (self.params.len() + 1..).zip(parts) {
            numbered.push_str(&format!("${n}{part}"));
        }
        self.params.extend(values);
        self.clauses.push(numbered);
    }

    fn sql(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", self.clauses.join(" AND "))
        }
    }

    fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.params.iter().map(|p| p.as_ref()).collect()
    }
}

fn boxed(v: impl ToSql + Sync + 'static) -> Box<dyn ToSql + Sync> {
    Box::new(v)
}

/// Runs a keyset page query: `filter` narrows, `after` positions, one extra
/// row tells if more follow. The capped count rides on every row of the page
/// (an uncorrelated subquery, run once), so a page is one statement; only an
/// empty page after a cursor counts on its own.
fn keyset_page<C: GenericClient, T: super::page::Keyed>(
    c: &mut Db<'_, C>,
    table: &str,
    columns: &str,
    mut filter: Filter,
    after: Option<&Keyset>,
    limit: usize,
    map: impl Fn(&Row) -> R<T>,
) -> R<Page<T>> {
    let count = capped_count_sql(&format!("FROM {table} {}", filter.sql()), TOTAL_CAP);
    let count_params = filter.params.len();
    if let Some(k) = after {
        filter.push(
            "(updated_at, id) < ($, $)",
            vec![boxed(at(&k.updated_at)?), boxed(k.id.clone())],
        );
    }
    // The row count is a parameter, so that the statement's text (and so
    // the connection's prepared statement) depends on the filters alone.
    let fetch = super::page::rows_to_fetch(limit) as i64;
    let sql = format!(
        "SELECT {columns}, ({count}) FROM {table} {} ORDER BY updated_at DESC, id DESC LIMIT ${}",
        filter.sql(),
        filter.params.len() + 1
    );
    let mut params = filter.params();
    params.push(&fetch);
    let found = c.query(&sql, &params)?;
    let counted: i64 = match found.first() {
        Some(row) => row.try_get(row.len() - 1)?,
        None if after.is_some() => c.query_one(&count, &params[..count_params])?.try_get(0)?,
        None => 0,
    };
    let items = found.iter().map(map).collect::<R<Vec<T>>>()?;
    Ok(super::page::from_rows(
        items,
        limit,
        Total::counted(counted as u64, TOTAL_CAP),
    ))
}

impl Store for PgStore {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    fn schema_version(&self) -> Result<i64, StoreError> {
        self.read("schema_version", |c| {
            Ok(
                c.query_one("SELECT max(version) FROM cairn_schema_migrations", &[])?
                    .try_get(0)?,
            )
        })
    }

    fn counts(&self) -> Result<Counts, StoreError> {
        self.read("counts", |c| {
            let row = c.query_one(
                "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM notes), (SELECT count(*) FROM links)",
                &[],
            )?;
            Ok(Counts {
                tasks: row.try_get::<_, i64>(0)? as u64,
                notes: row.try_get::<_, i64>(1)? as u64,
                links: row.try_get::<_, i64>(2)? as u64,
            })
        })
    }

    fn project_list(&self) -> Result<Vec<Project>, StoreError> {
        self.read("project_list", projects::list)
    }

    fn project_get(&self, key: &str) -> Result<Option<Project>, StoreError> {
        self.read("project_get", |c| projects::get(c, key))
    }

    fn project_create(&self, project: &Project) -> Result<Project, StoreError> {
        self.write("project_create", |tx| projects::create(tx, project))
    }

    fn project_update(
        &self,
        key: &str,
        patch: &ProjectPatch,
        now: &Timestamp,
    ) -> Result<Project, StoreError> {
        self.write("project_update", |tx| projects::update(tx, key, patch, now))
    }

    fn project_store(&self, key: &str) -> Result<Arc<dyn Store>, StoreError> {
        let schema = self.write("project_store", |tx| projects::schema_of(tx, key))?;
        let mut config = self.config.clone();
        // A later `-c` wins over one the URL gave.
        let options = format!(
            "{} -c search_path={schema}",
            config.get_options().unwrap_or_default()
        );
        config.options(options.trim_start());
        Ok(Arc::new(Self::open_config(config, &self.options)?))
    }

    fn probe_write(&self) -> Result<(), StoreError> {
        self.write("probe_write", |tx| {
            let read_only: String = tx
                .query_one("SHOW transaction_read_only", &[])?
                .try_get(0)?;
            if read_only == "on" {
                return Err(StoreError::ReadOnly.into());
            }
            // Takes and drops the row locks a write needs, without changing anything.
            tx.execute("SELECT 1 FROM tasks LIMIT 1 FOR UPDATE SKIP LOCKED", &[])?;
            Ok(Written::quiet(()))
        })
    }

    fn probe_search(&self) -> Result<(), StoreError> {
        self.read("probe_search", search::probe)
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
        let created = task.created(now);
        let change = tasks::created_change(&created, now);
        self.write_alone("task_create", |c| {
            tasks::create_alone(c, task, &change).map(|seq| ((), seq))
        })?;
        Ok(created)
    }

    fn task_get(&self, id: &str, now: &Timestamp) -> Result<Option<Task>, StoreError> {
        self.read("task_get", |c| tasks::load(c, id, now))
    }

    fn task_list(&self, query: &TaskQuery, now: &Timestamp) -> Result<Page<Task>, StoreError> {
        self.read("task_list", |c| tasks::list(c, query, now))
    }

    fn task_board(
        &self,
        columns: &[BoardColumnQuery],
        limit: usize,
        now: &Timestamp,
    ) -> Result<Vec<Page<Task>>, StoreError> {
        self.read("task_board", |c| tasks::board(c, columns, limit, now))
    }

    fn task_update(
        &self,
        id: &str,
        patch: &TaskPatch,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<Task, StoreError> {
        self.write_alone("task_update", |c| {
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
        self.write_alone("task_claim", |c| {
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
        self.write_alone("task_renew", |c| {
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
        self.write_alone("task_release", |c| {
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
        self.write_alone("task_transition", |c| {
            tasks::transition(c, id, transition, agent, expected_version, now)
        })
    }

    fn note_create(&self, draft: &NoteDraft, now: &Timestamp) -> Result<NoteWritten, StoreError> {
        self.write("note_create", |tx| notes::create(tx, draft, now))
    }

    fn note_update(
        &self,
        id: &str,
        draft: &NoteDraft,
        expected_version: Option<i64>,
        now: &Timestamp,
    ) -> Result<NoteWritten, StoreError> {
        self.write("note_update", |tx| {
            notes::update(tx, id, draft, expected_version, now)
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
        self.write("note_delete", |tx| {
            notes::delete(tx, id, expected_version, now)
        })
    }

    fn link_add(
        &self,
        source: &str,
        target: &str,
        kind: LinkKind,
        now: &Timestamp,
    ) -> Result<(Edge, bool), StoreError> {
        self.write("link_add", |tx| {
            graph::link_add(tx, source, target, kind, now)
        })
    }

    fn link_remove(&self, id: &str, now: &Timestamp) -> Result<Edge, StoreError> {
        self.write("link_remove", |tx| graph::link_remove(tx, id, now))
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
            self.write("graph_doctor", |tx| {
                graph::doctor(tx, true, orphan_limit, now).map(Written::quiet)
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
        self.write("bulk_load", |tx| {
            tasks::insert_many(tx, tasks, now)?;
            notes::insert_many(tx, notes, now).map(Written::quiet)
        })?;
        self.vacuum("bulk_load");
        Ok(())
    }

    fn changes(&self, query: &ChangeQuery) -> Result<ChangePage, StoreError> {
        self.read("changes", |c| feed::page(c, query))
    }

    fn watch_changes(&self) -> tokio::sync::watch::Receiver<i64> {
        self.head.subscribe()
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
        self.read_once("dump", |c| transfer::dump(c, sink))
    }

    fn idempotency_claim(
        &self,
        claim: &crate::store::idempotency::KeyClaim,
    ) -> Result<Option<crate::store::idempotency::HeldKey>, StoreError> {
        self.write("idempotency_claim", |tx| {
            idempotency::claim(tx, claim).map(Written::quiet)
        })
    }

    fn idempotency_finish(
        &self,
        scope: &crate::store::idempotency::KeyScope,
        owner: &str,
        answer: &crate::store::idempotency::StoredAnswer,
    ) -> Result<(), StoreError> {
        self.write_quiet("idempotency_finish", |c| {
            idempotency::finish(c, scope, owner, answer)
        })
    }

    fn idempotency_release(
        &self,
        scope: &crate::store::idempotency::KeyScope,
        owner: &str,
    ) -> Result<(), StoreError> {
        self.write_quiet("idempotency_release", |c| {
            idempotency::release(c, scope, owner)
        })
    }

    fn restore(
        &self,
        snapshot: &crate::store::transfer::Snapshot,
        merge: bool,
    ) -> Result<crate::store::transfer::RestoreReport, StoreError> {
        let report = self.write("restore", |tx| {
            transfer::restore(tx, snapshot, merge).map(Written::quiet)
        })?;
        self.vacuum("restore");
        Ok(report)
    }
}

/// A [`Timestamp`] binds as its text, as the times always have.
impl postgres::types::ToSql for Timestamp {
    fn to_sql(
        &self,
        ty: &postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        self.as_str().to_sql(ty, out)
    }

    fn accepts(ty: &postgres::types::Type) -> bool {
        <&str as postgres::types::ToSql>::accepts(ty)
    }

    postgres::types::to_sql_checked!();
}

/// SQL counting the rows of `from_where` (`FROM ... WHERE ...`), stopping
/// after `cap + 1` (what [`Total::counted`] takes).
fn capped_count_sql(from_where: &str, cap: u64) -> String {
    format!(
        "SELECT count(*) FROM (SELECT 1 {from_where} LIMIT {}) AS capped",
        cap + 1
    )
}

/// The statements `benches/pg_store_sql/*_one.sql` replay with pgbench are
/// the store's own, written out: checked here for drift, as the OpenAPI
/// document is. `CAIRN_BLESS=1` rewrites a script that differs.
#[cfg(test)]
pub(super) mod bench_scripts {
    /// `sql` as a pgbench script: each `$n` becomes `:` and the `n`th name.
    pub fn script(sql: &str, names: &[&str]) -> String {
        let mut out = String::with_capacity(sql.len());
        let mut rest = sql;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let digits = rest[at + 1..]
                .find(|c: char| !c.is_ascii_digit())
                .map_or(rest.len() - at - 1, |end| end);
            let n: usize = rest[at + 1..at + 1 + digits]
                .parse()
                .expect("a `$` parameter");
            out.push(':');
            out.push_str(names[n - 1]);
            rest = &rest[at + 1 + digits..];
        }
        out.push_str(rest);
        out.push_str(";\n");
        out
    }

    /// Fails when `benches/pg_store_sql/{file}` is not `sql` with `names`.
    pub fn check(file: &str, sql: &str, names: &[&str]) {
        let path = format!("{}/benches/pg_store_sql/{file}", env!("CARGO_MANIFEST_DIR"));
        let expected = script(sql, names);
        if std::env::var_os("CAIRN_BLESS").is_some() {
            std::fs::write(&path, &expected).expect("the script is written");
            return;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == expected,
            "{path} is not the store's statement: rerun this test with CAIRN_BLESS=1 and commit it"
        );
    }

    #[test]
    fn parameters_become_pgbench_variables_by_number() {
        assert_eq!(
            script(
                "SELECT $1, $12, $2::bigint",
                &["a", "b", "", "", "", "", "", "", "", "", "", "l"]
            ),
            "SELECT :a, :l, :b::bigint;\n"
        );
    }
}
