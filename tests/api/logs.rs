//! Structured logs: `cairn serve --log-format json` writes one JSON object per
//! line on stderr; the request line carries request id, route, tool, code and
//! latency; a store's line carries the request id of the call that caused it
//! (through the `http` and `tool` spans); no line carries the token.

use serde_json::{Value, json};

use crate::process_helpers::serve_with_json_log;

const TOKEN: &str = "t0ken-never-logged";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_carry_the_request_id_from_the_header_to_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    let log = dir.path().join("stderr.log");
    let (mut child, base) = serve_with_json_log(
        &db,
        &log,
        &[("CAIRN_LOG", "info"), ("CAIRN_TOKEN", TOKEN)],
        &[],
    )
    .await;
    let client = reqwest::Client::new();

    let create = |title: &str, request_id: &str| {
        client
            .post(format!("{base}/api/v1/tasks"))
            .bearer_auth(TOKEN)
            .header("x-request-id", request_id)
            .json(&json!({"title": title}))
            .send()
    };
    assert_eq!(create("first", "req-first").await.unwrap().status(), 201);
    // With the search index gone, the store warns while it writes the next task.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("DROP TABLE search_index")
        .unwrap();
    assert_eq!(create("second", "req-second").await.unwrap().status(), 201);
    let res = client
        .get(format!("{base}/api/v1/tasks/nope00"))
        .bearer_auth(TOKEN)
        .header("x-request-id", "req-missing")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);

    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not one JSON object: {l}")))
        .collect();
    assert!(lines.iter().all(Value::is_object));
    assert!(!text.contains(TOKEN), "a line carries the token:\n{text}");

    let answered = |request_id: &str| {
        lines
            .iter()
            .find(|l| l["message"] == "answered" && l["request_id"] == request_id)
            .unwrap_or_else(|| panic!("no request line for {request_id}:\n{text}"))
            .clone()
    };
    let first = answered("req-first");
    assert_eq!(first["route"], "/api/v1/tasks");
    assert_eq!(first["method"], "POST");
    assert_eq!(first["status"], 201);
    assert_eq!(first["tool"], "task_create");
    assert_eq!(first["code"], "ok");
    assert!(first["latency_ms"].as_f64().unwrap() > 0.0);
    let missing = answered("req-missing");
    assert_eq!(missing["route"], "/api/v1/tasks/{id}");
    assert_eq!(missing["code"], "task_not_found");
    // A refused request is one line: the request line says it all.
    let about = |l: &&Value| {
        l["request_id"] == "req-missing"
            || l["spans"]
                .as_array()
                .is_some_and(|spans| spans.iter().any(|s| s["request_id"] == "req-missing"))
    };
    let refused: Vec<&Value> = lines.iter().filter(about).collect();
    assert_eq!(refused.len(), 1, "{refused:#?}");

    // The store's warning, inside the tool call, inside the request.
    let store_line = lines
        .iter()
        .find(|l| {
            l["target"]
                .as_str()
                .is_some_and(|t| t.starts_with("cairn::store"))
                && l["level"] == "WARN"
        })
        .unwrap_or_else(|| panic!("no store line:\n{text}"));
    let spans = store_line["spans"].as_array().expect("spans");
    let names: Vec<&str> = spans.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["http", "tool"], "{store_line}");
    assert!(
        spans.iter().all(|s| s["request_id"] == "req-second"),
        "{store_line}"
    );
    assert_eq!(spans[1]["tool"], "task_create");
}

/// A failure on cairn's side (here the store gone) gets a line of its own,
/// at warn, with the request id, tool and code, besides the request line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_on_cairns_side_gets_a_warning_line_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("store");
    std::fs::create_dir(&store_dir).unwrap();
    let db = store_dir.join("cairn.db");
    let log = dir.path().join("stderr.log");
    let (mut child, base) = serve_with_json_log(&db, &log, &[("CAIRN_LOG", "info")], &[]).await;
    let client = reqwest::Client::new();
    let board = |request_id: &'static str| {
        client
            .get(format!("{base}/api/v1/board"))
            .header("x-request-id", request_id)
            .send()
    };
    assert_eq!(board("req-fine").await.unwrap().status(), 200);
    std::fs::remove_dir_all(&store_dir).unwrap();
    assert_eq!(board("req-gone").await.unwrap().status(), 503);

    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not one JSON object: {l}")))
        .collect();
    let failed = |request_id: &str| {
        lines
            .iter()
            .filter(|l| l["message"] == "request failed" && l["request_id"] == request_id)
            .collect::<Vec<_>>()
    };
    let gone = failed("req-gone");
    assert_eq!(gone.len(), 1, "{text}");
    assert_eq!(gone[0]["level"], "WARN");
    assert_eq!(gone[0]["tool"], "task_board");
    assert_eq!(gone[0]["code"], "store_unavailable");
    assert!(failed("req-fine").is_empty(), "{text}");
}
