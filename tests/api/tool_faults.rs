//! Store failures reach callers as envelope codes, never as driver text:
//! read-only -> `read_only`, a lock held past the busy timeout -> `store_busy`
//! (retryable), the database gone -> `store_unavailable`, anything else ->
//! `internal_error`; and the log line carries what the message may not.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn::store::{StoreOptions, open_sqlite, open_sqlite_with};
use serde_json::json;

use crate::tool_helpers::*;

#[tokio::test]
async fn writes_to_a_store_opened_read_only_are_read_only() {
    let t = sqlite_cairn();
    let task = t.task("existing").await;
    // The driver itself refuses: the connection is opened with SQLITE_OPEN_READONLY.
    let ro = reopen(
        &t.db,
        &StoreOptions {
            read_only: true,
            ..Default::default()
        },
    );
    assert_eq!(
        ok(&ro, "task_get", json!({"id": task["id"]})).await["title"],
        "existing"
    );
    for (tool, args) in [
        ("task_create", json!({"title": "new"})),
        ("task_claim", json!({"id": task["id"], "agent": "ada"})),
        ("note_write", json!({"title": "n", "content": ""})),
    ] {
        let e = err(&ro, tool, args).await;
        assert_error(&e, "permission", "read_only", false);
        assert_no_internals(&e, &t.path);
    }
}

/// Clears the immutable attribute again, so the temp dir can be removed.
struct Immutable(std::path::PathBuf);

impl Immutable {
    /// `chattr +i`: even root cannot open the file for writing. `None` where the
    /// file system or tool does not support it.
    fn set(path: &std::path::Path) -> Option<Self> {
        let ok = std::process::Command::new("chattr")
            .arg("+i")
            .arg(path)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Self(path.to_owned()))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}

#[tokio::test]
async fn a_write_protected_database_file_serves_reads_and_answers_read_only_to_writes() {
    let t = sqlite_cairn();
    let task = t.task("kept").await;
    let path = t.path.clone();
    drop(t.cairn); // close every connection: the WAL is checkpointed and removed
    let Some(_guard) = Immutable::set(&path) else {
        panic!("chattr +i is not supported here; this test needs an ext4-like temp dir");
    };
    // Asked for read-write, SQLite falls back to read-only on a protected file.
    let store = open_sqlite(&path).expect("a protected file still opens for reading");
    let cairn = cairn::tools::Cairn::new(store, Default::default());
    assert_eq!(
        ok(&cairn, "task_get", json!({"id": task["id"]})).await["title"],
        "kept"
    );
    let e = err(&cairn, "task_create", json!({"title": "refused"})).await;
    assert_error(&e, "permission", "read_only", false);
    assert_no_internals(&e, &path);
    let e = err(
        &cairn,
        "task_update",
        json!({"id": task["id"], "title": "x"}),
    )
    .await;
    assert_error(&e, "permission", "read_only", false);
    let health = ok(&cairn, "health", json!({})).await;
    assert_eq!(health["status"], "degraded");
    assert_eq!(health["checks"][1]["code"], "read_only");
}

#[tokio::test]
async fn a_lock_held_past_the_busy_timeout_is_store_busy_and_retryable() {
    let options = StoreOptions {
        busy_timeout: Duration::from_millis(200),
        ..Default::default()
    };
    let t = sqlite_cairn_with(&options, Default::default());
    let task = t.task("contended").await;
    let locker = rusqlite::Connection::open(&t.path).unwrap();
    locker.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let e = t.err("task_create", json!({"title": "blocked"})).await;
    assert_error(&e, "transient", "store_busy", true);
    assert!(e["retry_after_ms"].as_u64().unwrap() > 0);
    assert_no_internals(&e, &t.path);
    let e = t
        .err("task_claim", json!({"id": task["id"], "agent": "ada"}))
        .await;
    assert_error(&e, "transient", "store_busy", true);
    // Readers are not blocked by a writer in WAL mode.
    t.ok("task_get", json!({"id": task["id"]})).await;
    locker.execute_batch("ROLLBACK").unwrap();
    t.task("after the lock").await;
}

#[tokio::test]
async fn a_removed_database_directory_is_store_unavailable() {
    let t = sqlite_cairn();
    let task = t.task("doomed").await;
    std::fs::remove_dir_all(t.dir.path()).unwrap();
    for (tool, args) in [
        ("task_get", json!({"id": task["id"]})),
        ("task_create", json!({"title": "x"})),
        ("task_list", json!({})),
        ("search", json!({"q": "doomed"})),
    ] {
        let e = t.err(tool, args).await;
        assert_error(&e, "unavailable", "store_unavailable", true);
        assert_no_internals(&e, &t.path);
    }
}

