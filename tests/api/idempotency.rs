//! `Idempotency-Key` on REST `POST`s and `idempotency_key` on MCP write tools:
//! a retried request gets the first final answer again (marked
//! `Idempotent-Replayed: true`) and never does the write twice; another body
//! under the same key is 422 `idempotency_key_reused`; a retry while the first
//! runs is 409 `idempotency_request_in_progress`, retryable.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use cairn::envelope::{Envelope, ErrorCode, Meta, ToolError};
use cairn::http::semantics::response::ApiResponse;
use cairn::http::{AppState, HttpSettings};
use cairn::store::idempotency::{KeyClaim, KeyScope};
use cairn::tools::{Cairn, Config};
use serde_json::{Value, json};

use crate::http_helpers::{TestApp, TestResponse, assert_error};
use crate::mcp::{Transport, connect_to, envelope_of, text_of};

const KEY: &str = "Idempotency-Key";

async fn post_keyed(app: &TestApp, path: &str, key: &str, body: &Value) -> TestResponse {
    app.send(TestApp::request("POST", path).header(KEY, key).json(body))
        .await
}

fn replayed(res: &TestResponse) -> bool {
    res.header("idempotent-replayed").as_deref() == Some("true")
}

async fn task_total(app: &TestApp) -> u64 {
    app.get("/api/v1/tasks").await.body["data"]["total"]
        .as_u64()
        .unwrap()
}

/// Sends a keyed request until it is no longer in progress, as a client
/// honouring `retry_after_ms` would.
async fn post_until_answered(app: &TestApp, path: &str, key: &str, body: &Value) -> TestResponse {
    for _ in 0..200 {
        let res = post_keyed(app, path, key, body).await;
        if res.body["error"]["code"] != "idempotency_request_in_progress" {
            return res;
        }
        let wait = res.body["error"]["retry_after_ms"].as_u64().unwrap();
        tokio::time::sleep(Duration::from_millis(wait / 10)).await;
    }
    panic!("still in progress after 200 tries");
}

