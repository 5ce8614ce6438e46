//! Task writes through one cairn at once. On SQLite they queue for the
//! store's writer thread, which runs the calls that arrive together in one
//! transaction and answers each after its commit (`store::sqlite::commit`);
//! elsewhere they run on the blocking pool. Either way every race is decided
//! by the database and every acknowledged write is there exactly once.

use std::collections::HashSet;
use std::sync::Mutex;

use cairn::envelope::ToolError;
use cairn::tools::{Ctx, Effect, Module, REGISTRY, ToolDef};
use serde_json::{Value, json};

use crate::tool_changes::everything;
use crate::tool_concurrency::one_holds;
use crate::tool_helpers::*;

fn registered(name: &str) -> &'static ToolDef {
    REGISTRY.iter().find(|d| d.name == name).expect(name)
}

/// `tool` with each of `args`, all at once through one cairn.
async fn at_once(t: &TestCairn, tool: &'static str, args: Vec<Value>) -> Vec<Value> {
    let calls: Vec<_> = args
        .into_iter()
        .map(|args| {
            let cairn = t.cairn.clone();
            tokio::spawn(async move { call(&cairn, tool, args).await })
        })
        .collect();
    let mut out = Vec::new();
    for c in calls {
        out.push(c.await.unwrap());
    }
    out
}

/// Every task write, and nothing else: each writes once, as its last store
/// call, and answers from that write.
#[test]
fn the_task_writes_are_the_queued_ones() {
    for def in REGISTRY {
        let task_write = def.module == Module::Tasks && def.effect == Effect::Writes;
        assert_eq!(def.one_write, task_write, "{}", def.name);
    }
    assert!(REGISTRY.iter().any(|d| d.one_write));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn claims_of_one_task_through_one_cairn_one_holds_it() {
    let t = cairn();
    let id = t.task("prize").await["id"].clone();
    let args = (0..32)
        .map(|i| json!({"id": id, "agent": format!("agent-{i}")}))
        .collect();
    let holder = one_holds(&at_once(&t, "task_claim", args).await);
    let now = t.ok("task_get", json!({"id": id})).await;
    assert_eq!(now["claim"]["holder"], holder);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn creates_and_transitions_at_once_are_each_written_once_with_one_event() {
    let t = cairn();
    let n = 200;
    let creates = (0..n)
        .map(|i| json!({"title": format!("task {i}")}))
        .collect();
    let created = at_once(&t, "task_create", creates).await;
    assert!(created.iter().all(|r| r["ok"] == true), "{created:#?}");
    let ids: HashSet<&str> = created
        .iter()
        .map(|r| r["data"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), n);
    let completes = ids.iter().map(|id| json!({"id": id})).collect();
    let completed = at_once(&t, "task_complete", completes).await;
    assert!(completed.iter().all(|r| r["ok"] == true), "{completed:#?}");

    let done = t
        .ok("task_list", json!({"status": "done", "limit": 1}))
        .await;
    assert_eq!(done["total"], n);
    let events = everything(&t).await;
    assert_eq!(events.len(), 2 * n, "one event per acknowledged write");
    let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    let first = seqs[0];
    assert_eq!(
        seqs,
        (first..first + 2 * n as i64).collect::<Vec<_>>(),
        "numbered without gaps"
    );
}

fn panicking_write(_: &Ctx<'_>, _: Value) -> Result<Value, ToolError> {
    panic!("boom: INSERT INTO tasks at /var/lib/cairn.db")
}

/// `task_create` with its handler swapped for `handler`, called once.
async fn create_with(
    t: &TestCairn,
    handler: cairn::tools::registry::Handler,
    title: &str,
) -> Value {
    let def = ToolDef {
        handler,
        ..*registered("task_create")
    };
    let args = json!({ "title": title });
    to_json(t.cairn.call_def(&def, args, "test-request").await)
}

#[tokio::test]
async fn a_panic_in_a_queued_write_is_internal_error_and_the_next_write_is_served() {
    let t = cairn();
    let envelope = create_with(&t, panicking_write, "never").await;
    assert_eq!(envelope["ok"], false);
    assert_error(&envelope["error"], "internal", "internal_error", false);
    assert_no_internals(&envelope["error"], &t.path);
    let after = t.ok("task_create", json!({"title": "after"})).await;
    assert_eq!(after["title"], "after");
    let list = t.ok("task_list", json!({})).await;
    assert_eq!(list["total"], 1);
}

static THREADS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn create_noting_the_thread(ctx: &Ctx<'_>, args: Value) -> Result<Value, ToolError> {
    let thread = std::thread::current();
    THREADS
        .lock()
        .unwrap()
        .push(thread.name().unwrap_or("unnamed").to_owned());
    (registered("task_create").handler)(ctx, args)
}

#[tokio::test]
async fn a_task_write_runs_on_the_writer_thread_where_the_store_has_one() {
    let t = cairn();
    let envelope = create_with(&t, create_noting_the_thread, "where").await;
    assert_eq!(envelope["ok"], true, "{envelope}");
    let threads = THREADS.lock().unwrap().clone();
    assert_eq!(threads.len(), 1, "ran once: {threads:?}");
    assert_eq!(
        threads[0] == "sqlite-writer",
        Backend::from_env() == Backend::Sqlite,
        "on the writer thread on SQLite, on the blocking pool elsewhere: {threads:?}"
    );
}
