//! Helpers for the tool tests: a fresh file database per test, calls through
//! `Cairn::call` (JSON in, envelope out), and assertions on error bodies.

#![allow(dead_code)] // shared by every tool test module; each uses a part

use std::path::PathBuf;

use cairn::envelope::Envelope;
use cairn::store::{StoreOptions, open_sqlite_with};
use cairn::tools::{Cairn, Clock, Config};
use serde_json::{Value, json};
use tempfile::TempDir;

pub struct TestCairn {
    pub cairn: Cairn,
    pub clock: Clock,
    pub path: PathBuf,
    pub dir: TempDir,
}

/// A cairn over a new database file in its own temp dir.
pub fn cairn() -> TestCairn {
    cairn_with(&StoreOptions::default(), Config::default())
}

pub fn cairn_with(options: &StoreOptions, config: Config) -> TestCairn {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("cairn.db");
    let store = open_sqlite_with(&path, options).expect("store opens");
    let clock = config.clock.clone();
    TestCairn {
        cairn: Cairn::new(store, config),
        clock,
        path,
        dir,
    }
}

/// Another cairn (its own store and connections) on the same file.
pub fn reopen(path: &std::path::Path, options: &StoreOptions) -> Cairn {
    let store = open_sqlite_with(path, options).expect("store reopens");
    Cairn::new(store, Config::default())
}

/// The envelope as a surface would serialize it (data or error, and meta).
pub fn to_json(envelope: Envelope) -> Value {
    match envelope.outcome {
        Ok(data) => json!({"ok": true, "data": data, "meta": envelope.meta}),
        Err(error) => json!({"ok": false, "error": error, "meta": envelope.meta}),
    }
}

impl TestCairn {
    pub async fn call(&self, tool: &str, args: Value) -> Value {
        call(&self.cairn, tool, args).await
    }

    /// The data of a call that must succeed.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        ok(&self.cairn, tool, args).await
    }

    /// The error body of a call that must fail.
    pub async fn err(&self, tool: &str, args: Value) -> Value {
        err(&self.cairn, tool, args).await
    }

    pub async fn task(&self, title: &str) -> Value {
        self.ok("task_create", json!({"title": title})).await
    }

    pub async fn note(&self, title: &str, content: &str) -> Value {
        self.ok("note_write", json!({"title": title, "content": content}))
            .await
    }
}

pub async fn call(cairn: &Cairn, tool: &str, args: Value) -> Value {
    to_json(cairn.call(tool, args, "test-request").await)
}

pub async fn ok(cairn: &Cairn, tool: &str, args: Value) -> Value {
    let envelope = call(cairn, tool, args.clone()).await;
    assert_eq!(
        envelope["ok"], true,
        "{tool}({args}) should succeed: {envelope:#}"
    );
    envelope["data"].clone()
}

pub async fn err(cairn: &Cairn, tool: &str, args: Value) -> Value {
    let envelope = call(cairn, tool, args.clone()).await;
    assert_eq!(
        envelope["ok"], false,
        "{tool}({args}) should fail: {envelope:#}"
    );
    assert!(envelope.get("data").is_none());
    envelope["error"].clone()
}

/// Asserts category, code and retry flag of an error body (never its message).
#[track_caller]
pub fn assert_error(error: &Value, category: &str, code: &str, retryable: bool) {
    assert_eq!(error["code"], code, "code of {error:#}");
    assert_eq!(error["category"], category, "category of {error:#}");
    assert_eq!(error["retryable"], retryable, "retryable of {error:#}");
    assert_eq!(error["request_id"], "test-request");
    assert!(error["details"].is_object() && error["suggestions"].is_array());
}

/// Asserts a message carries no internals: no SQL, driver text or path.
#[track_caller]
pub fn assert_no_internals(error: &Value, path: &std::path::Path) {
    let message = error["message"].as_str().expect("message").to_owned();
    let lower = message.to_lowercase();
    for word in [
        "select ",
        "insert ",
        "update ",
        "delete ",
        " from ",
        "where ",
        "sqlite",
        "rusqlite",
        "no such",
        "database is locked",
        "/tmp",
        "cairn.db",
    ] {
        assert!(!lower.contains(word), "message leaks `{word}`: {message}");
    }
    let dir = path.parent().unwrap().to_string_lossy().to_string();
    assert!(!message.contains(&dir), "message leaks the path: {message}");
    let whole = error.to_string();
    assert!(!whole.contains(&dir), "error body leaks the path: {whole}");
}
