//! Group commit on the one writer connection: writes that arrive together
//! share one transaction and one commit (one WAL append of the pages they
//! touch, instead of one per write). Each write still runs in a savepoint of
//! its own, so a failed write leaves nothing behind, and no write is
//! acknowledged before the commit that holds it. The full-text index is
//! written once per group, just before the commit (see `search::index`).
//!
//! Writers take turns on the connection; a writer that finds others waiting
//! for their turn leaves the transaction open for them and waits, and the
//! last of the group (no one waiting, or the group full) commits for all. A
//! writer that waits too long for its group's commit commits the group
//! itself, so a group never hangs on a writer that gave up waiting for its
//! turn.
//!
//! Calls that write once, as their last store call ([`Store::queue_write`]),
//! skip the turn-taking threads: they queue for the writer thread
//! ([`writer`]), which runs every call queued, one after another, their
//! writes in the open group, then commits and answers them all. A burst of
//! creates costs one thread's work and one commit, not a thread woken per
//! create for its turn and again for its commit.
//!
//! [`Store::queue_write`]: crate::store::Store::queue_write

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak, mpsc};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use rusqlite::Connection;

use super::{Conn, R, SqliteStore, classify, run_cached, search};
use crate::store::StoreError;
use crate::store::fault::{self, Cause, Fail};
use crate::store::{Queued, WriteCall};

/// The most writes one transaction holds: past it the group commits even with
/// writers waiting, which bounds how long the first of them waits.
const MAX_GROUP: usize = 64;

/// How often a writer whose group is still open checks that someone will
/// commit it.
const COMMIT_CHECK: Duration = Duration::from_millis(20);

/// The writer connection's turn-taking and the group it holds open.
pub(super) struct GroupCommit {
    open: Mutex<Option<Open>>,
    /// Writers waiting for their turn: while there are any, a group stays open.
    waiting: AtomicUsize,
    /// How long a writer waits for its turn before answering `store_busy`.
    turn_timeout: Duration,
}

/// The open transaction: its connection, the writes it holds and the newest
/// change-feed `seq` among them.
struct Open {
    conn: Conn,
    group: Arc<Group>,
    members: usize,
    head: Option<i64>,
}

/// What the members of one group wait for: their commit's outcome.
#[derive(Default)]
struct Group {
    outcome: Mutex<Option<Result<(), Cause>>>,
    committed: Condvar,
}

impl Group {
    fn finish(&self, outcome: Result<(), Cause>) {
        *self.outcome.lock() = Some(outcome);
        self.committed.notify_all();
    }
}

thread_local! {
    /// On the writer thread, while a queued call runs: the groups its writes
    /// went into, which it is answered after ([`deferred`]).
    static DEFERRED: RefCell<Option<Vec<Arc<Group>>>> = const { RefCell::new(None) };
}

/// Runs `call` with its writes left in their groups, uncommitted (the
/// writer thread commits them): its value, and the groups to wait for.
/// `None` when it panicked (its answer is dropped with it, which its caller
/// sees; its writes were undone).
fn deferred<T>(call: impl FnOnce() -> T) -> Option<(T, Vec<Arc<Group>>)> {
    DEFERRED.set(Some(Vec::new()));
    let out = catch_unwind(AssertUnwindSafe(call));
    let groups = DEFERRED.take().unwrap_or_default();
    out.ok().map(|out| (out, groups))
}

/// Why a job left nothing written.
enum Failed {
    Fail(Fail<rusqlite::Error>),
    Panic(Box<dyn std::any::Any + Send>),
}

/// A write's job: its statements (the change-feed row included), its value
/// and the `seq` of the change it appended.
pub(super) type Job<'a, T> = Box<dyn FnOnce(&Connection) -> R<(T, Option<i64>)> + 'a>;

impl GroupCommit {
    pub(super) fn new(turn_timeout: Duration) -> Self {
        Self {
            open: Mutex::new(None),
            waiting: AtomicUsize::new(0),
            turn_timeout,
        }
    }