/// A file put in the store's place (a backup moved over it, say) is not the
/// store the connections hold open: they would go on serving the replaced
/// file, so the store answers unavailable until it is opened again.
/// (Opening it again is the operator's call: the old file's WAL is still
/// beside the new one.)
#[tokio::test]
async fn a_database_file_replaced_by_a_rename_is_store_unavailable() {
    let t = sqlite_cairn();
    let task = t.task("before the swap").await;
    let other = t.dir.path().join("other.db");
    drop(open_sqlite(&other).expect("another store opens"));
    std::fs::rename(&other, &t.path).unwrap();
    let e = t.err("task_get", json!({"id": task["id"]})).await;
    assert_error(&e, "unavailable", "store_unavailable", true);
    assert_no_internals(&e, &t.path);
}

#[test]
fn opening_a_path_that_cannot_be_a_database_is_store_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let missing_dir = dir.path().join("no/such/dir/cairn.db");
    let e = open_sqlite(&missing_dir)
        .err()
        .map(cairn::envelope::ToolError::from)
        .expect("cannot open");
    assert_eq!(e.code.as_str(), "store_unavailable");
    assert!(!e.message.contains(&*dir.path().to_string_lossy()));
    let not_a_db = dir.path().join("text.db");
    std::fs::write(
        &not_a_db,
        "this is not a database file, not at all. ".repeat(100),
    )
    .unwrap();
    let e = open_sqlite(&not_a_db)
        .err()
        .map(cairn::envelope::ToolError::from)
        .expect("cannot open");
    assert_eq!(e.code.as_str(), "store_unavailable");
    assert!(!e.message.contains("text.db"));
}

#[test]
fn opening_is_idempotent_and_migrates_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cairn.db");
    for _ in 0..3 {
        let store = open_sqlite_with(&path, &StoreOptions::default()).unwrap();
        assert_eq!(
            store.schema_version().unwrap(),
            cairn::store::sqlite::SCHEMA_VERSION
        );
    }
}

/// A writer that appends to a shared buffer, for capturing log lines.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

// nextest runs each test in its own process, so a global subscriber is this test's alone.
#[tokio::test]
async fn an_unexpected_store_error_is_internal_error_and_the_log_has_the_details() {
    let logs = Captured::default();
    let writer = logs.clone();
    let _ = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .try_init();
    let t = sqlite_cairn();
    let task = t.task("x").await;
    rusqlite::Connection::open(&t.path)
        .unwrap()
        .execute_batch("ALTER TABLE tasks RENAME COLUMN title TO headline")
        .unwrap();
    let envelope = to_json(
        t.cairn
            .call("task_get", json!({"id": task["id"]}), "req-4242")
            .await,
    );
    let e = &envelope["error"];
    assert_eq!(e["code"], "internal_error");
    assert_eq!(e["category"], "internal");
    assert_eq!(e["retryable"], false);
    assert_eq!(e["request_id"], "req-4242");
    assert_eq!(e["details"], json!({}));
    let message = e["message"].as_str().unwrap();
    assert!(!message.contains("title") && !message.contains("tasks") && !message.contains("/"));
    let logged = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    let line = logged
        .lines()
        .find(|l| l.contains("store operation failed"))
        .unwrap_or_else(|| panic!("no store error logged in:\n{logged}"));
    for needle in [
        "task_get",
        "req-4242",
        &format!("pid={}", std::process::id()),
        "thread=",
        &t.path.display().to_string(),
        "no such column",
    ] {
        assert!(line.contains(needle), "log line lacks `{needle}`: {line}");
    }
}

#[tokio::test]
async fn health_with_the_store_gone_is_unavailable_and_still_answers() {
    let t = sqlite_cairn();
    std::fs::remove_dir_all(t.dir.path()).unwrap();
    let h = t.ok("health", json!({})).await;
    assert_eq!(h["status"], "unavailable");
    assert_eq!(h["counts"], json!(null));
    assert_eq!(h["checks"][0]["code"], "store_unavailable");
}

#[tokio::test]
async fn a_dropped_index_is_search_unavailable_while_writes_go_on() {
    let t = sqlite_cairn();
    t.task("findable").await;
    rusqlite::Connection::open(&t.path)
        .unwrap()
        .execute_batch("DROP TABLE search_index")
        .unwrap();
    let e = t.err("search", json!({"q": "findable"})).await;
    assert_error(&e, "unavailable", "search_unavailable", true);
    assert_no_internals(&e, &t.path);
    t.task("still writable").await;
    let health = t.ok("health", json!({})).await;
    assert_eq!(health["status"], "degraded");
    assert_eq!(health["search"], false);
    // Reopening rebuilds the index from the rows.
    let reopened = reopen(&t.db, &Default::default());
    let hits = ok(&reopened, "search", json!({"q": "findable"})).await;
    assert_eq!(hits["total"], 1);
}
