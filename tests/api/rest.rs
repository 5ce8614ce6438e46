//! Every REST route: its success shape, and each error status it can answer
//! with, as the shared `ErrorEnvelope`.

use axum::Router;
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::http_helpers::{TestApp, assert_error};
use cairn::http::HttpSettings;
use cairn::tools::{Config, Module};

async fn create_task(app: &TestApp, title: &str) -> Value {
    let res = app.post("/api/v1/tasks", &json!({"title": title})).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"].clone()
}

async fn create_note(app: &TestApp, body: Value) -> Value {
    let res = app.post("/api/v1/notes", &body).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"].clone()
}

fn id_of(entity: &Value) -> String {
    entity["id"].as_str().unwrap().to_owned()
}

// ---- tasks

#[tokio::test]
async fn creating_a_task_answers_201_with_its_location() {
    let app = TestApp::new();
    let res = app
        .post(
            "/api/v1/tasks",
            &json!({"title": "Write the gateway", "tags": ["http"]}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED);
    let id = res.body["data"]["id"].as_str().unwrap();
    assert_eq!(
        res.header("location").unwrap(),
        format!("/api/v1/tasks/{id}")
    );
    assert_eq!(res.body["data"]["version"], 1);
    assert_eq!(res.body["data"]["status"], "open");
    assert_eq!(res.body["meta"]["tool"], "task_create");
    assert_eq!(res.body["meta"]["layer"], "tasks");
}

#[tokio::test]
async fn a_missing_field_is_missing_field() {
    let app = TestApp::new();
    let res = app.post("/api/v1/tasks", &json!({})).await;
    assert_error(&res, StatusCode::BAD_REQUEST, "missing_field");
    assert_eq!(res.body["error"]["details"]["field"], "title");
}

#[tokio::test]
async fn an_unknown_field_names_the_nearest_valid_ones() {
    let app = TestApp::new();
    let res = app.post("/api/v1/tasks", &json!({"titel": "x"})).await;
    assert_error(&res, StatusCode::BAD_REQUEST, "unknown_field");
    assert_eq!(res.body["error"]["details"]["field"], "titel");
    let suggestions = res.body["error"]["suggestions"].as_array().unwrap();
    assert!(suggestions.contains(&json!("title")), "{suggestions:?}");
}

#[tokio::test]
async fn a_body_id_is_refused_because_the_url_names_the_entity() {
    let app = TestApp::new();
    let task = create_task(&app, "t").await;
    let res = app
        .patch(
            &format!("/api/v1/tasks/{}", id_of(&task)),
            &json!({"id": "other", "title": "x"}),
        )
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "unknown_field");
    assert_eq!(res.body["error"]["details"]["field"], "id");
}

#[tokio::test]
async fn listing_tasks_paginates_with_a_cursor_and_a_total() {
    let app = TestApp::new();
    for i in 0..5 {
        create_task(&app, &format!("task {i}")).await;
    }
    let first = app.get("/api/v1/tasks?limit=2").await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.body["data"]["items"].as_array().unwrap().len(), 2);
    assert_eq!(first.body["data"]["total"], 5);
    let cursor = first.body["data"]["next_cursor"].as_str().unwrap();
    let second = app
        .get(&format!("/api/v1/tasks?limit=2&cursor={cursor}"))
        .await;
    assert_eq!(second.body["data"]["items"].as_array().unwrap().len(), 2);
    assert_ne!(
        first.body["data"]["items"][0]["id"],
        second.body["data"]["items"][0]["id"]
    );
}

#[tokio::test]
async fn bad_list_parameters_are_validation_errors() {
    let app = TestApp::new();
    assert_error(
        &app.get("/api/v1/tasks?limit=501").await,
        StatusCode::BAD_REQUEST,
        "invalid_input",
    );
    assert_error(
        &app.get("/api/v1/tasks?limit=many").await,
        StatusCode::BAD_REQUEST,
        "invalid_input",
    );
    assert_error(
        &app.get("/api/v1/tasks?cursor=not-a-cursor").await,
        StatusCode::BAD_REQUEST,
        "invalid_cursor",
    );
    let res = app.get("/api/v1/tasks?stauts=open").await;
    assert_error(&res, StatusCode::BAD_REQUEST, "unknown_field");
    assert!(
        res.body["error"]["suggestions"]
            .as_array()
            .unwrap()
            .contains(&json!("status"))
    );
}