    /// Runs `job` in the open group (opening one if none is), and answers once
    /// the group has committed: the job's value, or why it is not written.
    pub(super) fn run<T>(
        &self,
        store: &SqliteStore,
        op: &'static str,
        job: Job<'_, T>,
    ) -> Result<T, StoreError> {
        let db = store.path.display();
        let mut turn = self.take_turn()?;
        if turn.is_none() {
            let conn = store.take_connection(&store.writer)?;
            run_cached(&conn, "BEGIN IMMEDIATE")
                .and_then(|()| search::prepare_pending(&conn))
                .map_err(|e| {
                    if !conn.is_autocommit() {
                        let _ = conn.execute_batch("ROLLBACK");
                    }
                    fault::map_fail(op, &db, Fail::Driver(e), classify)
                })?;
            *turn = Some(Open {
                conn,
                group: Arc::default(),
                members: 0,
                head: None,
            });
        }
        let open = turn.as_mut().expect("a group is open");
        let group = Arc::clone(&open.group);
        let answer = match run_in_savepoint(&open.conn, job) {
            Ok(Ok((value, seq))) => {
                open.members += 1;
                open.head = open.head.max(seq);
                Ok(value)
            }
            Ok(Err(fail)) => Err(Failed::Fail(fail)),
            Err(panic) => Err(Failed::Panic(panic)),
        };
        if answer.is_err() {
            undo(&mut turn, op, &db);
        }
        // Leave the group open for a writer waiting for its turn (or, on the
        // writer thread, for the calls queued after this one), or commit it.
        let deferred = DEFERRED.with_borrow(Option::is_some);
        if turn.as_ref().is_some_and(|open| {
            std::ptr::eq(&*open.group, &*group)
                && ((!deferred && self.waiting.load(Ordering::SeqCst) == 0)
                    || open.members >= MAX_GROUP)
        }) {
            self.commit(store, &mut turn, op);
        }
        drop(turn);
        match answer {
            Ok(value) if deferred => {
                DEFERRED.with_borrow_mut(|groups| groups.get_or_insert_default().push(group));
                Ok(value)
            }
            Ok(value) => self.wait_for_commit(store, &group, op).map(|()| value),
            Err(Failed::Fail(fail)) => Err(fault::map_fail(op, &db, fail, classify)),
            Err(Failed::Panic(panic)) => {
                tracing::error!(op, "a write panicked; its savepoint was rolled back");
                resume_unwind(panic)
            }
        }
    }

    /// The writer connection's turn, within the turn timeout.
    fn take_turn(&self) -> Result<parking_lot::MutexGuard<'_, Option<Open>>, StoreError> {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let waited = Instant::now();
        let turn = self.open.try_lock_for(self.turn_timeout);
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        crate::metrics::record_pool_wait("sqlite", "writer", waited.elapsed());
        turn.ok_or_else(|| {
            tracing::warn!(
                waited_ms = waited.elapsed().as_millis() as u64,
                "no turn on the writer connection"
            );
            StoreError::Busy
        })
    }

    /// Commits the open group and tells its members how it went.
    fn commit(&self, store: &SqliteStore, turn: &mut Option<Open>, op: &'static str) {
        let Some(open) = turn.take() else { return };
        let outcome = search::apply_pending(&open.conn)
            .and_then(|()| run_cached(&open.conn, "COMMIT"))
            .map_err(|e| {
                let cause = classify(&e);
                fault::log(op, &store.path.display(), cause, &e);
                if !open.conn.is_autocommit() {
                    let _ = open.conn.execute_batch("ROLLBACK");
                }
                cause
            });
        if outcome.is_ok() {
            crate::metrics::record_commit(open.members);
            if let Some(seq) = open.head {
                store.head.send_replace(seq);
            }
        }
        open.group.finish(outcome);
    }

    /// Commits the open group, if there is one, in this thread's turn.
    fn commit_open(&self, store: &SqliteStore, op: &'static str) -> Result<(), StoreError> {
        let mut turn = self.take_turn()?;
        self.commit(store, &mut turn, op);
        Ok(())
    }

    /// Waits for `group`'s commit; commits it here if it is still open and no
    /// writer is left to do it.
    fn wait_for_commit(
        &self,
        store: &SqliteStore,
        group: &Group,
        op: &'static str,
    ) -> Result<(), StoreError> {
        let mut outcome = group.outcome.lock();
        loop {
            if let Some(done) = *outcome {
                return done.map_err(Cause::to_error);
            }
            if group
                .committed
                .wait_for(&mut outcome, COMMIT_CHECK)
                .timed_out()
            {
                drop(outcome);
                let mut turn = self.open.lock();
                if turn
                    .as_ref()
                    .is_some_and(|open| std::ptr::eq(&*open.group, group))
                    && self.waiting.load(Ordering::SeqCst) == 0
                {
                    self.commit(store, &mut turn, op);
                }
                drop(turn);
                outcome = group.outcome.lock();
            }
        }
    }
}

