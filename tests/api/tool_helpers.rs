//! Helpers for the tool tests: a fresh store per test, calls through
//! `Cairn::call` (JSON in, envelope out), and assertions on error bodies.
//!
//! The store conformance suite (every `tool_*` module but `tool_faults`, which
//! breaks SQLite files on purpose) runs on the backend `$CAIRN_TEST_BACKEND`
//! names: `sqlite` (the default) or `postgres` (a fresh schema per test, see
//! `pg_helpers`). tests/run.sh runs it on both, and once more with every
//! test inside a project of its own (`$CAIRN_TEST_PROJECT` names it): the
//! project is made in the fresh store, and the test's cairn, `db` and `path`
//! are the project's.

#![allow(dead_code)] // shared by every tool test module; each uses a part

use std::path::PathBuf;

use cairn::envelope::Envelope;
use cairn::store::{StoreOptions, open, open_sqlite_with};
use cairn::tools::{Cairn, Clock, Config};
use serde_json::{Value, json};
use tempfile::TempDir;

/// The backend the store conformance suite runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn from_env() -> Self {
        match std::env::var("CAIRN_TEST_BACKEND").as_deref() {
            Ok("postgres") => Self::Postgres,
            Ok("sqlite") | Err(_) => Self::Sqlite,
            Ok(other) => panic!("CAIRN_TEST_BACKEND must be sqlite or postgres, not {other}"),
        }
    }

    /// The schema version this build migrates the backend to.
    pub fn schema_version(self) -> i64 {
        match self {
            Self::Sqlite => cairn::store::sqlite::SCHEMA_VERSION,
            Self::Postgres => cairn::store::postgres::SCHEMA_VERSION,
        }
    }

    /// What `health` reports as the store kind.
    pub fn kind(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
        }
    }
}

/// When fixtures made behind the tools' back were written.
pub const FIXTURE_TIME: &str = "2026-01-01T00:00:00.000000Z";

pub struct TestCairn {
    pub cairn: Cairn,
    pub clock: Clock,
    /// What `--db` would name: the SQLite file, or the PostgreSQL URL.
    pub db: String,
    /// The SQLite file (in `dir`; unused on PostgreSQL).
    pub path: PathBuf,
    pub dir: TempDir,
    /// Dropped after `cairn` (fields drop in order), so no connection outlives it.
    pub schema: Option<crate::pg_helpers::TestSchema>,
}

/// A cairn over a fresh store on the suite's backend.
pub fn cairn() -> TestCairn {
    cairn_with(&StoreOptions::default(), Config::default())
}

pub fn cairn_with(options: &StoreOptions, config: Config) -> TestCairn {
    let fresh = match Backend::from_env() {
        Backend::Sqlite => sqlite_cairn_with(options, config),
        Backend::Postgres => postgres_cairn_with(options, config),
    };
    match std::env::var("CAIRN_TEST_PROJECT") {
        Ok(key) if !key.is_empty() && key != cairn::store::DEFAULT_PROJECT => {
            fresh.in_new_project(&key)
        }
        _ => fresh,
    }
}

/// A cairn over a fresh PostgreSQL schema, whatever the suite's backend.
pub fn postgres_cairn() -> TestCairn {
    postgres_cairn_with(&StoreOptions::default(), Config::default())
}

pub fn postgres_cairn_with(options: &StoreOptions, config: Config) -> TestCairn {
    let schema = crate::pg_helpers::TestSchema::create();
    let db = schema.url().to_owned();
    let store = open(&db, options).expect("store opens");
    let dir = tempfile::tempdir().expect("temp dir");
    TestCairn {
        clock: config.clock.clone(),
        cairn: Cairn::new(store, config),
        db,
        path: dir.path().join("unused.db"),
        dir,
        schema: Some(schema),
    }
}

/// A cairn over a new SQLite file, whatever the suite's backend.
pub fn sqlite_cairn() -> TestCairn {
    sqlite_cairn_with(&StoreOptions::default(), Config::default())
}

