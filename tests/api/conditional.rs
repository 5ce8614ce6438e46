//! Conditional requests (RFC 9110): `ETag` on every answer carrying one task
//! or note, `If-None-Match` → 304 on reads, `If-Match` → 412
//! `precondition_failed` on writes, decided with the write, and on reads.

use axum::http::StatusCode;
use http_body_util::BodyExt;
use serde_json::{Value, json};

use crate::http_helpers::{TestApp, TestResponse, assert_error};

async fn create_task(app: &TestApp) -> (String, String) {
    let res = app.post("/api/v1/tasks", &json!({"title": "Tag me"})).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_owned();
    (
        id,
        res.header("etag").expect("a create answers with its ETag"),
    )
}

async fn create_note(app: &TestApp, title: &str) -> (String, String) {
    let res = app
        .post("/api/v1/notes", &json!({"title": title, "content": "body"}))
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_owned();
    (
        id,
        res.header("etag").expect("a create answers with its ETag"),
    )
}

async fn get_with(app: &TestApp, path: &str, name: &str, value: &str) -> axum::response::Response {
    app.send_raw(TestApp::request("GET", path).header(name, value))
        .await
}

/// `GET path` with one header, its answer read.
async fn read_with(app: &TestApp, path: &str, name: &str, value: &str) -> TestResponse {
    app.send(TestApp::request("GET", path).header(name, value))
        .await
}

async fn send_json(
    app: &TestApp,
    method: &str,
    path: &str,
    if_match: &str,
    body: &Value,
) -> TestResponse {
    app.send(
        TestApp::request(method, path)
            .header("if-match", if_match)
            .json(body),
    )
    .await
}

fn is_strong_tag(tag: &str) -> bool {
    tag.len() > 2
        && tag.starts_with('"')
        && tag.ends_with('"')
        && tag[1..tag.len() - 1]
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x7e).contains(&b))
}

// ---- ETag

#[tokio::test]
async fn a_task_has_one_strong_etag_whichever_id_prefix_named_it() {
    let app = TestApp::new();
    let (id, created) = create_task(&app).await;
    assert!(is_strong_tag(&created), "{created}");
    let full = app.get(&format!("/api/v1/tasks/{id}")).await;
    let prefix = app.get(&format!("/api/v1/tasks/{}", &id[..8])).await;
    assert_eq!(full.header("etag").as_deref(), Some(created.as_str()));
    assert_eq!(prefix.header("etag").as_deref(), Some(created.as_str()));
}

#[tokio::test]
async fn an_update_answers_with_the_new_etag_that_a_read_then_gives() {
    let app = TestApp::new();
    let (id, created) = create_task(&app).await;
    let updated = app
        .patch(&format!("/api/v1/tasks/{id}"), &json!({"title": "New"}))
        .await;
    let tag = updated.header("etag").unwrap();
    assert_ne!(tag, created, "a write changes the tag");
    let read = app.get(&format!("/api/v1/tasks/{id}")).await;
    assert_eq!(read.header("etag"), Some(tag));
}

#[tokio::test]
async fn a_note_has_one_etag_by_id_prefix_or_slug_and_its_writes_agree() {
    let app = TestApp::new();
    let (id, created) = create_note(&app, "Tagged Note").await;
    assert!(is_strong_tag(&created), "{created}");
    for key in [id.clone(), id[..8].to_owned(), "tagged-note".to_owned()] {
        let res = app.get(&format!("/api/v1/notes/{key}")).await;
        assert_eq!(
            res.header("etag").as_deref(),
            Some(created.as_str()),
            "{key}"
        );
    }
    let replaced = app
        .put(
            &format!("/api/v1/notes/{id}"),
            &json!({"title": "Tagged Note", "content": "changed"}),
        )
        .await;
    let tag = replaced.header("etag").unwrap();
    assert_ne!(tag, created);
    let read = app.get("/api/v1/notes/tagged-note").await;
    assert_eq!(read.header("etag"), Some(tag));
}

#[tokio::test]
async fn a_claim_changes_a_tasks_etag_though_not_its_version() {
    let app = TestApp::new();
    let (id, created) = create_task(&app).await;
    let claimed = app
        .post(
            &format!("/api/v1/tasks/{id}/claim"),
            &json!({"agent": "ann"}),
        )
        .await;
    assert_eq!(claimed.body["data"]["version"], 1);
    let tag = claimed.header("etag").unwrap();
    assert_ne!(tag, created, "a revalidated read must see the claim");
    let read = app.get(&format!("/api/v1/tasks/{id}")).await;
    assert_eq!(read.header("etag"), Some(tag));
}

