//! The board and one task over REST are served from the read cache while the
//! store is unchanged (src/http/cache.rs): every write since, through this
//! gateway or another connection to the file, and every claim that lapsed
//! since, is in the next answer; the request id and runtime are each
//! request's own; a task keeps its strong tag; a store that is gone answers
//! as gone.

use axum::http::StatusCode;
use http_body_util::BodyExt;
use serde_json::{Value, json};

use super::http_helpers::{TestApp, assert_error};
use cairn::http::HttpSettings;
use cairn::tools::Config;

fn column<'a>(board: &'a Value, status: &str) -> &'a [Value] {
    board["data"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["status"] == status)
        .unwrap()["items"]
        .as_array()
        .unwrap()
}

fn titles(board: &Value, status: &str) -> Vec<String> {
    column(board, status)
        .iter()
        .map(|t| t["title"].as_str().unwrap().to_owned())
        .collect()
}

async fn create(app: &TestApp, title: &str) -> String {
    let res = app.post("/api/v1/tasks", &json!({"title": title})).await;
    assert_eq!(res.status, StatusCode::CREATED, "{:?}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_owned()
}

/// `POST /api/v1/tasks/{id}/{action}` with `body`, which must succeed.
async fn act(app: &TestApp, id: &str, action: &str, body: Value) {
    let res = app
        .post(&format!("/api/v1/tasks/{id}/{action}"), &body)
        .await;
    assert_eq!(res.status, StatusCode::OK, "{action}: {:?}", res.body);
}

/// A gateway on a clock the test moves, with one task `title` that ada has
/// claimed for five minutes (its id).
async fn leased(title: &str) -> (TestApp, cairn::tools::Clock, String) {
    let config = Config::default();
    let clock = config.clock.clone();
    let app = TestApp::with_config(HttpSettings::default(), config, axum::Router::new());
    let id = create(&app, title).await;
    act(
        &app,
        &id,
        "claim",
        json!({"agent": "ada", "ttl_minutes": 5}),
    )
    .await;
    (app, clock, id)
}

/// `cairn_read_cache_total` for the board, by result.
async fn board_reads(app: &TestApp, result: &str) -> u64 {
    cache_reads(app, "task_board", result).await
}

/// `cairn_read_cache_total` for `tool`, by result.
async fn cache_reads(app: &TestApp, tool: &str, result: &str) -> u64 {
    let response = app.send_raw(TestApp::request("GET", "/metrics")).await;
    let text = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(text.to_vec()).unwrap();
    let series = format!("cairn_read_cache_total{{tool=\"{tool}\",result=\"{result}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&series))
        .map_or(0, |n| n.parse().unwrap())
}

#[tokio::test]
async fn a_board_read_again_is_served_from_the_cache_until_a_write() {
    let app = TestApp::new();
    create(&app, "first").await;
    let first = app.get("/api/v1/board").await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(titles(&first.body, "open"), ["first"]);

    let again = app.send_raw(TestApp::request("GET", "/api/v1/board")).await;
    assert_eq!(again.status(), StatusCode::OK);
    let header_id = again.headers()["x-request-id"].to_str().unwrap().to_owned();
    let text = again.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(text.to_vec()).unwrap();
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["data"], first.body["data"]);
    assert_eq!(board_reads(&app, "hit").await, 1);
    assert_eq!(board_reads(&app, "miss").await, 1);
    // The meta is the request's own, and measures the whole text sent.
    let meta = &body["meta"];
    assert_eq!(meta["tool"], "task_board");
    assert_eq!(meta["layer"], "tasks");
    assert_eq!(meta["request_id"], header_id.as_str());
    assert_ne!(meta["request_id"], first.body["meta"]["request_id"]);
    assert_eq!(
        meta["tokens_estimated"],
        cairn::envelope::estimate_tokens(&text),
        "{text}"
    );

    // A create, then a claim and a completion, each in the very next board.
    let second = create(&app, "second").await;
    let board = app.get("/api/v1/board").await;
    assert_eq!(titles(&board.body, "open"), ["second", "first"]);
    act(&app, &second, "claim", json!({"agent": "ada"})).await;
    let board = app.get("/api/v1/board").await;
    assert_eq!(titles(&board.body, "open"), ["first"]);
    assert_eq!(titles(&board.body, "claimed"), ["second"]);
    act(&app, &second, "complete", json!({"agent": "ada"})).await;
    let board = app.get("/api/v1/board").await;
    assert_eq!(titles(&board.body, "claimed"), Vec::<String>::new());
    assert_eq!(titles(&board.body, "done"), ["second"]);
    assert_eq!(board_reads(&app, "hit").await, 1);
}

#[tokio::test]
async fn each_query_is_kept_apart() {
    let app = TestApp::new();
    for title in ["a", "b", "c"] {
        create(&app, title).await;
    }
    let two = app.get("/api/v1/board?limit=2").await;
    let all = app.get("/api/v1/board").await;
    let open_only = app.get("/api/v1/board?columns=open&limit=1").await;
    assert_eq!(titles(&two.body, "open"), ["c", "b"]);
    assert_eq!(titles(&all.body, "open"), ["c", "b", "a"]);
    assert_eq!(
        open_only.body["data"]["columns"].as_array().unwrap().len(),
        1
    );
    assert_eq!(
        app.get("/api/v1/board?limit=2").await.body["data"],
        two.body["data"]
    );
    assert_eq!(
        app.get("/api/v1/board").await.body["data"],
        all.body["data"]
    );
    assert_eq!(board_reads(&app, "hit").await, 2);
}

#[tokio::test]
async fn a_claim_that_lapses_with_no_write_leaves_the_claimed_column() {
    let (app, clock, _) = leased("leased").await;
    let board = app.get("/api/v1/board").await;
    assert_eq!(titles(&board.body, "claimed"), ["leased"]);
    clock.advance(chrono::Duration::minutes(4));
    let board = app.get("/api/v1/board").await;
    assert_eq!(titles(&board.body, "claimed"), ["leased"]);
    assert_eq!(board_reads(&app, "hit").await, 1);

    clock.advance(chrono::Duration::minutes(2));
    let board = app.get("/api/v1/board").await;
    assert_eq!(titles(&board.body, "claimed"), Vec::<String>::new());
    assert_eq!(titles(&board.body, "open"), ["leased"]);
    assert_eq!(column(&board.body, "open")[0]["claim"], Value::Null);
}

#[tokio::test]
async fn a_write_through_another_connection_to_the_file_is_seen() {
    let app = TestApp::new();
    create(&app, "here").await;
    assert_eq!(
        titles(&app.get("/api/v1/board").await.body, "open"),
        ["here"]
    );
    // A second store on the same file: what the CLI or another process opens.
    let other = cairn::store::open_sqlite(&app.db_dir().join("cairn.db")).unwrap();
    let task = cairn::store::NewTask {
        id: "0123456789abcdef0123456789abcdef".into(),
        title: "elsewhere".into(),
        description: String::new(),
        tags: Vec::new(),
        priority: cairn::store::Priority::default(),
    };
    other
        .task_create(&task, &cairn::store::timestamp(chrono::Utc::now()))
        .unwrap();
    let board = app.get("/api/v1/board").await;
    assert_eq!(titles(&board.body, "open"), ["elsewhere", "here"]);
}

#[tokio::test]
async fn a_store_gone_after_a_cached_read_answers_unavailable() {
    let app = TestApp::new();
    create(&app, "soon gone").await;
    assert_eq!(app.get("/api/v1/board").await.status, StatusCode::OK);
    std::fs::remove_dir_all(app.db_dir()).unwrap();
    let res = app.get("/api/v1/board").await;
    assert_error(&res, StatusCode::SERVICE_UNAVAILABLE, "store_unavailable");
}

/// `GET /api/v1/tasks/{id}`: status, `ETag`, body.
async fn read_task(
    app: &TestApp,
    id: &str,
    if_none_match: Option<&str>,
) -> (StatusCode, String, Value) {
    let mut request = TestApp::request("GET", &format!("/api/v1/tasks/{id}"));
    if let Some(tag) = if_none_match {
        request = request.header("if-none-match", tag);
    }
    let response = app.send_raw(request).await;
    let status = response.status();
    let tag = response.headers()["etag"].to_str().unwrap().to_owned();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap()
    };
    (status, tag, body)
}