/// The writer thread: runs the queued calls that arrive together, their
/// writes in the open group, commits it, and answers each call with its own
/// value once the groups its writes went into have committed (or with the
/// commit's failure). It holds the store only while it works, and ends when
/// the store is gone (the queue's sender with it).
pub(super) fn writer(store: Weak<SqliteStore>, calls: mpsc::Receiver<WriteCall>) {
    const OP: &str = "queued_write";
    while let Ok(first) = calls.recv() {
        let Some(store) = store.upgrade() else { return };
        let mut ran: Vec<(Queued, Vec<Arc<Group>>)> = Vec::new();
        let (mut next, mut taken) = (Some(first), 1);
        while let Some(call) = next.take() {
            match deferred(call) {
                Some(done) => ran.push(done),
                None => tracing::error!(op = OP, "a queued write call panicked"),
            }
            if taken < MAX_GROUP {
                next = calls.try_recv().ok();
                taken += 1;
            }
        }
        // Without a turn in time (logged), the group stays open for the
        // writer holding the turn, or for the waits below, to commit.
        let last = ran.last().map(|(queued, _)| queued.span.clone());
        last.unwrap_or_else(tracing::Span::none)
            .in_scope(|| store.writes.commit_open(&store, OP))
            .ok();
        for (queued, groups) in ran {
            let _entered = queued.span.enter();
            (queued.answer)(
                groups
                    .iter()
                    .try_for_each(|group| store.writes.wait_for_commit(&store, group, OP)),
            );
        }
    }
}

/// Takes back a failed job's statements: to its savepoint, or, when SQLite
/// rolled back the whole transaction itself (a full disk, an I/O error), the
/// whole group, whose members then answer with that failure.
fn undo(turn: &mut Option<Open>, op: &'static str, db: &dyn std::fmt::Display) {
    let Some(open) = turn.as_ref() else { return };
    let rolled_back = if open.conn.is_autocommit() {
        Err(Cause::Internal)
    } else {
        open.conn
            .execute_batch("ROLLBACK TO write; RELEASE write")
            .map_err(|e| {
                let cause = classify(&e);
                fault::log(op, db, cause, &e);
                cause
            })
    };
    if let Err(cause) = rolled_back {
        let open = turn.take().expect("checked above");
        if !open.conn.is_autocommit() {
            let _ = open.conn.execute_batch("ROLLBACK");
        }
        tracing::error!(
            op,
            members = open.members,
            "a write's failure ended its group's transaction"
        );
        open.group.finish(Err(cause));
    }
}