/// A cairn over a new SQLite file in its own temp dir, whatever the suite's backend.
pub fn sqlite_cairn_with(options: &StoreOptions, config: Config) -> TestCairn {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("cairn.db");
    let store = open_sqlite_with(&path, options).expect("store opens");
    TestCairn {
        clock: config.clock.clone(),
        cairn: Cairn::new(store, config),
        db: path.to_string_lossy().into_owned(),
        path,
        dir,
        schema: None,
    }
}

/// Another cairn (its own store and connections) on the same database.
pub fn reopen(db: &str, options: &StoreOptions) -> Cairn {
    let store = open(db, options).expect("store reopens");
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
    /// The same test cairn inside a new project `key`: its calls, its `db`
    /// and `path` (for `reopen` and `raw_sql`) are the project's.
    pub fn in_new_project(mut self, key: &str) -> Self {
        let now = cairn::store::timestamp(self.clock.now());
        let new = cairn::tools::projects::ProjectNew {
            key: key.to_owned(),
            name: None,
        };
        // Off the async executor, where the PostgreSQL client must not run.
        let first = &self.cairn;
        self.cairn = std::thread::scope(|s| {
            s.spawn(|| {
                cairn::tools::projects::create(first.projects(), new, &now)
                    .expect("the project is made");
                first.in_project_blocking(key).expect("the project opens")
            })
            .join()
            .expect("the project is made")
        });
        assert_eq!(self.cairn.project(), key);
        match &self.schema {
            None => {
                self.path = self.dir.path().join(format!("cairn.db.projects/{key}.db"));
                self.db = self.path.to_string_lossy().into_owned();
            }
            Some(schema) => {
                // The first project made after `default` (id 1) has id 2.
                let name = schema.name();
                self.db = self.db.replace(
                    &format!("search_path%3D{name}"),
                    &format!("search_path%3D{name}_p2"),
                );
            }
        }
        self
    }

    /// Runs `f` on the store directly, off the async executor (as tools run),
    /// for fixtures the tools cannot make (chosen ids, bulk loads).
    pub async fn with_store<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn cairn::store::Store) -> T + Send + 'static,
    ) -> T {
        let store = self.cairn.store().clone();
        tokio::task::spawn_blocking(move || f(store.as_ref()))
            .await
            .expect("the store call finishes")
    }

    /// Runs SQL on the database behind the tools' back (to break what the
    /// tools never would); it must be valid on both backends.
    pub fn raw_sql(&self, sql: &str) {
        match &self.schema {
            None => rusqlite::Connection::open(&self.path)
                .and_then(|c| c.execute_batch(sql))
                .expect(sql),
            Some(_) => crate::pg_helpers::execute(&self.db, sql),
        }
    }

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

    /// A task with a chosen id (random ids rarely share 6 characters, so the
    /// prefix rules need these).
    pub async fn task_with_id(&self, id: &str, title: &str) {
        let task = chosen_task(id, title);
        let created = self
            .with_store(move |store| {
                store
                    .task_create(
                        &task,
                        &cairn::store::Timestamp::parse(FIXTURE_TIME).unwrap(),
                    )
                    .map(|_| ())
            })
            .await;
        created.expect("the task is created");
    }

    /// A note with a chosen id; its slug is made from `title`.
    pub async fn note_with_id(&self, id: &str, title: &str) {
        let draft = cairn::store::NoteDraft {
            id: id.to_owned(),
            title: title.to_owned(),
            slug: cairn::tools::notes::slugify(title),
            content: String::new(),
            tags: None,
            source_url: None,
            wiki_links: Vec::new(),
        };
        let created = self
            .with_store(move |store| {
                store
                    .note_create(
                        &draft,
                        &cairn::store::Timestamp::parse(FIXTURE_TIME).unwrap(),
                    )
                    .map(|_| ())
            })
            .await;
        created.expect("the note is created");
    }
}

/// A task as created, with an id the test chooses (the tools always pick random ids).
pub fn chosen_task(id: &str, title: &str) -> cairn::store::NewTask {
    cairn::store::NewTask {
        id: id.to_owned(),
        title: title.to_owned(),
        description: String::new(),
        tags: Vec::new(),
        priority: Default::default(),
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
