//! Point reads (`task_get`, `note_read`) run on the caller's thread when the
//! store answers them at once (SQLite), and on the blocking pool otherwise;
//! a call that would wait there runs again on the pool, once, in full.

use std::sync::Mutex;
use std::thread::ThreadId;

use cairn::envelope::ToolError;
use cairn::tools::{Ctx, REGISTRY, ToolDef};
use serde_json::{Value, json};

use crate::tool_helpers::*;

fn registered(name: &str) -> &'static ToolDef {
    REGISTRY.iter().find(|d| d.name == name).expect(name)
}

/// Whether this suite's store runs point reads on the caller's thread.
fn reads_here() -> bool {
    Backend::from_env() == Backend::Sqlite
}

static GET_THREADS: Mutex<Vec<ThreadId>> = Mutex::new(Vec::new());

fn task_get_noting_the_thread(ctx: &Ctx<'_>, args: Value) -> Result<Value, ToolError> {
    GET_THREADS
        .lock()
        .unwrap()
        .push(std::thread::current().id());
    (registered("task_get").handler)(ctx, args)
}

#[tokio::test]
async fn a_point_read_runs_where_it_is_called_when_the_store_answers_at_once() {
    assert!(registered("task_get").point_read && registered("note_read").point_read);
    assert!(!registered("task_board").point_read && !registered("task_create").point_read);
    let t = cairn();
    let id = t.task("read me").await["id"].clone();
    let def = ToolDef {
        handler: task_get_noting_the_thread,
        ..*registered("task_get")
    };
    let envelope = to_json(
        t.cairn
            .call_def(&def, json!({"id": id}), "test-request")
            .await,
    );
    assert_eq!(envelope["data"]["title"], "read me", "{envelope}");
    let threads = GET_THREADS.lock().unwrap().clone();
    assert_eq!(threads.len(), 1, "the read ran once");
    assert_eq!(threads[0] == std::thread::current().id(), reads_here());
    assert!(!cairn::store::nowait::active());
}

static CREATE_THREADS: Mutex<Vec<ThreadId>> = Mutex::new(Vec::new());

fn task_create_noting_the_thread(ctx: &Ctx<'_>, args: Value) -> Result<Value, ToolError> {
    CREATE_THREADS
        .lock()
        .unwrap()
        .push(std::thread::current().id());
    (registered("task_create").handler)(ctx, args)
}

#[tokio::test]
async fn a_call_that_would_wait_runs_again_on_the_blocking_pool_and_only_there() {
    let t = cairn();
    // A write marked as a point read: the store refuses to wait for the
    // writer on the caller's thread, so the attempt writes nothing.
    let def = ToolDef {
        handler: task_create_noting_the_thread,
        point_read: true,
        ..*registered("task_create")
    };
    let envelope = to_json(
        t.cairn
            .call_def(&def, json!({"title": "once"}), "test-request")
            .await,
    );
    assert_eq!(envelope["ok"], true, "{envelope}");
    let here = std::thread::current().id();
    let threads = CREATE_THREADS.lock().unwrap().clone();
    let expected = if reads_here() {
        vec![true, false]
    } else {
        vec![false]
    };
    let ran_here: Vec<bool> = threads.iter().map(|t| *t == here).collect();
    assert_eq!(ran_here, expected, "attempted here, then run on the pool");
    let list = t.ok("task_list", json!({})).await;
    assert_eq!(list["total"], 1, "one task, written once: {list}");
    assert_eq!(list["items"][0]["title"], "once");
}

fn panicking_read(_: &Ctx<'_>, _: Value) -> Result<Value, ToolError> {
    panic!("boom: SELECT * FROM secrets at /var/lib/cairn.db")
}

#[tokio::test]
async fn a_panic_in_a_point_read_is_internal_error_and_the_next_read_is_served() {
    let t = cairn();
    let id = t.task("after the panic").await["id"].clone();
    let def = ToolDef {
        handler: panicking_read,
        ..*registered("task_get")
    };
    let envelope = to_json(
        t.cairn
            .call_def(&def, json!({"id": id}), "test-request")
            .await,
    );
    assert_eq!(envelope["ok"], false);
    assert_error(&envelope["error"], "internal", "internal_error", false);
    assert_no_internals(&envelope["error"], &t.path);
    assert!(!cairn::store::nowait::active());
    let read = t.ok("task_get", json!({"id": id})).await;
    assert_eq!(read["title"], "after the panic");
}

#[tokio::test]
async fn a_whole_id_is_read_in_any_case_and_a_32_character_slug_still_resolves() {
    let t = cairn();
    let task = t.task("whole").await["id"].as_str().unwrap().to_owned();
    let shouted = format!(" {} ", task.to_uppercase());
    assert_eq!(t.ok("task_get", json!({"id": shouted})).await["id"], task);
    let missing = t.call("task_get", json!({"id": "0".repeat(32)})).await;
    assert_eq!(missing["error"]["code"], "task_not_found", "{missing}");

    let note = t.note("Whole note", "body").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        t.ok("note_read", json!({"id": note.to_uppercase()})).await["id"],
        note
    );
    // A key of an id's length that no note has as its id is read as a slug.
    let slug = "thirty-two-characters-long-title";
    assert_eq!(slug.len(), 32);
    let titled = t.note(slug, "by slug").await["id"].clone();
    assert_eq!(t.ok("note_read", json!({"id": slug})).await["id"], titled);
}

#[tokio::test]
async fn a_store_read_runs_here_or_on_the_pool_and_a_panic_in_it_is_none() {
    let t = cairn();
    let here = std::thread::current().id();
    let ran_on = cairn::store::nowait::read(t.cairn.store(), |store| {
        store.counts().expect("counts");
        std::thread::current().id()
    })
    .await
    .expect("no panic");
    assert_eq!(ran_on == here, reads_here());
    let panicked: Option<()> =
        cairn::store::nowait::read(t.cairn.store(), |_| panic!("boom")).await;
    assert!(panicked.is_none());
    assert!(!cairn::store::nowait::active());
}