/// Runs `job` between `SAVEPOINT write` and `RELEASE write`; a panic is caught
/// so the caller can undo the savepoint before passing it on.
fn run_in_savepoint<T>(
    conn: &Connection,
    job: Job<'_, T>,
) -> std::thread::Result<R<(T, Option<i64>)>> {
    catch_unwind(AssertUnwindSafe(|| {
        run_cached(conn, "SAVEPOINT write")?;
        let done = job(conn)?;
        run_cached(conn, "RELEASE write")?;
        Ok(done)
    }))
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::thread;

    use super::*;
    use crate::store::feed::{ChangeQuery, Written};
    use crate::store::model::{NewTask, Priority};
    use crate::store::{Store, StoreOptions};

    fn scratch_store() -> (tempfile::TempDir, Arc<SqliteStore>) {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("commit.db"), &StoreOptions::default())
            .expect("store");
        store
            .write("scratch", |c| {
                c.execute_batch("CREATE TABLE scratch (n INTEGER NOT NULL)")?;
                Ok(Written::quiet(()))
            })
            .expect("scratch table");
        (dir, Arc::new(store))
    }

    fn insert(c: &Connection, n: i64) -> R<()> {
        c.execute("INSERT INTO scratch (n) VALUES (?1)", [n])?;
        Ok(())
    }

    fn committed(store: &SqliteStore) -> Vec<i64> {
        store
            .read("committed", |c| {
                super::super::rows(c, "SELECT n FROM scratch ORDER BY n", [], |r| r.get(0))
            })
            .expect("read")
    }

    /// Waits (bounded) until `n` writers wait for their turn.
    fn until_waiting(store: &SqliteStore, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while store.writes.waiting.load(Ordering::SeqCst) != n {
            assert!(Instant::now() < deadline, "{n} writers never queued");
            thread::sleep(Duration::from_millis(1));
        }
    }

    /// Write A finishes its statements while B waits for its turn, so A leaves
    /// the transaction open and waits; B runs in the same transaction (held
    /// here until told to go) and commits both.
    fn two_in_one_group(
        b_job: impl FnOnce(&Connection) -> R<()> + Send + 'static,
    ) -> (Result<(), StoreError>, Result<(), StoreError>, Vec<i64>) {
        let (_dir, store) = scratch_store();
        let (a_ran, a_ran_rx) = mpsc::channel();
        let (a_done, a_done_rx) = mpsc::channel();
        let (b_running, b_running_rx) = mpsc::channel();
        let (go, go_rx) = mpsc::channel::<()>();
        let a = {
            let store = Arc::clone(&store);
            thread::spawn(move || {
                let answer = store.write("a", |c| {
                    insert(c, 1)?;
                    a_ran.send(()).expect("main listens");
                    until_waiting(&store, 1);
                    Ok(Written::quiet(()))
                });
                a_done.send(()).expect("main listens");
                answer
            })
        };
        a_ran_rx.recv().expect("a ran");
        let b = {
            let store = Arc::clone(&store);
            thread::spawn(move || {
                store.write("b", |c| {
                    b_running.send(()).expect("main listens");
                    go_rx.recv().expect("main says go");
                    b_job(c).map(Written::quiet)
                })
            })
        };
        b_running_rx.recv().expect("b runs");
        assert!(
            a_done_rx.try_recv().is_err(),
            "A answered before the commit that holds it"
        );
        assert_eq!(
            committed(&store),
            Vec::<i64>::new(),
            "nothing is committed yet"
        );
        go.send(()).expect("b listens");
        let (a, b) = (a.join().expect("a"), b.join().expect("b"));
        (a, b, committed(&store))
    }

    #[test]
    fn writes_that_arrive_together_are_acknowledged_after_their_one_commit() {
        let (a, b, rows) = two_in_one_group(|c| insert(c, 2));
        assert!(a.is_ok() && b.is_ok(), "{a:?} {b:?}");
        assert_eq!(rows, vec![1, 2]);
    }

    #[test]
    fn a_failed_write_leaves_nothing_and_the_rest_of_its_group_commits() {
        let (a, b, rows) = two_in_one_group(|c| {
            insert(c, 2)?;
            Err(Fail::Store(StoreError::Internal))
        });
        assert!(a.is_ok(), "{a:?}");
        assert_eq!(b.expect_err("b failed"), StoreError::Internal);
        assert_eq!(
            rows,
            vec![1],
            "the failed write's row is gone, the other's kept"
        );
    }

    #[test]
    fn a_panicking_write_is_undone_and_the_writer_carries_on() {
        let (_dir, store) = scratch_store();
        let panicked = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let _ = store.write("boom", |c| -> R<Written<()>> {
                insert(c, 1)?;
                panic!("a bug in a write");
            });
        }));
        assert!(panicked.is_err(), "the panic reaches the caller");
        store
            .write("after", |c| insert(c, 2).map(Written::quiet))
            .expect("the next write runs");
        assert_eq!(committed(&store), vec![2]);
    }

    #[test]
    fn a_group_is_committed_even_when_the_writer_it_waited_for_gives_up() {
        let (_dir, store) = scratch_store();
        let writes = Arc::clone(&store);
        store
            .write("a", |c| {
                insert(c, 1)?;
                // A writer shows up, then leaves without taking its turn.
                writes.writes.waiting.fetch_add(1, Ordering::SeqCst);
                thread::spawn(move || {
                    thread::sleep(COMMIT_CHECK * 3);
                    writes.writes.waiting.fetch_sub(1, Ordering::SeqCst);
                });
                Ok(Written::quiet(()))
            })
            .expect("committed by the writer itself");
        assert_eq!(committed(&store), vec![1]);
    }

    /// A queued call that writes `n` (failing after it when `fail`), and
    /// answers with its write's result, its commit's and what a reader saw
    /// just after the write.
    fn queued(
        store: &Arc<SqliteStore>,
        n: i64,
        fail: bool,
        gate: Option<mpsc::Receiver<()>>,
        answers: &mpsc::Sender<(i64, bool, bool, Vec<i64>)>,
    ) -> WriteCall {
        let (store, answers) = (Arc::clone(store), answers.clone());
        Box::new(move || {
            if let Some(gate) = gate {
                gate.recv().expect("the test opens the gate");
            }
            let wrote = store.write("queued", |c| {
                insert(c, n)?;
                if fail {
                    return Err(Fail::Store(StoreError::Internal));
                }
                Ok(Written::quiet(()))
            });
            let seen = committed(&store);
            Queued {
                answer: Box::new(move |commit| {
                    answers
                        .send((n, wrote.is_ok(), commit.is_ok(), seen))
                        .expect("the test listens");
                }),
                span: tracing::Span::none(),
            }
        })
    }

    /// Calls queued together run one after another on the writer thread,
    /// their writes in one open transaction that nobody sees until its
    /// commit, and each is answered after that commit; a failed one leaves
    /// nothing.
    #[test]
    fn queued_calls_share_one_commit_and_are_answered_after_it() {
        let (_dir, store) = scratch_store();
        let (answers, answered) = mpsc::channel();
        let (go, gate) = mpsc::channel();
        for (n, fail, gate) in [(1, false, Some(gate)), (2, true, None), (3, false, None)] {
            assert!(
                Arc::clone(&store)
                    .queue_write(queued(&store, n, fail, gate, &answers))
                    .is_ok(),
                "the writer thread takes it"
            );
        }
        go.send(()).expect("the first call waits");
        let mut got: Vec<_> = (0..3)
            .map(|_| {
                answered
                    .recv_timeout(Duration::from_secs(10))
                    .expect("answered")
            })
            .collect();
        got.sort_by_key(|(n, ..)| *n);
        assert_eq!(
            got,
            vec![
                (1, true, true, vec![]),
                (2, false, true, vec![]),
                (3, true, true, vec![]),
            ],
            "(call, wrote, committed, what a reader saw during the batch)"
        );
        assert_eq!(committed(&store), vec![1, 3]);
    }

    #[test]
    fn a_panicking_queued_call_loses_only_its_own_answer() {
        let (_dir, store) = scratch_store();
        let (answers, answered) = mpsc::channel();
        let boom: WriteCall = Box::new(|| panic!("a bug in a queued call"));
        assert!(Arc::clone(&store).queue_write(boom).is_ok());
        assert!(
            Arc::clone(&store)
                .queue_write(queued(&store, 7, false, None, &answers))
                .is_ok()
        );
        let got = answered
            .recv_timeout(Duration::from_secs(10))
            .expect("the next call is served");
        assert_eq!(got, (7, true, true, vec![]));
        assert_eq!(committed(&store), vec![7]);
    }

    fn task(id: &str) -> NewTask {
        NewTask {
            id: format!("{id}{}", "0".repeat(26 - id.len())),
            title: format!("task {id}"),
            description: String::new(),
            tags: vec![],
            priority: Priority::Normal,
        }
    }

    fn indexed(store: &SqliteStore, word: &str) -> i64 {
        store
            .read("indexed", |c| {
                Ok(c.query_row(
                    "SELECT count(*) FROM search_index WHERE search_index MATCH ?1",
                    [word],
                    |r| r.get(0),
                )?)
            })
            .expect("search")
    }

    #[test]
    fn a_failed_write_leaves_nothing_in_the_full_text_index() {
        let (_dir, store) = scratch_store();
        let now = &crate::store::Timestamp::parse("2026-12-02T00:00:00.000000Z").expect("RFC 3339");
        let failed = store.write("doomed", |c| -> R<Written<()>> {
            super::super::tasks::create(c, &task("doomed"), now)?;
            Err(Fail::Store(StoreError::Internal))
        });
        assert!(failed.is_err());
        store.task_create(&task("kept"), now).expect("created");
        assert_eq!(indexed(&store, "doomed"), 0);
        assert_eq!(indexed(&store, "kept"), 1);
        assert_eq!(store.counts().expect("counts").tasks, 1);
    }

    #[test]
    fn concurrent_creates_are_all_kept_each_with_its_own_change() {
        let (_dir, store) = scratch_store();
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let store = Arc::clone(&store);
                thread::spawn(move || {
                    (0..50)
                        .map(|i| {
                            let task = NewTask {
                                id: format!("t{t:02}i{i:02}{}", "0".repeat(20)),
                                title: format!("task {t} {i}"),
                                description: String::new(),
                                tags: vec![],
                                priority: Priority::Normal,
                            };
                            store.task_create(
                                &task,
                                &crate::store::Timestamp::parse("2026-12-02T00:00:00.000000Z")
                                    .unwrap(),
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut created = 0;
        for t in threads {
            for answer in t.join().expect("writer") {
                answer.expect("created");
                created += 1;
            }
        }
        assert_eq!(created, 400);
        assert_eq!(store.counts().expect("counts").tasks, 400);
        let feed = store
            .changes(&ChangeQuery {
                limit: 1000,
                ..ChangeQuery::default()
            })
            .expect("feed");
        let seqs: Vec<i64> = feed.events.iter().map(|e| e.seq).collect();
        assert_eq!(
            seqs,
            (1..=400).collect::<Vec<_>>(),
            "one change per create, none lost"
        );
        assert_eq!(
            *store.watch_changes().borrow(),
            400,
            "the head is the newest commit's"
        );
        assert_eq!(
            indexed(&store, "task"),
            400,
            "every create is in the full-text index"
        );
    }
}