#[tokio::test]
async fn a_task_read_again_is_served_from_the_cache_with_its_strong_tag() {
    let app = TestApp::new();
    let id = create(&app, "kept").await;
    let (status, tag, first) = read_task(&app, &id, None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!tag.starts_with("W/"), "one entity's tag is strong: {tag}");

    let (status, again_tag, again) = read_task(&app, &id, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again_tag, tag);
    assert_eq!(again["data"], first["data"]);
    assert_ne!(again["meta"]["request_id"], first["meta"]["request_id"]);
    assert_eq!(cache_reads(&app, "task_get", "hit").await, 1);

    // Revalidated from the cache: 304 with the tag, no body.
    let (status, unchanged_tag, body) = read_task(&app, &id, Some(&tag)).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    assert_eq!(unchanged_tag, tag);
    assert_eq!(body, Value::Null);
    assert_eq!(cache_reads(&app, "task_get", "hit").await, 2);

    // A claim through the gateway is in the very next read, with a new tag.
    act(&app, &id, "claim", json!({"agent": "ada"})).await;
    let (status, claimed_tag, claimed) = read_task(&app, &id, Some(&tag)).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(claimed_tag, tag);
    assert_eq!(claimed["data"]["claim"]["holder"], "ada");
}

#[tokio::test]
async fn a_task_changed_through_another_connection_or_by_a_lapse_is_seen() {
    let (app, clock, id) = leased("here").await;
    let (_, _, read) = read_task(&app, &id, None).await;
    assert_eq!(read["data"]["title"], "here");
    assert_eq!(read["data"]["claim"]["holder"], "ada");

    // A write of its own connection to the file, as another process's.
    let other = rusqlite::Connection::open(app.db_dir().join("cairn.db")).unwrap();
    other
        .execute("UPDATE tasks SET title = 'elsewhere' WHERE id = ?1", [&id])
        .unwrap();
    let (_, _, read) = read_task(&app, &id, None).await;
    assert_eq!(read["data"]["title"], "elsewhere");
    let (_, _, read) = read_task(&app, &id, None).await;
    assert_eq!(read["data"]["claim"]["holder"], "ada");
    assert_eq!(cache_reads(&app, "task_get", "hit").await, 1);

    clock.advance(chrono::Duration::minutes(6));
    let (_, _, read) = read_task(&app, &id, None).await;
    assert_eq!(read["data"]["claim"], Value::Null, "the claim lapsed");
    assert_eq!(read["data"]["status"], "open");
}