#[tokio::test]
async fn a_task_is_found_by_a_unique_prefix() {
    let app = TestApp::new();
    let task = create_task(&app, "prefixed").await;
    let id = id_of(&task);
    let res = app.get(&format!("/api/v1/tasks/{}", &id[..8])).await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body["data"]["id"], id.as_str());
}

#[tokio::test]
async fn unknown_and_short_task_ids_are_not_found_and_validation() {
    let app = TestApp::new();
    let res = app.get("/api/v1/tasks/0123456789abcdef").await;
    assert_error(&res, StatusCode::NOT_FOUND, "task_not_found");
    let res = app.get("/api/v1/tasks/abc").await;
    assert_error(&res, StatusCode::BAD_REQUEST, "id_prefix_too_short");
    assert_eq!(res.body["error"]["details"]["min_length"], 6);
}

#[tokio::test]
async fn a_stale_expected_version_is_a_version_conflict() {
    let app = TestApp::new();
    let id = id_of(&create_task(&app, "v").await);
    let path = format!("/api/v1/tasks/{id}");
    let res = app
        .patch(&path, &json!({"expected_version": 1, "title": "v2"}))
        .await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body["data"]["version"], 2);
    let res = app
        .patch(&path, &json!({"expected_version": 1, "title": "lost"}))
        .await;
    assert_error(&res, StatusCode::CONFLICT, "version_conflict");
    assert_eq!(res.body["error"]["details"]["current_version"], 2);
    assert_eq!(app.get(&path).await.body["data"]["title"], "v2");
}

#[tokio::test]
async fn claims_are_exclusive_and_held_by_their_agent() {
    let app = TestApp::new();
    let id = id_of(&create_task(&app, "claim me").await);
    let base = format!("/api/v1/tasks/{id}");
    let res = app
        .post(
            &format!("{base}/claim"),
            &json!({"agent": "ann", "ttl_minutes": 5}),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["status"], "claimed");
    let res = app
        .post(&format!("{base}/claim"), &json!({"agent": "bob"}))
        .await;
    assert_error(&res, StatusCode::CONFLICT, "claim_held");
    assert_eq!(res.body["error"]["details"]["holder"], "ann");
    let res = app
        .post(&format!("{base}/renew"), &json!({"agent": "bob"}))
        .await;
    assert_error(&res, StatusCode::CONFLICT, "claim_not_held");
    let res = app
        .post(&format!("{base}/renew"), &json!({"agent": "ann"}))
        .await;
    assert_eq!(res.status, StatusCode::OK);
    let res = app
        .post(&format!("{base}/release"), &json!({"agent": "ann"}))
        .await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body["data"]["status"], "open");
    assert_eq!(res.body["data"]["version"], 1, "claims never bump version");
}

#[tokio::test]
async fn tasks_move_through_complete_cancel_and_reopen() {
    let app = TestApp::new();
    let id = id_of(&create_task(&app, "lifecycle").await);
    let base = format!("/api/v1/tasks/{id}");
    // An empty body is fine: every field of these actions is optional.
    let res = app
        .send(TestApp::request("POST", &format!("{base}/complete")))
        .await;
    assert_eq!(res.body["data"]["status"], "done", "{}", res.body);
    let res = app.post(&format!("{base}/cancel"), &json!({})).await;
    assert_error(&res, StatusCode::CONFLICT, "invalid_transition");
    assert_eq!(res.body["error"]["details"]["status"], "done");
    let res = app.post(&format!("{base}/reopen"), &json!({})).await;
    assert_eq!(res.body["data"]["status"], "open");
    let res = app.post(&format!("{base}/cancel"), &json!({})).await;
    assert_eq!(res.body["data"]["status"], "cancelled");
}

