//! Races decided by the database: separate stores on one file (so no
//! in-process lock helps), many writers at once.

use std::collections::HashSet;

use cairn::tools::Cairn;
use serde_json::{Value, json};

use crate::tool_helpers::*;

const WRITERS: usize = 16;

/// One independent cairn (its own store, its own connections) per writer.
pub fn instances(t: &TestCairn) -> Vec<Cairn> {
    (0..WRITERS)
        .map(|_| reopen(&t.db, &Default::default()))
        .collect()
}

pub async fn all_at_once(
    cairns: Vec<Cairn>,
    make: impl Fn(usize) -> (&'static str, Value),
) -> Vec<Value> {
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(cairns.len()));
    let handles: Vec<_> = cairns
        .into_iter()
        .enumerate()
        .map(|(i, cairn)| {
            let (tool, args) = make(i);
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                call(&cairn, tool, args).await
            })
        })
        .collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

/// The holder of the one claim among `results` that won; every other
/// answer is `claim_held`, naming it.
pub fn one_holds(results: &[Value]) -> Value {
    let winners: Vec<_> = results.iter().filter(|r| r["ok"] == true).collect();
    assert_eq!(winners.len(), 1, "{results:#?}");
    let holder = winners[0]["data"]["claim"]["holder"].clone();
    for loser in results.iter().filter(|r| r["ok"] == false) {
        assert_error(&loser["error"], "conflict", "claim_held", false);
        assert_eq!(loser["error"]["details"]["holder"], holder);
    }
    holder
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_writers_with_the_same_expected_version_one_wins() {
    let t = cairn();
    let id = t.task("race").await["id"].clone();
    let results = all_at_once(instances(&t), |i| {
        (
            "task_update",
            json!({"id": id, "expected_version": 1, "title": format!("writer {i}")}),
        )
    })
    .await;
    let winners: Vec<_> = results.iter().filter(|r| r["ok"] == true).collect();
    assert_eq!(winners.len(), 1, "{results:#?}");
    for loser in results.iter().filter(|r| r["ok"] == false) {
        assert_error(&loser["error"], "conflict", "version_conflict", false);
        assert_eq!(loser["error"]["details"]["current_version"], 2);
    }
    let now = t.ok("task_get", json!({"id": id})).await;
    assert_eq!(now["version"], 2);
    assert_eq!(now["title"], winners[0]["data"]["title"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_agents_claiming_one_task_one_holds_it() {
    let t = cairn();
    let id = t.task("prize").await["id"].clone();
    let results = all_at_once(instances(&t), |i| {
        (
            "task_claim",
            json!({"id": id, "agent": format!("agent-{i}")}),
        )
    })
    .await;
    let holder = one_holds(&results);
    let now = t.ok("task_get", json!({"id": id})).await;
    assert_eq!(now["claim"]["holder"], holder);
    assert_eq!(now["version"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_completions_of_one_claimed_task_one_wins_and_its_event_ends_the_claim() {
    let t = cairn();
    let id = t.task("finish line").await["id"].clone();
    t.ok("task_claim", json!({"id": id, "agent": "ann"})).await;
    let results = all_at_once(instances(&t), |_| ("task_complete", json!({"id": id}))).await;
    let winners: Vec<_> = results.iter().filter(|r| r["ok"] == true).collect();
    assert_eq!(winners.len(), 1, "{results:#?}");
    assert_eq!(winners[0]["data"]["status"], "done");
    for loser in results.iter().filter(|r| r["ok"] == false) {
        assert_error(&loser["error"], "conflict", "invalid_transition", false);
    }
    let events = crate::tool_changes::everything(&t).await;
    let completed: Vec<_> = events
        .iter()
        .filter(|e| e["kind"] == "task.completed")
        .collect();
    assert_eq!(completed.len(), 1, "one event, the winner's: {events:#?}");
    assert_eq!(completed[0]["changes"]["released_claim"]["holder"], "ann");
    assert_eq!(completed[0]["version"], winners[0]["data"]["version"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_lose_nothing_and_double_nothing() {
    let t = cairn();
    let results = all_at_once(instances(&t), |i| {
        (
            "note_write",
            json!({"title": format!("note {i}"), "content": "x"}),
        )
    })
    .await;
    assert!(results.iter().all(|r| r["ok"] == true), "{results:#?}");
    let ids: HashSet<_> = results.iter().map(|r| r["data"]["id"].clone()).collect();
    assert_eq!(ids.len(), WRITERS);
    assert_eq!(t.ok("note_list", json!({})).await["total"], WRITERS);
    // The same title from everyone: exactly one note, the rest slug_collision.
    let results = all_at_once(instances(&t), |_| {
        ("note_write", json!({"title": "Same", "content": "x"}))
    })
    .await;
    assert_eq!(results.iter().filter(|r| r["ok"] == true).count(), 1);
    for loser in results.iter().filter(|r| r["ok"] == false) {
        assert_error(&loser["error"], "conflict", "slug_collision", false);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn optimistic_retries_apply_every_update_exactly_once() {
    let t = cairn();
    let id = t.task("counter").await["id"].clone();
    // 16 writers, one write each: the tags stay within the 20 a task may hold.
    let rounds = 1;
    let handles: Vec<_> = instances(&t)
        .into_iter()
        .map(|cairn| {
            let id = id.clone();
            tokio::spawn(async move {
                for _ in 0..rounds {
                    loop {
                        let task = ok(&cairn, "task_get", json!({"id": id})).await;
                        let mut tags: Vec<String> =
                            serde_json::from_value(task["tags"].clone()).unwrap();
                        tags.push(format!("v{}", task["version"]));
                        let r = call(
                            &cairn,
                            "task_update",
                            json!({"id": id, "expected_version": task["version"], "tags": tags}),
                        )
                        .await;
                        if r["ok"] == true {
                            break;
                        }
                        assert_eq!(r["error"]["code"], "version_conflict", "{r:#}");
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.await.unwrap();
    }
    let task = t.ok("task_get", json!({"id": id})).await;
    let n = WRITERS * rounds;
    assert_eq!(task["version"], 1 + n);
    // One tag per successful write, each made from the version it read: none lost, none doubled.
    let tags: Vec<String> = serde_json::from_value(task["tags"].clone()).unwrap();
    let want: Vec<String> = (1..=n).map(|v| format!("v{v}")).collect();
    assert_eq!(tags, want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn notes_linking_one_another_written_at_once_get_every_edge_once() {
    let t = cairn();
    let everyone: String = (0..WRITERS).map(|i| format!("[[Note {i}]] ")).collect();
    let results = all_at_once(instances(&t), |i| {
        (
            "note_write",
            json!({"title": format!("Note {i}"), "content": everyone}),
        )
    })
    .await;
    assert!(results.iter().all(|r| r["ok"] == true), "{results:#?}");
    // Whoever wrote first found few of the others; the ones after linked
    // both ways, so the graph ends as if they had come one at a time.
    let graph = t.ok("graph_export", json!({})).await;
    let edges: Vec<(&str, &str)> = graph["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "links_to")
        .map(|e| (e["source"].as_str().unwrap(), e["target"].as_str().unwrap()))
        .collect();
    let distinct: HashSet<_> = edges.iter().collect();
    assert_eq!(distinct.len(), edges.len(), "no edge twice: {edges:?}");
    assert_eq!(edges.len(), WRITERS * (WRITERS - 1), "{edges:?}");
    assert!(edges.iter().all(|(source, target)| source != target));
    let doctor = t.ok("graph_doctor", json!({})).await;
    assert_eq!(doctor["duplicates"], json!([]), "{doctor:#}");
    for r in &results {
        let note = t.ok("note_read", json!({"id": r["data"]["id"]})).await;
        assert_eq!(note["unresolved_links"], json!([]), "{note:#}");
    }
}
