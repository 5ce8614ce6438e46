//! A store made by the last release before projects (schema 4, committed in
//! `tests/fixtures/schema4/`, see its `make.sh`) opens with today's build,
//! migrates, holds everything in the `default` project and answers the same
//! requests as the release did.

use std::sync::Arc;

use cairn::store::Store;
use cairn::tools::{Cairn, Config};
use serde_json::Value;

use crate::tool_helpers::ok;

const ANSWERS: &str = include_str!("../fixtures/schema4/answers.json");
const PG_DUMP: &str = include_str!("../fixtures/schema4/postgres.sql");
/// The schema the PostgreSQL dump was taken from.
const DUMPED_SCHEMA: &str = "cairn_schema4_fixture";

/// Opens `store` off the async executor and checks it as the release left it.
async fn answers_as_the_release_did(store: Arc<dyn Store>, tools: &[&str]) {
    let cairn = Cairn::new(store.clone(), Config::default());
    let (version, projects) = tokio::task::spawn_blocking(move || {
        (
            store.schema_version().unwrap(),
            store.project_list().unwrap(),
        )
    })
    .await
    .unwrap();
    assert_eq!(version, 5, "migrated to projects");
    let keys: Vec<&str> = projects.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(keys, ["default"], "everything is in `default`");

    let answers: Value = serde_json::from_str(ANSWERS).unwrap();
    for tool in tools {
        let recorded = &answers[tool];
        let data = ok(&cairn, tool, recorded["args"].clone()).await;
        assert_eq!(&data, &recorded["data"], "{tool} answers as before");
    }
    // And the default project is that of the routes named by project.
    let in_default = cairn.in_project("default").await.unwrap();
    let listed = ok(&in_default, "task_list", serde_json::json!({})).await;
    assert_eq!(listed, answers["task_list"]["data"]);
}

#[tokio::test]
async fn a_sqlite_store_of_schema_4_opens_with_everything_in_default() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cairn.db");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/schema4/cairn.db"
        ),
        &path,
    )
    .unwrap();
    let store = cairn::store::open_sqlite(&path).unwrap();
    let recorded: serde_json::Map<String, Value> = serde_json::from_str(ANSWERS).unwrap();
    let every: Vec<&str> = recorded.keys().map(String::as_str).collect();
    answers_as_the_release_did(store, &every).await;
}

#[tokio::test]
async fn a_postgres_dump_of_schema_4_opens_with_everything_in_default() {
    let schema = crate::pg_helpers::TestSchema::create();
    // The dump makes its schema: it becomes the test's, made just above.
    let sql = PG_DUMP
        .replace(&format!("CREATE SCHEMA {DUMPED_SCHEMA};"), "")
        .replace(DUMPED_SCHEMA, schema.name());
    crate::pg_helpers::execute(&crate::pg_helpers::database_url(), &sql);
    let url = schema.url().to_owned();
    let store = tokio::task::spawn_blocking(move || {
        cairn::store::open(&url, &cairn::store::StoreOptions::default()).unwrap()
    })
    .await
    .unwrap();
    // The dump came in through `restore`, which starts no change feed; the
    // answers were recorded on SQLite, whose search ranks and cuts snippets
    // its own way (the hits are compared below).
    let tools = [
        "task_list",
        "task_board",
        "note_list",
        "note_read",
        "graph_export",
    ];
    answers_as_the_release_did(store.clone(), &tools).await;
    let cairn = Cairn::new(store, Config::default());
    let answers: Value = serde_json::from_str(ANSWERS).unwrap();
    let hits = |data: &Value| -> Vec<Value> {
        let mut ids: Vec<Value> = data["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| hit["id"].clone())
            .collect();
        ids.sort_by_key(Value::to_string);
        ids
    };
    let found = ok(&cairn, "search", answers["search"]["args"].clone()).await;
    assert_eq!(hits(&found), hits(&answers["search"]["data"]));
    drop(schema);
}