#[tokio::test]
async fn the_board_has_four_paginated_columns() {
    let app = TestApp::new();
    for i in 0..3 {
        create_task(&app, &format!("card {i}")).await;
    }
    let res = app.get("/api/v1/board?limit=2").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let columns = res.body["data"]["columns"].as_array().unwrap();
    let statuses: Vec<&str> = columns
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["open", "claimed", "done", "cancelled"]);
    assert_eq!(columns[0]["items"].as_array().unwrap().len(), 2);
    assert_eq!(columns[0]["total"], 3);
    let cursor = columns[0]["next_cursor"].as_str().unwrap();
    let res = app
        .get(&format!("/api/v1/board?limit=2&open_cursor={cursor}"))
        .await;
    let open = &res.body["data"]["columns"][0];
    assert_eq!(open["items"].as_array().unwrap().len(), 1);
    assert!(open["next_cursor"].is_null());
}

#[tokio::test]
async fn the_board_pages_one_column_when_asked_for_it() {
    let app = TestApp::new();
    for i in 0..3 {
        create_task(&app, &format!("card {i}")).await;
    }
    let res = app.get("/api/v1/board?limit=2&columns=open").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let cursor = res.body["data"]["columns"][0]["next_cursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = app
        .get(&format!(
            "/api/v1/board?limit=2&columns=open&open_cursor={cursor}"
        ))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let columns = res.body["data"]["columns"].as_array().unwrap();
    assert_eq!(columns.len(), 1);
    assert_eq!(columns[0]["status"], "open");
    assert_eq!(columns[0]["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn board_columns_may_be_comma_separated_or_repeated() {
    let app = TestApp::new();
    for query in ["columns=done,open", "columns=done&columns=open"] {
        let res = app.get(&format!("/api/v1/board?{query}")).await;
        assert_eq!(res.status, StatusCode::OK, "{query}: {}", res.body);
        let statuses: Vec<&str> = res.body["data"]["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["status"].as_str().unwrap())
            .collect();
        assert_eq!(statuses, ["open", "done"], "{query}");
    }
}

#[tokio::test]
async fn an_unknown_board_column_is_invalid_input() {
    let app = TestApp::new();
    let res = app.get("/api/v1/board?columns=open,dne").await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    assert_eq!(res.body["error"]["details"]["field"], "columns[1]");
    assert_eq!(res.body["error"]["suggestions"][0], "done");
}

#[tokio::test]
async fn a_wrong_query_value_is_invalid_input_in_plain_words() {
    let app = TestApp::new();
    let res = app.get("/api/v1/tasks?limit=ten").await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
    let error = &res.body["error"];
    assert_eq!(error["details"]["field"], "limit");
    assert!(error["details"]["reason"].is_string());
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("`limit`"), "{message}");
    assert!(!message.contains("invalid type:"), "{message}");
}

#[tokio::test]
async fn a_large_listing_over_rest_is_complete_and_untrimmed() {
    let app = TestApp::new();
    for i in 0..600 {
        let description = "d".repeat(300);
        let res = app
            .post(
                "/api/v1/tasks",
                &json!({"title": format!("bulk {i}"), "description": description}),
            )
            .await;
        assert_eq!(res.status, StatusCode::CREATED);
    }
    let res = app.get("/api/v1/tasks?limit=500").await;
    assert_eq!(res.body["data"]["items"].as_array().unwrap().len(), 500);
    assert_eq!(res.body["meta"]["truncated"], false);
    assert_eq!(res.body["meta"]["trimmed"], json!([]));
}

// ---- notes

#[tokio::test]
async fn notes_are_written_read_by_slug_replaced_and_deleted() {
    let app = TestApp::new();
    let note = create_note(
        &app,
        json!({"title": "Release Plan", "content": "Ship it.", "tags": ["ops"]}),
    )
    .await;
    let id = id_of(&note);
    let res = app.get("/api/v1/notes/release-plan").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["id"], id.as_str());
    let res = app
        .put(
            &format!("/api/v1/notes/{id}"),
            &json!({"title": "Release Plan", "content": "Ship it twice.", "expected_version": 1}),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app
        .put(
            &format!("/api/v1/notes/{id}"),
            &json!({"title": "Release Plan", "content": "stale", "expected_version": 1}),
        )
        .await;
    assert_error(&res, StatusCode::CONFLICT, "version_conflict");
    let res = app.delete(&format!("/api/v1/notes/{id}")).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app.get(&format!("/api/v1/notes/{id}")).await;
    assert_error(&res, StatusCode::NOT_FOUND, "note_not_found");
}

#[tokio::test]
async fn a_second_note_from_the_same_source_is_a_duplicate() {
    let app = TestApp::new();
    let first = create_note(
        &app,
        json!({"title": "A", "content": "a", "source_url": "https://example.org/a"}),
    )
    .await;
    let res = app
        .post(
            "/api/v1/notes",
            &json!({"title": "B", "content": "b", "source_url": "https://example.org/a"}),
        )
        .await;
    assert_error(&res, StatusCode::CONFLICT, "duplicate");
    assert_eq!(
        res.body["error"]["details"]["duplicate_of"]["id"],
        first["id"]
    );
}

#[tokio::test]
async fn a_taken_slug_is_a_slug_collision() {
    let app = TestApp::new();
    let first = create_note(&app, json!({"title": "Same Title", "content": "a"})).await;
    let res = app
        .post(
            "/api/v1/notes",
            &json!({"title": "same title!", "content": "b"}),
        )
        .await;
    assert_error(&res, StatusCode::CONFLICT, "slug_collision");
    assert_eq!(res.body["error"]["details"]["existing_id"], first["id"]);
}

#[tokio::test]
async fn content_over_the_limit_is_content_too_large() {
    let config = Config {
        content_limit_bytes: 64,
        ..Config::default()
    };
    let app = TestApp::with_config(HttpSettings::default(), config, Router::new());
    let res = app
        .post(
            "/api/v1/notes",
            &json!({"title": "big", "content": "x".repeat(65)}),
        )
        .await;
    assert_error(&res, StatusCode::PAYLOAD_TOO_LARGE, "content_too_large");
    assert_eq!(res.body["error"]["details"]["limit_bytes"], 64);
}

#[tokio::test]
async fn listing_notes_answers_a_page() {
    let app = TestApp::new();
    create_note(&app, json!({"title": "One", "content": "1"})).await;
    let res = app.get("/api/v1/notes").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body["data"]["total"], 1);
    assert!(res.body["data"]["next_cursor"].is_null());
}

// ---- graph

#[tokio::test]
async fn links_join_tasks_and_notes_and_the_graph_walks_them() {
    let app = TestApp::new();
    let task = id_of(&create_task(&app, "build").await);
    let note = id_of(&create_note(&app, json!({"title": "Design", "content": "d"})).await);
    let res = app
        .post(
            "/api/v1/links",
            &json!({"source": task, "target": note, "kind": "derived_from"}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let link = id_of(&res.body["data"]);
    assert_eq!(
        res.header("location").unwrap(),
        format!("/api/v1/links/{link}")
    );

    let res = app
        .get(&format!("/api/v1/graph/neighbours/{task}?depth=1"))
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["nodes"].as_array().unwrap().len(), 2);

    let res = app
        .get(&format!("/api/v1/graph/path?from={task}&to={note}"))
        .await;
    assert_eq!(res.body["data"]["found"], true, "{}", res.body);
    assert_eq!(res.body["data"]["length"], 1);

    let res = app.get("/api/v1/graph/export").await;
    assert_eq!(res.body["data"]["edges"].as_array().unwrap().len(), 1);
    assert_eq!(res.body["data"]["edges"][0]["kind"], "derived_from");

    let res = app.post("/api/v1/graph/doctor", &json!({})).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["healthy"], true);

    let res = app.delete(&format!("/api/v1/links/{link}")).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app.delete(&format!("/api/v1/links/{link}")).await;
    assert_error(&res, StatusCode::NOT_FOUND, "link_not_found");
}

#[tokio::test]
async fn a_depth_out_of_range_is_invalid_input() {
    let app = TestApp::new();
    let task = id_of(&create_task(&app, "deep").await);
    let res = app
        .get(&format!("/api/v1/graph/neighbours/{task}?depth=9"))
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
}

#[tokio::test]
async fn a_disabled_module_answers_module_disabled() {
    let config = Config {
        disabled_modules: [Module::Graph].into_iter().collect(),
        ..Config::default()
    };
    let app = TestApp::with_config(HttpSettings::default(), config, Router::new());
    let res = app.get("/api/v1/graph/export").await;
    assert_error(&res, StatusCode::FORBIDDEN, "module_disabled");
    assert_eq!(res.body["error"]["details"]["module"], "graph");
    assert_eq!(app.get("/api/v1/tasks").await.status, StatusCode::OK);
}

// ---- search and system

#[tokio::test]
async fn search_finds_tasks_and_notes_with_marked_snippets() {
    let app = TestApp::new();
    create_task(&app, "Migrate the database").await;
    create_note(
        &app,
        json!({"title": "Runbook", "content": "How to migrate safely."}),
    )
    .await;
    let res = app.get("/api/v1/search?q=migrat*").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let items = res.body["data"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(items[0]["snippet"].as_str().unwrap().contains("<mark>"));
}

#[tokio::test]
async fn search_without_a_query_is_missing_field() {
    let app = TestApp::new();
    let res = app.get("/api/v1/search").await;
    assert_error(&res, StatusCode::BAD_REQUEST, "missing_field");
}

#[tokio::test]
async fn a_store_that_is_gone_is_a_retryable_503_with_retry_after() {
    let app = TestApp::new();
    let id = id_of(&create_task(&app, "doomed").await);
    std::fs::remove_dir_all(app.db_dir()).unwrap();
    for path in [format!("/api/v1/tasks/{id}"), "/api/v1/tasks".to_owned()] {
        let res = app.get(&path).await;
        assert_error(&res, StatusCode::SERVICE_UNAVAILABLE, "store_unavailable");
        assert_eq!(res.body["error"]["retryable"], true);
        assert!(res.header("retry-after").is_some(), "{path}");
    }
    let res = app.post("/api/v1/tasks", &json!({"title": "x"})).await;
    assert_error(&res, StatusCode::SERVICE_UNAVAILABLE, "store_unavailable");
    // Health still answers 200 with a report; readiness says 503.
    let res = app.get("/api/v1/health").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body["data"]["status"], "unavailable");
    let res = app.get("/api/v1/health/ready").await;
    assert_error(&res, StatusCode::SERVICE_UNAVAILABLE, "store_unavailable");
}

#[tokio::test]
async fn readiness_answers_200_when_the_store_works() {
    let app = TestApp::new();
    let res = app.get("/api/v1/health/ready").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
}

#[tokio::test]
async fn graph_doctor_shows_the_first_hundred_of_each_list_with_its_count() {
    let app = TestApp::new();
    let task = create_task(&app, "looped").await;
    let id = task["id"].as_str().unwrap();
    // 130 self loops and one dangling edge, behind the tools' back.
    let conn = rusqlite::Connection::open(app.db_dir().join("cairn.db")).unwrap();
    for n in 0..130 {
        conn.execute(
            "INSERT INTO links (id, source, target, kind, created_at)
             VALUES (?1, ?2, ?2, 'relates_to', '2026-01-01T00:00:00.000000Z')",
            [format!("{n:032x}"), id.to_owned()],
        )
        .unwrap();
    }
    conn.execute(
        "INSERT INTO links (id, source, target, kind, created_at)
         VALUES ('d0000000000000000000000000000000', ?1, 'gone0000000000000000000000000000', 'blocks', '2026-01-01T00:00:00.000000Z')",
        [id],
    )
    .unwrap();

    let report = app.post("/api/v1/graph/doctor", &json!({})).await;
    assert_eq!(report.status, StatusCode::OK, "{}", report.body);
    let data = &report.body["data"];
    assert_eq!(data["healthy"], false);
    assert_eq!(data["self_loops"].as_array().unwrap().len(), 100);
    assert_eq!(data["self_loop_count"], 130);
    assert_eq!(data["self_loops_capped"], true);
    assert_eq!(data["dangling"].as_array().unwrap().len(), 1);
    assert_eq!(data["dangling_count"], 1);
    assert_eq!(data["dangling_capped"], false);
    assert_eq!(data["duplicate_count"], 0);
    assert_eq!(data["orphans_capped"], false);

    // The fix removes every broken edge, not only those shown.
    let fixed = app
        .post("/api/v1/graph/doctor", &json!({"fix": true}))
        .await;
    assert_eq!(fixed.body["data"]["removed"], 131, "{}", fixed.body);
    let after = app.post("/api/v1/graph/doctor", &json!({})).await;
    assert_eq!(after.body["data"]["healthy"], true);
    assert_eq!(after.body["data"]["self_loop_count"], 0);
}