/// Fires 20 copies of one keyed create at once, spread over `apps`, and
/// checks that they make one task and all get one answer.
async fn twenty_concurrent_retries_make_one_task(apps: Vec<Arc<TestApp>>) {
    let body = json!({"title": "once", "tags": ["a"]});
    let mut retries = Vec::new();
    for i in 0..20 {
        let app = apps[i % apps.len()].clone();
        let body = body.clone();
        retries.push(tokio::spawn(async move {
            post_until_answered(&app, "/api/v1/tasks", "create-once", &body).await
        }));
    }
    let mut answers = Vec::new();
    for retry in retries {
        answers.push(retry.await.unwrap());
    }
    let first = &answers[0];
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    for answer in &answers {
        assert_eq!(answer.status, first.status);
        assert_eq!(answer.body, first.body, "every caller gets the same body");
        assert_eq!(answer.header("location"), first.header("location"));
    }
    let fresh = answers.iter().filter(|a| !replayed(a)).count();
    assert_eq!(fresh, 1, "all but one answer are replays");
    assert_eq!(task_total(&apps[0]).await, 1, "exactly one task");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_create_retried_20_times_concurrently_makes_one_task_and_one_answer() {
    twenty_concurrent_retries_make_one_task(vec![Arc::new(TestApp::new())]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_gateways_on_one_postgres_share_their_keys() {
    let schema = crate::pg_helpers::TestSchema::create();
    let gateway = || {
        let store = cairn::store::open(schema.url(), &Default::default()).unwrap();
        Arc::new(TestApp::over(
            Cairn::new(store, Config::default()),
            HttpSettings::default(),
        ))
    };
    twenty_concurrent_retries_make_one_task(vec![gateway(), gateway()]).await;
}

#[tokio::test]
async fn a_replay_keeps_status_location_and_body_and_is_marked() {
    let app = TestApp::new();
    let body = json!({"title": "kept"});
    let first = post_keyed(&app, "/api/v1/tasks", "k1", &body).await;
    assert_eq!(first.status, StatusCode::CREATED);
    assert!(!replayed(&first));
    // The same JSON with its keys in another order and other spacing is the same request.
    let again = app
        .send(
            TestApp::request("POST", "/api/v1/tasks")
                .header(KEY, "k1")
                .json_text("{ \"title\" :\"kept\" }"),
        )
        .await;
    assert_eq!(again.status, StatusCode::CREATED);
    assert!(replayed(&again));
    assert_eq!(again.body, first.body);
    assert_eq!(again.header("location"), first.header("location"));
    assert_eq!(
        again.header("content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(task_total(&app).await, 1);
    // Without a key, a POST runs every time.
    app.post("/api/v1/tasks", &body).await;
    assert_eq!(task_total(&app).await, 2);
}

#[tokio::test]
async fn the_same_key_with_another_body_is_idempotency_key_reused() {
    let app = TestApp::new();
    post_keyed(&app, "/api/v1/tasks", "k", &json!({"title": "a"})).await;
    let res = post_keyed(&app, "/api/v1/tasks", "k", &json!({"title": "b"})).await;
    assert_error(
        &res,
        StatusCode::UNPROCESSABLE_ENTITY,
        "idempotency_key_reused",
    );
    assert_eq!(res.body["error"]["category"], "validation");
    assert_eq!(res.body["error"]["retryable"], false);
    assert_eq!(task_total(&app).await, 1, "nothing was run");
}

#[tokio::test]
async fn the_same_key_on_another_task_of_one_route_is_reused() {
    let app = TestApp::new();
    let a = app.post("/api/v1/tasks", &json!({"title": "a"})).await;
    let b = app.post("/api/v1/tasks", &json!({"title": "b"})).await;
    let claim = json!({"agent": "ada"});
    let path = |t: &TestResponse| {
        format!(
            "/api/v1/tasks/{}/claim",
            t.body["data"]["id"].as_str().unwrap()
        )
    };
    let res = post_keyed(&app, &path(&a), "claim", &claim).await;
    assert_eq!(res.status, StatusCode::OK);
    let res = post_keyed(&app, &path(&b), "claim", &claim).await;
    assert_error(
        &res,
        StatusCode::UNPROCESSABLE_ENTITY,
        "idempotency_key_reused",
    );
}

/// A route whose first request waits until the test lets it go.
fn held_route(calls: Arc<AtomicUsize>, gate: Arc<tokio::sync::Semaphore>) -> Router<AppState> {
    Router::new().route(
        "/api/v1/test/held",
        post(move || {
            let (calls, gate) = (calls.clone(), gate.clone());
            async move {
                let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
                let _permit = gate.acquire().await.unwrap();
                axum::Json(json!({"call": n}))
            }
        }),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_while_the_first_runs_is_in_progress_then_gets_the_answer() {
    let calls = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let app = Arc::new(TestApp::with(
        HttpSettings::default(),
        held_route(calls.clone(), gate.clone()),
    ));
    let first = {
        let app = app.clone();
        tokio::spawn(async move { post_keyed(&app, "/api/v1/test/held", "k", &json!({})).await })
    };
    while calls.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let retry = post_keyed(&app, "/api/v1/test/held", "k", &json!({})).await;
    assert_error(
        &retry,
        StatusCode::CONFLICT,
        "idempotency_request_in_progress",
    );
    assert_eq!(retry.body["error"]["retryable"], true);
    assert_eq!(retry.body["error"]["category"], "transient");
    assert!(retry.body["error"]["retry_after_ms"].as_u64().unwrap() > 0);
    assert_eq!(retry.header("retry-after").as_deref(), Some("1"));

    gate.add_permits(10);
    let first = first.await.unwrap();
    assert_eq!(first.body, json!({"call": 1}));
    assert!(!replayed(&first));
    for _ in 0..3 {
        let retry = post_keyed(&app, "/api/v1/test/held", "k", &json!({})).await;
        assert_eq!(retry.body, json!({"call": 1}));
        assert!(replayed(&retry));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the route ran once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_comes_after_the_time_limit_is_still_kept() {
    let calls = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    // Long enough that the first request settles well before its claim
    // could be taken over (at twice the limit), even on a loaded machine.
    let settings = HttpSettings {
        timeout: Duration::from_secs(1),
        ..HttpSettings::default()
    };
    let app = TestApp::with(settings, held_route(calls.clone(), gate.clone()));
    let late = post_keyed(&app, "/api/v1/test/held", "k", &json!({})).await;
    assert_error(&late, StatusCode::SERVICE_UNAVAILABLE, "timeout");
    // The request goes on after its client was answered, and its answer is kept.
    gate.add_permits(10);
    let retry = post_until_answered(&app, "/api/v1/test/held", "k", &json!({})).await;
    assert_eq!(retry.body, json!({"call": 1}));
    assert!(replayed(&retry));
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the route ran once");
}

#[tokio::test]
async fn a_claim_left_by_a_dead_request_is_taken_over_after_twice_the_time_limit() {
    let config = Config::default();
    let clock = config.clock.clone();
    let settings = HttpSettings {
        timeout: Duration::from_secs(30),
        ..HttpSettings::default()
    };
    let app = TestApp::with_config(settings, config, Router::new());
    let body = json!({"title": "after a crash"});
    // What a gateway that died mid-request leaves behind: a claim in progress.
    let fingerprint =
        cairn::tools::idempotency::fingerprint("POST /api/v1/tasks", body.to_string().as_bytes());
    let claim = KeyClaim::new(
        KeyScope {
            client: "anonymous".into(),
            route: "POST /api/v1/tasks".into(),
            key: "k".into(),
        },
        fingerprint,
        clock.now(),
        Duration::from_secs(30),
    );
    let store = app.cairn.store().clone();
    let held = tokio::task::spawn_blocking(move || store.idempotency_claim(&claim))
        .await
        .unwrap()
        .unwrap();
    assert!(held.is_none(), "the claim was free");
    let res = post_keyed(&app, "/api/v1/tasks", "k", &body).await;
    assert_error(
        &res,
        StatusCode::CONFLICT,
        "idempotency_request_in_progress",
    );

    clock.advance(chrono::Duration::seconds(50));
    let res = post_keyed(&app, "/api/v1/tasks", "k", &body).await;
    assert_error(
        &res,
        StatusCode::CONFLICT,
        "idempotency_request_in_progress",
    );
    clock.advance(chrono::Duration::seconds(11));
    let res = post_keyed(&app, "/api/v1/tasks", "k", &body).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    assert!(!replayed(&res));
    let again = post_keyed(&app, "/api/v1/tasks", "k", &body).await;
    assert!(replayed(&again));
    assert_eq!(task_total(&app).await, 1);
}

#[tokio::test]
async fn a_refusal_is_stored_and_replayed() {
    let app = TestApp::new();
    let missing = post_keyed(
        &app,
        "/api/v1/tasks/0123456789abcdef/claim",
        "c",
        &json!({"agent": "ada"}),
    )
    .await;
    assert_error(&missing, StatusCode::NOT_FOUND, "task_not_found");
    let again = post_keyed(
        &app,
        "/api/v1/tasks/0123456789abcdef/claim",
        "c",
        &json!({"agent": "ada"}),
    )
    .await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    assert_eq!(again.body, missing.body);
    assert!(replayed(&again));

    // A refusal stays the answer even once the same call would succeed.
    let task = app.post("/api/v1/tasks", &json!({"title": "t"})).await;
    let id = task.body["data"]["id"].as_str().unwrap().to_owned();
    app.post(&format!("/api/v1/tasks/{id}/cancel"), &json!({}))
        .await;
    let complete = format!("/api/v1/tasks/{id}/complete");
    let refused = post_keyed(&app, &complete, "done", &json!({})).await;
    assert_error(&refused, StatusCode::CONFLICT, "invalid_transition");
    app.post(&format!("/api/v1/tasks/{id}/reopen"), &json!({}))
        .await;
    let again = post_keyed(&app, &complete, "done", &json!({})).await;
    assert_eq!(again.body, refused.body);
    assert!(replayed(&again));
    assert_eq!(
        app.get(&format!("/api/v1/tasks/{id}")).await.body["data"]["status"],
        "open"
    );
}

/// A route that is busy (503, retryable) on its first call and answers after.
fn flaky_route(calls: Arc<AtomicUsize>) -> Router<AppState> {
    Router::new().route(
        "/api/v1/test/flaky",
        post(move || {
            let calls = calls.clone();
            async move {
                let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
                let meta = Meta::new("flaky", "", "r");
                if n == 1 {
                    let busy = ToolError::new(ErrorCode::StoreBusy, "busy").retry_after(10);
                    ApiResponse::new(Envelope::failure(busy, meta))
                } else {
                    ApiResponse::new(Envelope::success(json!({"call": n}), meta))
                }
            }
        }),
    )
}

#[tokio::test]
async fn a_transient_503_is_not_stored_so_the_retry_runs() {
    let calls = Arc::new(AtomicUsize::new(0));
    let app = TestApp::with(HttpSettings::default(), flaky_route(calls.clone()));
    let busy = post_keyed(&app, "/api/v1/test/flaky", "k", &json!({})).await;
    assert_error(&busy, StatusCode::SERVICE_UNAVAILABLE, "store_busy");
    let ok = post_keyed(&app, "/api/v1/test/flaky", "k", &json!({})).await;
    assert_eq!(ok.status, StatusCode::OK);
    assert_eq!(ok.body["data"]["call"], 2);
    assert!(!replayed(&ok));
    let replay = post_keyed(&app, "/api/v1/test/flaky", "k", &json!({})).await;
    assert!(replayed(&replay));
    assert_eq!(replay.body, ok.body);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_key_belongs_to_one_client() {
    let dir = tempfile::tempdir().unwrap();
    let store = cairn::store::open_sqlite(&dir.path().join("cairn.db")).unwrap();
    let cairn = Cairn::new(store, Config::default());
    // Two gateways on one store: one with a token (its caller is `default`),
    // one without (`anonymous`).
    let with_token = TestApp::over(
        cairn.clone(),
        HttpSettings {
            token: Some("s3cret".into()),
            ..HttpSettings::default()
        },
    );
    let anonymous = TestApp::over(cairn, HttpSettings::default());
    let body = json!({"title": "mine"});
    let req = || {
        TestApp::request("POST", "/api/v1/tasks")
            .header(KEY, "shared")
            .json(&body)
    };
    let a = with_token
        .send(req().header("authorization", "Bearer s3cret"))
        .await;
    let b = anonymous.send(req()).await;
    assert_eq!(
        (a.status, b.status),
        (StatusCode::CREATED, StatusCode::CREATED)
    );
    assert!(!replayed(&a) && !replayed(&b));
    assert_ne!(a.body["data"]["id"], b.body["data"]["id"]);
    assert_eq!(task_total(&anonymous).await, 2);
}

#[tokio::test]
async fn a_key_belongs_to_one_route() {
    let app = TestApp::new();
    let task = post_keyed(&app, "/api/v1/tasks", "k", &json!({"title": "same"})).await;
    let note = post_keyed(
        &app,
        "/api/v1/notes",
        "k",
        &json!({"title": "same", "content": ""}),
    )
    .await;
    assert_eq!(task.status, StatusCode::CREATED);
    assert_eq!(note.status, StatusCode::CREATED, "{}", note.body);
    assert!(!replayed(&note));
}

#[tokio::test]
async fn a_bad_key_is_invalid_input_naming_the_header() {
    let app = TestApp::new();
    let body = json!({"title": "t"});
    let long = "k".repeat(256);
    for key in ["", long.as_str()] {
        let res = post_keyed(&app, "/api/v1/tasks", key, &body).await;
        assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
        assert_eq!(res.body["error"]["details"]["field"], KEY);
    }
    let res = app
        .send(
            TestApp::request("POST", "/api/v1/tasks")
                .header(KEY, "a")
                .header(KEY, "b")
                .json(&body),
        )
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    let res = app
        .send_raw(TestApp::request("POST", "/api/v1/tasks").json(&body))
        .await;
    assert_eq!(res.status(), StatusCode::CREATED);
    let mut raw = axum::http::Request::post("/api/v1/tasks")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(body.to_string()))
        .unwrap();
    raw.headers_mut().insert(
        KEY,
        axum::http::HeaderValue::from_bytes("clé".as_bytes()).unwrap(),
    );
    let res = tower::ServiceExt::oneshot(app.app.clone(), raw)
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert_eq!(task_total(&app).await, 1, "only the unkeyed create ran");
}

#[tokio::test]
async fn a_kept_answer_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cairn.db");
    let gateway = || {
        let store = cairn::store::open_sqlite(&path).unwrap();
        TestApp::over(
            Cairn::new(store, Config::default()),
            HttpSettings::default(),
        )
    };
    let body = json!({"title": "before the restart"});
    let first = post_keyed(&gateway(), "/api/v1/tasks", "k", &body).await;
    // A new store and gateway on the same file: nothing of the first is left in memory.
    let app = gateway();
    let again = post_keyed(&app, "/api/v1/tasks", "k", &body).await;
    assert!(replayed(&again));
    assert_eq!(again.body, first.body);
    assert_eq!(task_total(&app).await, 1);
}

#[tokio::test]
async fn a_kept_answer_expires_after_24_hours() {
    let config = Config::default();
    let clock = config.clock.clone();
    let app = TestApp::with_config(HttpSettings::default(), config, Router::new());
    let body = json!({"title": "daily"});
    post_keyed(&app, "/api/v1/tasks", "k", &body).await;
    clock.advance(chrono::Duration::hours(23));
    assert!(replayed(
        &post_keyed(&app, "/api/v1/tasks", "k", &body).await
    ));
    clock.advance(chrono::Duration::hours(1));
    let fresh = post_keyed(&app, "/api/v1/tasks", "k", &body).await;
    assert_eq!(fresh.status, StatusCode::CREATED);
    assert!(!replayed(&fresh), "an expired key is a new request");
    assert_eq!(task_total(&app).await, 2);
}

#[tokio::test]
async fn get_and_non_api_requests_ignore_the_header() {
    let app = TestApp::new();
    let res = app
        .send(TestApp::request("GET", "/api/v1/tasks").header(KEY, ""))
        .await;
    assert_eq!(res.status, StatusCode::OK);
}

async fn mcp_task_create_with_a_key_twice_makes_one_task(transport: Transport) {
    let (cairn, dir) = crate::mcp::fresh_cairn(Config::default());
    let h = connect_to(transport, cairn, dir).await;
    let args = json!({"title": "agent retry", "idempotency_key": "agent-1"});
    let first = h.call("task_create", args.clone()).await;
    let second = h.call("task_create", args).await;
    assert_eq!(envelope_of(&first)["ok"], true, "{}", text_of(&first));
    assert_eq!(text_of(&first), text_of(&second), "the same result");
    assert_eq!(second.structured_content, first.structured_content);
    let list = h.ok("task_list", json!({})).await;
    assert_eq!(list["total"], 1);

    let reused = h
        .call(
            "task_create",
            json!({"title": "other", "idempotency_key": "agent-1"}),
        )
        .await;
    assert_eq!(reused.is_error, Some(true));
    assert_eq!(
        envelope_of(&reused)["error"]["code"],
        "idempotency_key_reused"
    );
    let bad = h
        .call("task_create", json!({"title": "x", "idempotency_key": ""}))
        .await;
    assert_eq!(envelope_of(&bad)["error"]["code"], "invalid_input");
    assert_eq!(
        envelope_of(&bad)["error"]["details"]["field"],
        "idempotency_key"
    );
    // A tool that only reads takes no key.
    let read = h.call("task_list", json!({"idempotency_key": "r"})).await;
    assert_eq!(envelope_of(&read)["error"]["code"], "unknown_field");
}

async fn mcp_write_tools_list_the_key_and_read_tools_do_not(transport: Transport) {
    let h = crate::mcp::connect(transport).await;
    let tools = h.client.list_all_tools().await.expect("tools/list");
    for tool in &tools {
        let property = tool
            .input_schema
            .get("properties")
            .and_then(|p| p.get("idempotency_key"));
        let declared = property.is_some();
        let reads = tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
        assert_eq!(declared, !reads, "{}", tool.name);
        if declared {
            assert_eq!(property.unwrap()["maxLength"], 255);
        }
    }
}

on_both_transports!(
    mcp_task_create_with_a_key_twice_makes_one_task,
    mcp_write_tools_list_the_key_and_read_tools_do_not,
);

#[test]
fn every_post_declares_the_key_the_replay_header_and_422() {
    let doc = cairn::http::openapi::document();
    let mut posts = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        let Some(op) = item.get("post") else { continue };
        posts += 1;
        let params = op["parameters"].as_array().unwrap();
        assert!(
            params
                .iter()
                .any(|p| p["$ref"] == "#/components/parameters/IdempotencyKey"),
            "{path}"
        );
        assert!(op["responses"]["422"].is_object(), "{path}");
        assert!(op["responses"]["409"].is_object(), "{path}");
        let success = op["responses"]
            .as_object()
            .unwrap()
            .iter()
            .find(|(s, _)| s.starts_with('2'))
            .unwrap()
            .1;
        assert!(
            success["headers"]["Idempotent-Replayed"].is_object(),
            "{path}"
        );
    }
    assert!(posts >= 8);
    assert_eq!(
        doc["components"]["parameters"]["IdempotencyKey"]["in"],
        "header"
    );
}

#[tokio::test]
async fn a_replayed_refusal_takes_the_form_its_retry_asks_for() {
    let app = TestApp::new();
    let path = "/api/v1/tasks/0123456789abcdef/claim";
    let keyed = |accept: &'static str| {
        TestApp::request("POST", path)
            .header(KEY, "form")
            .header("accept", accept)
            .json(&json!({"agent": "ada"}))
    };
    let first = app.send(keyed("application/problem+json")).await;
    assert_eq!(first.status, StatusCode::NOT_FOUND);
    assert_eq!(
        first.header("content-type").as_deref(),
        Some("application/problem+json")
    );
    assert_eq!(first.body["code"], "task_not_found", "{}", first.body);

    // The same request asking for the envelope gets the stored refusal as one.
    let again = app.send(keyed("application/json")).await;
    assert!(replayed(&again));
    assert_error(&again, StatusCode::NOT_FOUND, "task_not_found");

    // And asking for problem details again, problem details.
    let third = app.send(keyed("application/problem+json")).await;
    assert!(replayed(&third));
    assert_eq!(
        third.header("content-type").as_deref(),
        Some("application/problem+json")
    );
    assert_eq!(third.body["code"], "task_not_found");
}
