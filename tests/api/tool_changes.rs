//! The change feed through `changes_since`: one event per acknowledged write,
//! in the write's transaction, numbered without gaps; cursors that page with
//! no loss or repeat; filters; invalid and expired cursors.

use std::collections::BTreeSet;

use cairn::store::{NewTask, Priority, StoreOptions};
use cairn::tools::Config;
use serde_json::{Value, json};

use crate::tool_concurrency::{all_at_once, instances};
use crate::tool_helpers::*;

pub async fn everything(t: &TestCairn) -> Vec<Value> {
    let mut events = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"limit": 500});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = t.ok("changes_since", args).await;
        events.extend(page["events"].as_array().unwrap().iter().cloned());
        cursor = Some(page["next_cursor"].as_str().unwrap().to_owned());
        if page["has_more"] == false {
            return events;
        }
    }
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["kind"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn each_acknowledged_write_appends_one_event_and_refusals_none() {
    let t = cairn();
    let task = t.task("Feed me").await;
    let id = task["id"].clone();
    t.ok("task_update", json!({"id": id, "priority": "high"}))
        .await;
    t.ok("task_claim", json!({"id": id, "agent": "ann"})).await;
    t.err("task_claim", json!({"id": id, "agent": "bob"})).await;
    t.err(
        "task_update",
        json!({"id": id, "title": "x", "expected_version": 1}),
    )
    .await;
    t.ok("task_renew", json!({"id": id, "agent": "ann"})).await;
    t.ok("task_release", json!({"id": id, "agent": "ann"}))
        .await;
    t.ok("task_claim", json!({"id": id, "agent": "cy"})).await;
    t.ok("task_complete", json!({"id": id})).await;
    t.ok("task_reopen", json!({"id": id})).await;
    t.ok("task_cancel", json!({"id": id})).await;
    let events = everything(&t).await;
    assert_eq!(
        kinds(&events),
        [
            "task.created",
            "task.updated",
            "task.claimed",
            "task.renewed",
            "task.released",
            "task.claimed",
            "task.completed",
            "task.reopened",
            "task.cancelled"
        ]
    );
    let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, (1..=9).collect::<Vec<_>>(), "numbered without gaps");
    for e in &events {
        assert_eq!(
            e["entity"],
            json!({"type": "task", "id": id, "title": "Feed me"})
        );
    }
    assert_eq!(events[0]["version"], 1);
    assert_eq!(events[1]["version"], 2);
    assert_eq!(events[2]["agent"], "ann");
    assert_eq!(events[4]["changes"]["released_claim"]["holder"], "ann");
    // Completing over cy's live claim releases it, and the event says so.
    assert_eq!(events[6]["changes"]["released_claim"]["holder"], "cy");
    assert_eq!(events[7]["changes"], json!({}));
    assert_eq!(events[0]["at"], task["created_at"]);
}

#[tokio::test]
async fn note_and_link_writes_describe_what_they_changed() {
    let t = cairn();
    let target = t.note("Target", "plain").await;
    let source = t.note("Source", "see [[Target]] and [[Nowhere]]").await;
    let task = t.task("t").await;
    let link = t
        .ok(
            "link_add",
            json!({"source": task["id"], "target": target["id"], "kind": "relates_to"}),
        )
        .await;
    // The same edge again changes nothing, so it is no event.
    t.ok(
        "link_add",
        json!({"source": task["id"], "target": target["id"], "kind": "relates_to"}),
    )
    .await;
    t.ok("link_remove", json!({"id": link["id"]})).await;
    t.ok("note_delete", json!({"id": source["id"]})).await;
    let events = everything(&t).await;
    assert_eq!(
        kinds(&events),
        [
            "note.written",
            "note.written",
            "task.created",
            "link.added",
            "link.removed",
            "note.deleted"
        ]
    );
    assert_eq!(events[1]["changes"]["linked"], json!([target["id"]]));
    assert_eq!(events[1]["changes"]["unresolved_links"], json!(["nowhere"]));
    assert_eq!(events[1]["changes"]["created"], true);
    assert_eq!(events[3]["entity"]["type"], "link");
    assert_eq!(events[3]["entity"]["title"], "relates_to");
    assert_eq!(events[3]["changes"]["source"], task["id"]);
    assert_eq!(events[5]["entity"]["id"], source["id"]);
    assert_eq!(events[5]["version"], json!(null));
}