#[tokio::test]
async fn every_other_read_carries_a_weak_tag_of_its_data_and_revalidates_to_304() {
    let app = TestApp::new();
    create_task(&app).await;
    for path in [
        "/api/v1/tasks",
        "/api/v1/board",
        "/api/v1/search?q=tag",
        "/api/v1/errors/task_not_found",
    ] {
        let first = app.get(path).await;
        assert_eq!(first.status, StatusCode::OK, "{path}");
        let tag = first.header("etag").expect("a tag");
        assert!(tag.starts_with("W/\""), "{path}: {tag}");
        // The meta differs from read to read (request id, runtime); the tag
        // is the data's.
        let second = app.get(path).await;
        assert_ne!(first.body["meta"], second.body["meta"]);
        assert_eq!(
            second.header("etag").as_deref(),
            Some(tag.as_str()),
            "{path}"
        );
        let again = get_with(&app, path, "if-none-match", &tag).await;
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED, "{path}");
        assert_eq!(again.headers()["etag"], tag.as_str());
    }
    // A write changes the data: the old tag is answered in full.
    let board = app.get("/api/v1/board").await;
    let tag = board.header("etag").unwrap();
    create_task(&app).await;
    let after = get_with(&app, "/api/v1/board", "if-none-match", &tag).await;
    assert_eq!(after.status(), StatusCode::OK);
    assert_ne!(after.headers()["etag"], tag.as_str());
    // Over its limit it is refused, as on one entity's read; malformed, ignored.
    let long = format!("\"{}\"", "0".repeat(17_000));
    let res = get_with(&app, "/api/v1/tasks", "if-none-match", &long).await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let res = get_with(&app, "/api/v1/tasks", "if-none-match", "not a tag").await;
    assert_eq!(res.status(), StatusCode::OK);
    // If-None-Match means nothing to a write.
    let res = app
        .send(
            TestApp::request("POST", "/api/v1/tasks")
                .header("if-none-match", "*")
                .json(&json!({"title": "Still created"})),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED);
}

// ---- If-None-Match

async fn assert_not_modified(response: axum::response::Response, tag: &str) {
    assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(
        response.headers().get("etag").unwrap().to_str().unwrap(),
        tag
    );
    // The 200's Vary and Cache-Control, which a cache then updates (RFC 9110 §15.4.5).
    let vary: Vec<_> = response.headers().get_all("vary").iter().collect();
    assert!(vary.iter().any(|v| *v == "accept-encoding"), "{vary:?}");
    assert_eq!(response.headers()["cache-control"], "no-cache");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert!(body.is_empty(), "304 has no body: {body:?}");
}

/// A `HEAD` answers with the header fields the `GET` would (RFC 9110 §9.3.2):
/// its `Vary` among them, though no body is there to compress.
#[tokio::test]
async fn a_head_answers_with_the_gets_validators_and_vary_and_no_body() {
    let app = TestApp::new();
    let (id, tag) = create_task(&app).await;
    let path = format!("/api/v1/tasks/{id}");
    for method in ["GET", "HEAD"] {
        let res = app
            .send_raw(TestApp::request(method, &path).header("accept-encoding", "gzip"))
            .await;
        assert_eq!(res.status(), StatusCode::OK, "{method}");
        let headers = res.headers();
        assert_eq!(headers["etag"].to_str().unwrap(), tag, "{method}");
        assert_eq!(headers["cache-control"], "no-cache", "{method}");
        let vary: Vec<_> = headers.get_all("vary").iter().collect();
        let by_encoding = vary.iter().filter(|v| **v == "accept-encoding").count();
        assert_eq!(by_encoding, 1, "{method}: {vary:?}");
        let body = res.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body.is_empty(), method == "HEAD", "{method}");
    }
}

#[tokio::test]
async fn a_matching_if_none_match_answers_304_with_the_etag_and_no_body() {
    let app = TestApp::new();
    let (id, tag) = create_task(&app).await;
    let path = format!("/api/v1/tasks/{id}");
    assert_not_modified(get_with(&app, &path, "if-none-match", &tag).await, &tag).await;
    // Through a prefix too.
    let prefix = format!("/api/v1/tasks/{}", &id[..7]);
    assert_not_modified(get_with(&app, &prefix, "if-none-match", &tag).await, &tag).await;
}

