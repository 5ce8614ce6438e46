//! `expected_version` on the task actions (claim, renew, release, complete,
//! cancel, reopen), decided by the store in the statement that writes: a
//! stale version is `version_conflict` with `current_version`, it explains a
//! refusal before any other reason, and nothing is written. Part of the store
//! conformance suite (both backends).

use serde_json::{Value, json};

use crate::tool_helpers::{TestCairn, assert_error, cairn};

async fn task_at_version_2(t: &TestCairn) -> String {
    let id = t.task("versioned").await["id"].as_str().unwrap().to_owned();
    t.ok("task_update", json!({"id": id, "title": "v2"})).await;
    id
}

async fn read(t: &TestCairn, id: &str) -> Value {
    t.ok("task_get", json!({"id": id})).await
}

#[tokio::test]
async fn a_stale_version_refuses_every_action_and_writes_nothing() {
    let t = cairn();
    let id = task_at_version_2(&t).await;
    for (tool, args) in [
        (
            "task_claim",
            json!({"id": id, "agent": "ann", "expected_version": 1}),
        ),
        ("task_complete", json!({"id": id, "expected_version": 1})),
        (
            "task_cancel",
            json!({"id": id, "agent": "ann", "expected_version": 1}),
        ),
    ] {
        let e = t.err(tool, args).await;
        assert_error(&e, "conflict", "version_conflict", false);
        assert_eq!(e["details"]["current_version"], 2, "{tool}");
    }
    let task = read(&t, &id).await;
    assert_eq!(task["status"], "open");
    assert_eq!(task["claim"], Value::Null);
    assert_eq!(task["version"], 2);
}

#[tokio::test]
async fn the_current_version_lets_every_action_through() {
    let t = cairn();
    let id = task_at_version_2(&t).await;
    let claimed = t
        .ok(
            "task_claim",
            json!({"id": id, "agent": "ann", "expected_version": 2}),
        )
        .await;
    assert_eq!(claimed["claim"]["holder"], "ann");
    assert_eq!(claimed["version"], 2, "claims never bump the version");
    t.ok(
        "task_renew",
        json!({"id": id, "agent": "ann", "expected_version": 2}),
    )
    .await;
    t.ok(
        "task_release",
        json!({"id": id, "agent": "ann", "expected_version": 2}),
    )
    .await;
    let done = t
        .ok("task_complete", json!({"id": id, "expected_version": 2}))
        .await;
    assert_eq!(done["version"], 3);
    let reopened = t
        .ok("task_reopen", json!({"id": id, "expected_version": 3}))
        .await;
    assert_eq!(reopened["status"], "open");
}

#[tokio::test]
async fn a_stale_renew_or_release_keeps_the_claim() {
    let t = cairn();
    let id = task_at_version_2(&t).await;
    let claimed = t.ok("task_claim", json!({"id": id, "agent": "ann"})).await;
    for tool in ["task_renew", "task_release"] {
        let e = t
            .err(
                tool,
                json!({"id": id, "agent": "ann", "expected_version": 1}),
            )
            .await;
        assert_error(&e, "conflict", "version_conflict", false);
    }
    let task = read(&t, &id).await;
    assert_eq!(task["claim"], claimed["claim"], "the claim is as it was");
}

#[tokio::test]
async fn a_stale_version_is_the_reason_given_before_a_held_claim() {
    let t = cairn();
    let id = task_at_version_2(&t).await;
    t.ok("task_claim", json!({"id": id, "agent": "ann"})).await;
    // Bob would be refused for ann's claim too; the version speaks first.
    let e = t
        .err(
            "task_claim",
            json!({"id": id, "agent": "bob", "expected_version": 1}),
        )
        .await;
    assert_error(&e, "conflict", "version_conflict", false);
    // With the current version, the claim is what refuses.
    let e = t
        .err(
            "task_claim",
            json!({"id": id, "agent": "bob", "expected_version": 2}),
        )
        .await;
    assert_error(&e, "conflict", "claim_held", false);
}

#[tokio::test]
async fn reopening_a_done_task_with_its_pre_completion_version_is_refused() {
    let t = cairn();
    let id = task_at_version_2(&t).await;
    t.ok("task_complete", json!({"id": id})).await;
    let e = t
        .err("task_reopen", json!({"id": id, "expected_version": 2}))
        .await;
    assert_error(&e, "conflict", "version_conflict", false);
    assert_eq!(e["details"]["current_version"], 3);
    assert_eq!(read(&t, &id).await["status"], "done");
}