#[tokio::test]
async fn next_cursor_is_there_when_nothing_is_new_and_moves_past_filtered_events() {
    let t = cairn();
    let empty = t.ok("changes_since", json!({})).await;
    assert_eq!(empty["events"], json!([]));
    assert_eq!(empty["next_cursor"], "0");
    let a = t.task("a").await;
    t.task("b").await;
    t.ok("task_claim", json!({"id": a["id"], "agent": "ann"}))
        .await;
    let claims = t
        .ok("changes_since", json!({"kinds": ["task.claimed"]}))
        .await;
    assert_eq!(
        kinds(claims["events"].as_array().unwrap()),
        ["task.claimed"]
    );
    assert_eq!(claims["next_cursor"], "3");
    let nothing = t.ok("changes_since", json!({"cursor": "3"})).await;
    assert_eq!(nothing["events"], json!([]));
    assert_eq!(nothing["next_cursor"], "3");
    assert_eq!(nothing["has_more"], false);
    let about_a = t.ok("changes_since", json!({"entity_id": a["id"]})).await;
    assert_eq!(
        kinds(about_a["events"].as_array().unwrap()),
        ["task.created", "task.claimed"]
    );
}

#[tokio::test]
async fn ten_thousand_events_page_with_no_loss_or_repeat() {
    let t = cairn();
    t.with_store(|store| {
        for i in 0..10_000 {
            let task = NewTask {
                id: format!("{i:032x}"),
                title: format!("task {i}"),
                description: String::new(),
                tags: Vec::new(),
                priority: Priority::Normal,
            };
            assert!(
                store
                    .task_create(
                        &task,
                        &cairn::store::Timestamp::parse("2026-12-01T00:00:00.000000Z").unwrap()
                    )
                    .is_ok()
            );
        }
    })
    .await;
    let events = everything(&t).await;
    assert_eq!(events.len(), 10_000);
    let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, (1..=10_000).collect::<Vec<_>>());
    let titles: BTreeSet<&str> = events
        .iter()
        .map(|e| e["entity"]["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles.len(), 10_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_concurrent_writers_leave_a_gap_free_increasing_feed() {
    let t = cairn();
    let results = all_at_once(instances(&t), |i| {
        ("task_create", json!({"title": format!("writer {i}")}))
    })
    .await;
    let acknowledged: BTreeSet<String> = results
        .iter()
        .filter(|r| r["ok"] == true)
        .map(|r| r["data"]["id"].as_str().unwrap().to_owned())
        .collect();
    let events = everything(&t).await;
    let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, (1..=events.len() as i64).collect::<Vec<_>>());
    let ids: BTreeSet<String> = events
        .iter()
        .map(|e| e["entity"]["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, acknowledged, "one event per acknowledged write");
    assert_eq!(events.len(), acknowledged.len());
}

#[tokio::test]
async fn a_bad_cursor_is_invalid_cursor_and_a_pruned_one_is_cursor_expired() {
    let t = cairn_with(
        &StoreOptions {
            feed_retention: 10,
            ..StoreOptions::default()
        },
        Config::default(),
    );
    for bad in ["x", "-1", "1.5", "99"] {
        let e = t.err("changes_since", json!({"cursor": bad})).await;
        assert_error(&e, "validation", "invalid_cursor", false);
    }
    for i in 0..130 {
        t.task(&format!("t{i}")).await;
    }
    let e = t.err("changes_since", json!({"cursor": "0"})).await;
    assert_error(&e, "validation", "cursor_expired", false);
    let oldest = e["details"]["oldest_cursor"].as_str().unwrap().to_owned();
    // From the oldest cursor it offers, the feed reads on to the newest.
    let events = t
        .ok("changes_since", json!({"cursor": oldest, "limit": 500}))
        .await;
    let events = events["events"].as_array().unwrap();
    assert!(events.len() >= 10);
    assert_eq!(events.last().unwrap()["seq"], 130);
    // Without a cursor: from the oldest retained event.
    let fresh = t.ok("changes_since", json!({"limit": 500})).await;
    assert_eq!(fresh["events"].as_array().unwrap().len(), events.len());
}