#[tokio::test]
async fn if_none_match_takes_a_list_a_star_and_compares_weakly() {
    let app = TestApp::new();
    let (id, tag) = create_note(&app, "Lists").await;
    let path = format!("/api/v1/notes/{id}");
    let list = format!("\"other.1\", {tag}");
    assert_not_modified(get_with(&app, &path, "if-none-match", &list).await, &tag).await;
    assert_not_modified(get_with(&app, &path, "if-none-match", "*").await, &tag).await;
    let weak = format!("W/{tag}");
    assert_not_modified(get_with(&app, &path, "if-none-match", &weak).await, &tag).await;
}

#[tokio::test]
async fn a_stale_if_none_match_answers_200_with_the_body() {
    let app = TestApp::new();
    let (id, old) = create_task(&app).await;
    app.patch(
        &format!("/api/v1/tasks/{id}"),
        &json!({"title": "Moved on"}),
    )
    .await;
    let res = read_with(&app, &format!("/api/v1/tasks/{id}"), "if-none-match", &old).await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body["data"]["title"], "Moved on");
    assert_ne!(res.header("etag"), Some(old));
}

#[tokio::test]
async fn if_none_match_on_a_missing_entity_is_its_not_found() {
    let app = TestApp::new();
    let res = app
        .send(
            TestApp::request("GET", "/api/v1/tasks/0123456789abcdef").header("if-none-match", "*"),
        )
        .await;
    assert_error(&res, StatusCode::NOT_FOUND, "task_not_found");
}

#[tokio::test]
async fn a_malformed_if_none_match_is_ignored_and_the_full_answer_given() {
    let app = TestApp::new();
    let (id, tag) = create_task(&app).await;
    let res = app
        .send(
            TestApp::request("GET", &format!("/api/v1/tasks/{id}"))
                .header("if-none-match", "no-quotes"),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.header("etag"), Some(tag));
}

#[tokio::test]
async fn an_oversized_tag_list_is_invalid_input_on_reads_too() {
    let app = TestApp::new();
    let (id, _) = create_task(&app).await;
    let long = format!("\"{}\"", "x".repeat(17 * 1024));
    let res = app
        .send(
            TestApp::request("GET", &format!("/api/v1/tasks/{id}")).header("if-none-match", &long),
        )
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    assert_eq!(res.body["error"]["details"]["field"], "If-None-Match");
}

#[tokio::test]
async fn a_malformed_if_match_is_invalid_input_naming_the_header_and_writes_nothing() {
    let app = TestApp::new();
    let (id, _) = create_task(&app).await;
    let path = format!("/api/v1/tasks/{id}");
    let res = send_json(&app, "PATCH", &path, "no-quotes", &json!({"title": "x"})).await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    assert_eq!(res.body["error"]["details"]["field"], "If-Match");
    assert_eq!(app.get(&path).await.body["data"]["version"], 1);
}

#[tokio::test]
async fn a_body_the_tool_refuses_is_refused_before_a_failed_precondition() {
    let app = TestApp::new();
    let (id, _) = create_task(&app).await;
    let path = format!("/api/v1/tasks/{id}/reopen");
    let res = send_json(&app, "POST", &path, "\"stale.9\"", &json!({"bogus": 1})).await;
    assert_error(&res, StatusCode::BAD_REQUEST, "unknown_field");
    let res = send_json(&app, "POST", &path, "\"stale.9\"", &json!({"id": id})).await;
    assert_error(&res, StatusCode::BAD_REQUEST, "unknown_field");
}

// ---- If-Match