/// The JSON body of the answer to `request`.
async fn json_of(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_changed_by_another_process_is_in_the_next_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    let (mut server, base) =
        crate::process_helpers::serve_with_json_log(&db, &dir.path().join("log"), &[], &[]).await;
    let client = reqwest::Client::new();
    let created = json_of(
        client
            .post(format!("{base}/api/v1/tasks"))
            .json(&json!({"title": "before"})),
    )
    .await;
    let id = created["data"]["id"].as_str().unwrap().to_owned();
    let title = async || {
        let read = json_of(client.get(format!("{base}/api/v1/tasks/{id}"))).await;
        read["data"]["title"].as_str().unwrap().to_owned()
    };
    // Read twice: the second from the read cache.
    assert_eq!(title().await, "before");
    assert_eq!(title().await, "before");

    // The CLI, a process of its own, writes to the same file.
    let update = json!({"id": id, "title": "after"}).to_string();
    let cli = crate::process_helpers::cairn_command()
        .arg("--db")
        .arg(&db)
        .args(["call", "task_update", &update])
        .output()
        .unwrap();
    assert!(
        cli.status.success(),
        "{}",
        String::from_utf8_lossy(&cli.stdout)
    );
    assert_eq!(title().await, "after", "the other process's commit is seen");

    let metrics = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let hits = "cairn_read_cache_total{tool=\"task_get\",result=\"hit\"} 1";
    assert!(metrics.contains(hits), "{metrics}");
    server.kill().unwrap();
    server.wait().unwrap();
}