#[tokio::test]
async fn a_matching_if_match_writes() {
    let app = TestApp::new();
    let (id, tag) = create_task(&app).await;
    let res = send_json(
        &app,
        "PATCH",
        &format!("/api/v1/tasks/{id}"),
        &tag,
        &json!({"title": "Matched"}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["version"], 2);
    assert!(res.header("etag").is_some());
}

#[tokio::test]
async fn a_stale_if_match_is_412_with_the_current_version_and_tag_and_writes_nothing() {
    let app = TestApp::new();
    let (id, stale) = create_task(&app).await;
    let path = format!("/api/v1/tasks/{id}");
    let now = app.patch(&path, &json!({"title": "Second"})).await;
    let current = now.header("etag").unwrap();
    let res = send_json(
        &app,
        "PATCH",
        &path,
        &stale,
        &json!({"title": "Lost update"}),
    )
    .await;
    assert_error(&res, StatusCode::PRECONDITION_FAILED, "precondition_failed");
    let error = &res.body["error"];
    assert_eq!(error["category"], "conflict");
    assert_eq!(error["retryable"], false);
    assert_eq!(error["details"]["current_version"], 2);
    assert_eq!(error["details"]["current_etag"], current.as_str());
    let read = app.get(&path).await;
    assert_eq!(read.body["data"]["title"], "Second", "nothing was written");
    assert_eq!(read.body["data"]["version"], 2);
}

#[tokio::test]
async fn if_match_star_writes_an_existing_entity_and_a_missing_one_is_not_found() {
    let app = TestApp::new();
    let (id, _) = create_task(&app).await;
    let res = send_json(
        &app,
        "PATCH",
        &format!("/api/v1/tasks/{id}"),
        "*",
        &json!({"priority": "high"}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let missing = send_json(
        &app,
        "PATCH",
        "/api/v1/tasks/0123456789abcdef",
        "*",
        &json!({"priority": "high"}),
    )
    .await;
    assert_error(&missing, StatusCode::NOT_FOUND, "task_not_found");
}

#[tokio::test]
async fn a_weak_tag_never_matches_if_match() {
    let app = TestApp::new();
    let (id, tag) = create_task(&app).await;
    let weak = format!("W/{tag}");
    let res = send_json(
        &app,
        "PATCH",
        &format!("/api/v1/tasks/{id}"),
        &weak,
        &json!({"title": "x"}),
    )
    .await;
    assert_error(&res, StatusCode::PRECONDITION_FAILED, "precondition_failed");
}

#[tokio::test]
async fn if_match_takes_a_list() {
    let app = TestApp::new();
    let (id, tag) = create_task(&app).await;
    let list = format!("\"elsewhere.9\", {tag}");
    let res = send_json(
        &app,
        "PATCH",
        &format!("/api/v1/tasks/{id}"),
        &list,
        &json!({"title": "x"}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
}

#[tokio::test]
async fn if_match_and_a_disagreeing_expected_version_are_invalid_input() {
    let app = TestApp::new();
    let (id, tag) = create_task(&app).await;
    let path = format!("/api/v1/tasks/{id}");
    let res = send_json(
        &app,
        "PATCH",
        &path,
        &tag,
        &json!({"title": "x", "expected_version": 7}),
    )
    .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    assert_eq!(res.body["error"]["details"]["field"], "If-Match");
    assert_eq!(app.get(&path).await.body["data"]["version"], 1);
    // Agreeing, they are one check.
    let res = send_json(
        &app,
        "PATCH",
        &path,
        &tag,
        &json!({"title": "x", "expected_version": 1}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
}

#[tokio::test]
async fn an_action_route_takes_if_match() {
    let app = TestApp::new();
    let (id, stale) = create_task(&app).await;
    let path = format!("/api/v1/tasks/{id}");
    app.patch(&path, &json!({"title": "v2"})).await;
    let complete = format!("{path}/complete");
    let refused = send_json(&app, "POST", &complete, &stale, &json!({})).await;
    assert_error(
        &refused,
        StatusCode::PRECONDITION_FAILED,
        "precondition_failed",
    );
    assert_eq!(app.get(&path).await.body["data"]["status"], "open");
    let tag = app.get(&path).await.header("etag").unwrap();
    let done = send_json(&app, "POST", &complete, &tag, &json!({})).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert_eq!(done.body["data"]["status"], "done");
}

#[tokio::test]
async fn a_claims_tag_still_matches_if_match_by_its_version() {
    let app = TestApp::new();
    let (id, unclaimed) = create_task(&app).await;
    let path = format!("/api/v1/tasks/{id}");
    app.post(&format!("{path}/claim"), &json!({"agent": "ann"}))
        .await;
    // The tag read before the claim names the same version.
    let res = send_json(
        &app,
        "PATCH",
        &path,
        &unclaimed,
        &json!({"title": "still mine"}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
}

#[tokio::test]
async fn a_note_replace_and_delete_take_if_match() {
    let app = TestApp::new();
    let (id, stale) = create_note(&app, "Deletable").await;
    let path = format!("/api/v1/notes/{id}");
    let replaced = app
        .put(&path, &json!({"title": "Deletable", "content": "v2"}))
        .await;
    let current = replaced.header("etag").unwrap();
    let refused = send_json(
        &app,
        "PUT",
        &path,
        &stale,
        &json!({"title": "Deletable", "content": "v3"}),
    )
    .await;
    assert_error(
        &refused,
        StatusCode::PRECONDITION_FAILED,
        "precondition_failed",
    );
    let delete_stale = app
        .send(TestApp::request("DELETE", &path).header("if-match", &stale))
        .await;
    assert_error(
        &delete_stale,
        StatusCode::PRECONDITION_FAILED,
        "precondition_failed",
    );
    assert_eq!(app.get(&path).await.status, StatusCode::OK, "not deleted");
    let deleted = app
        .send(TestApp::request("DELETE", &path).header("if-match", &current))
        .await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    assert_eq!(deleted.body["data"]["deleted"], true);
    assert_error(
        &app.get(&path).await,
        StatusCode::NOT_FOUND,
        "note_not_found",
    );
}

#[tokio::test]
async fn a_delete_with_if_match_and_a_disagreeing_query_version_is_invalid_input() {
    let app = TestApp::new();
    let (id, tag) = create_note(&app, "Query version").await;
    let res = app
        .send(
            TestApp::request("DELETE", &format!("/api/v1/notes/{id}?expected_version=3"))
                .header("if-match", &tag),
        )
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
}

// ---- expected_version on the action tools (the store decides it)

#[tokio::test]
async fn action_tools_refuse_a_stale_expected_version_and_write_nothing() {
    let app = TestApp::new();
    let (id, _) = create_task(&app).await;
    let path = format!("/api/v1/tasks/{id}");
    app.patch(&path, &json!({"title": "v2"})).await;
    for (action, body) in [
        ("claim", json!({"agent": "ann", "expected_version": 1})),
        ("cancel", json!({"expected_version": 1})),
        ("complete", json!({"expected_version": 1})),
    ] {
        let res = app.post(&format!("{path}/{action}"), &body).await;
        assert_error(&res, StatusCode::CONFLICT, "version_conflict");
        assert_eq!(
            res.body["error"]["details"]["current_version"], 2,
            "{action}"
        );
    }
    let task = app.get(&path).await.body["data"].clone();
    assert_eq!(task["status"], "open");
    assert_eq!(task["claim"], Value::Null);
    let claimed = app
        .post(
            &format!("{path}/claim"),
            &json!({"agent": "ann", "expected_version": 2}),
        )
        .await;
    assert_eq!(claimed.status, StatusCode::OK, "{}", claimed.body);
    for action in ["renew", "release"] {
        let res = app
            .post(
                &format!("{path}/{action}"),
                &json!({"agent": "ann", "expected_version": 1}),
            )
            .await;
        assert_error(&res, StatusCode::CONFLICT, "version_conflict");
    }
    let released = app
        .post(
            &format!("{path}/release"),
            &json!({"agent": "ann", "expected_version": 2}),
        )
        .await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.body);
}

// ---- with Idempotency-Key

#[tokio::test]
async fn a_retry_with_another_if_match_is_another_request_for_its_key() {
    let app = TestApp::new();
    let (id, tag) = create_task(&app).await;
    let path = format!("/api/v1/tasks/{id}/claim");
    let keyed = |if_match: &str| {
        TestApp::request("POST", &path)
            .header("idempotency-key", "claim-1")
            .header("if-match", if_match)
            .json(&json!({"agent": "ann"}))
    };
    let first = app.send(keyed(&tag)).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let replay = app.send(keyed(&tag)).await;
    assert_eq!(replay.status, StatusCode::OK);
    assert_eq!(
        replay.header("idempotent-replayed").as_deref(),
        Some("true")
    );
    let other = app.send(keyed("\"elsewhere.1\"")).await;
    assert_error(
        &other,
        StatusCode::UNPROCESSABLE_ENTITY,
        "idempotency_key_reused",
    );
}

#[tokio::test]
async fn a_notes_etag_changes_when_what_its_links_show_changes() {
    let app = TestApp::new();
    let made = app
        .post(
            "/api/v1/notes",
            &json!({"title": "Hub", "content": "see [[Spoke]]"}),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let path = format!(
        "/api/v1/notes/{}",
        made.body["data"]["id"].as_str().unwrap()
    );
    let unresolved = app.get(&path).await.header("etag").unwrap();
    assert!(is_strong_tag(&unresolved), "{unresolved}");

    // A note named by the link now exists: the hub's answer shows it.
    let (spoke, _) = create_note(&app, "Spoke").await;
    let res = read_with(&app, &path, "if-none-match", &unresolved).await;
    assert_eq!(res.status, StatusCode::OK, "not 304: the links changed");
    assert_eq!(res.body["data"]["links"][0]["id"], spoke.as_str());
    assert_eq!(
        res.body["data"]["version"], 1,
        "the hub itself is unchanged"
    );
    let linked = res.header("etag").unwrap();
    assert_ne!(linked, unresolved);
    assert_not_modified(
        get_with(&app, &path, "if-none-match", &linked).await,
        &linked,
    )
    .await;

    // The linked note is retitled (its slug kept by the link): shown anew.
    let retitled = app
        .put(
            &format!("/api/v1/notes/{spoke}"),
            &json!({"title": "spoke", "content": "body"}),
        )
        .await;
    assert_eq!(retitled.status, StatusCode::OK, "{}", retitled.body);
    let res = read_with(&app, &path, "if-none-match", &linked).await;
    assert_eq!(
        res.status,
        StatusCode::OK,
        "not 304: a linked title changed"
    );
    assert_eq!(res.body["data"]["links"][0]["title"], "spoke");
    // If-Match still goes by the hub's own version.
    let replaced = send_json(
        &app,
        "PUT",
        &path,
        &linked,
        &json!({"title": "Hub", "content": "see [[Spoke]] again"}),
    )
    .await;
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.body);
}

// ---- If-Match on a read (RFC 9110 §13.1.1, evaluated before If-None-Match)

#[tokio::test]
async fn a_read_with_a_stale_if_match_is_412_with_what_the_entity_is_now() {
    let app = TestApp::new();
    let (id, stale) = create_task(&app).await;
    let path = format!("/api/v1/tasks/{id}");
    let current = app
        .patch(&path, &json!({"title": "Second"}))
        .await
        .header("etag")
        .unwrap();
    // Twice: the second answer comes from the read cache.
    for _ in 0..2 {
        let res = read_with(&app, &path, "if-match", &stale).await;
        assert_error(&res, StatusCode::PRECONDITION_FAILED, "precondition_failed");
        assert_eq!(res.body["error"]["details"]["current_version"], 2);
        assert_eq!(
            res.body["error"]["details"]["current_etag"],
            current.as_str()
        );
        assert_eq!(res.header("etag").as_deref(), Some(current.as_str()));
        // Before If-None-Match: a matching one does not make it a 304.
        let res = app
            .send(
                TestApp::request("GET", &path)
                    .header("if-match", &stale)
                    .header("if-none-match", &current),
            )
            .await;
        assert_eq!(res.status, StatusCode::PRECONDITION_FAILED);
    }
}

#[tokio::test]
async fn a_read_whose_if_match_names_its_version_is_sent() {
    let app = TestApp::new();
    let (id, tag) = create_task(&app).await;
    let (note, note_tag) = create_note(&app, "Kept").await;
    for (path, if_match) in [
        (format!("/api/v1/tasks/{id}"), tag.clone()),
        (format!("/api/v1/tasks/{id}"), "*".to_owned()),
        (
            format!("/api/v1/tasks/{id}"),
            format!("\"elsewhere.9\", {tag}"),
        ),
        (format!("/api/v1/notes/{note}"), note_tag.clone()),
    ] {
        let res = read_with(&app, &path, "if-match", &if_match).await;
        assert_eq!(
            res.status,
            StatusCode::OK,
            "{path} {if_match}: {}",
            res.body
        );
    }
    // Both: If-Match holds, then If-None-Match answers 304.
    let res = get_with(&app, &format!("/api/v1/tasks/{id}"), "if-none-match", &tag).await;
    assert_eq!(res.status(), StatusCode::NOT_MODIFIED);
    let res = app
        .send_raw(
            TestApp::request("GET", &format!("/api/v1/tasks/{id}"))
                .header("if-match", &tag)
                .header("if-none-match", &tag),
        )
        .await;
    assert_eq!(res.status(), StatusCode::NOT_MODIFIED);
    // A weak tag never matches If-Match; a missing entity is not found.
    let path = format!("/api/v1/tasks/{id}");
    let weak = read_with(&app, &path, "if-match", &format!("W/{tag}")).await;
    assert_error(
        &weak,
        StatusCode::PRECONDITION_FAILED,
        "precondition_failed",
    );
    let missing = read_with(&app, "/api/v1/tasks/0123456789abcdef", "if-match", "*").await;
    assert_error(&missing, StatusCode::NOT_FOUND, "task_not_found");
}
