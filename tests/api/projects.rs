//! Projects: the registry's routes and rules, and the isolation suite. Two
//! projects, `alpha` and `bravo`, a token for each and an admin token; every
//! operation of the OpenAPI document and every MCP tool is called with
//! alpha's token against bravo (by path, by id, by prefix, by slug, by
//! search, by `If-None-Match`, by `Idempotency-Key`), and nothing of bravo
//! may appear in any answer, nor change. The calls are made from the
//! document and the registry, so a route or tool added later is covered
//! without editing this file.

use axum::http::StatusCode;
use cairn::auth::tokens::{Tokens, hash_secret};
use cairn::http::HttpSettings;
use rmcp::model::{
    ArgumentInfo, CallToolRequestParams, CompleteRequestParams, ReadResourceRequestParams,
    Reference,
};
use serde_json::{Map, Value, json};

use crate::http_helpers::{TestApp, TestResponse, assert_error};
use crate::scopes::mcp_client;

const ALPHA: &str = "alpha-secret-1";
const BRAVO: &str = "bravo-secret-2";
const ADMIN: &str = "admin-secret-3";
/// What alpha searches for and filters by: bravo's data holds it too.
const MARK: &str = "bravomark";
/// Beside [`MARK`] in every title and content bravo holds, and never sent
/// by alpha: an answer that carries it shows bravo's data.
const SECRET: &str = "bravosecret";

fn settings() -> HttpSettings {
    let mut tokens = Tokens::default();
    let file = format!(
        "alpha write {} alpha\nbravo write {} bravo\nops admin {} *\n",
        hash_secret(ALPHA),
        hash_secret(BRAVO),
        hash_secret(ADMIN)
    );
    tokens.add_file(&file).unwrap();
    HttpSettings {
        tokens,
        ..HttpSettings::default()
    }
}

async fn send(
    app: &TestApp,
    method: &str,
    path: &str,
    secret: &str,
    body: Option<Value>,
) -> TestResponse {
    let request =
        TestApp::request(method, path).header("authorization", &format!("Bearer {secret}"));
    app.send(match body {
        Some(body) => request.json(&body),
        None => request,
    })
    .await
}

/// The gateway with projects `alpha` and `bravo`, made by the admin.
async fn two_projects() -> TestApp {
    let app = TestApp::with(settings(), axum::Router::new());
    for key in ["alpha", "bravo"] {
        let made = send(
            &app,
            "POST",
            "/api/v1/projects",
            ADMIN,
            Some(json!({"key": key})),
        )
        .await;
        assert_eq!(made.status, StatusCode::CREATED, "{:?}", made.body);
    }
    app
}

#[tokio::test]
async fn an_admin_of_every_project_makes_projects_and_each_token_lists_its_own() {
    let app = TestApp::with(settings(), axum::Router::new());
    let refused = send(
        &app,
        "POST",
        "/api/v1/projects",
        ALPHA,
        Some(json!({"key": "x"})),
    )
    .await;
    assert_error(&refused, StatusCode::FORBIDDEN, "permission_denied");

    let made = send(
        &app,
        "POST",
        "/api/v1/projects",
        ADMIN,
        Some(json!({"key": "alpha", "name": "Alpha team"})),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert_eq!(
        made.header("location").as_deref(),
        Some("/api/v1/projects/alpha")
    );
    assert_eq!(made.body["data"]["name"], "Alpha team");
    assert_eq!(made.body["data"]["archived"], false);

    let again = send(
        &app,
        "POST",
        "/api/v1/projects",
        ADMIN,
        Some(json!({"key": "alpha"})),
    )
    .await;
    assert_error(&again, StatusCode::CONFLICT, "project_exists");
    assert_eq!(again.body["error"]["details"]["project"], "alpha");
    for bad in ["Alpha", "a_b", "", &"x".repeat(65)] {
        let refused = send(
            &app,
            "POST",
            "/api/v1/projects",
            ADMIN,
            Some(json!({"key": bad})),
        )
        .await;
        assert_error(&refused, StatusCode::BAD_REQUEST, "invalid_input");
    }
    send(
        &app,
        "POST",
        "/api/v1/projects",
        ADMIN,
        Some(json!({"key": "bravo"})),
    )
    .await;

    let keys = |res: &TestResponse| -> Vec<String> {
        res.body["data"]["projects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["key"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = send(&app, "GET", "/api/v1/projects", ADMIN, None).await;
    assert_eq!(keys(&all), ["alpha", "bravo", "default"]);
    let own = send(&app, "GET", "/api/v1/projects", ALPHA, None).await;
    assert_eq!(keys(&own), ["alpha"]);

    let renamed = send(
        &app,
        "PATCH",
        "/api/v1/projects/bravo",
        ADMIN,
        Some(json!({"name": "Bravo"})),
    )
    .await;
    assert_eq!(renamed.body["data"]["name"], "Bravo");
    let by_member = send(
        &app,
        "PATCH",
        "/api/v1/projects/bravo",
        BRAVO,
        Some(json!({"archived": true})),
    )
    .await;
    assert_error(&by_member, StatusCode::FORBIDDEN, "permission_denied");
    let missing = send(
        &app,
        "PATCH",
        "/api/v1/projects/nope",
        ADMIN,
        Some(json!({"name": "N"})),
    )
    .await;
    assert_error(&missing, StatusCode::NOT_FOUND, "project_not_found");
}

#[tokio::test]
async fn a_project_the_token_may_not_use_is_answered_as_one_that_does_not_exist() {
    let app = two_projects().await;
    let other = send(&app, "GET", "/api/v1/projects/bravo/tasks", ALPHA, None).await;
    let none = send(&app, "GET", "/api/v1/projects/nope/tasks", ALPHA, None).await;
    let default = send(&app, "GET", "/api/v1/tasks", ALPHA, None).await;
    for res in [&other, &none, &default] {
        assert_error(res, StatusCode::NOT_FOUND, "project_not_found");
    }
    let shape = |res: &TestResponse| {
        let mut error = res.body["error"].clone();
        error["request_id"] = Value::Null;
        error["message"] = Value::Null;
        error["details"] = Value::Null;
        error
    };
    assert_eq!(shape(&other), shape(&none));
    let own = send(&app, "GET", "/api/v1/projects/alpha/tasks", ALPHA, None).await;
    assert_eq!(own.status, StatusCode::OK);
}

#[tokio::test]
async fn a_project_holds_its_own_tasks_and_an_archived_one_only_reads() {
    let app = two_projects().await;
    let created = send(
        &app,
        "POST",
        "/api/v1/projects/alpha/tasks",
        ALPHA,
        Some(json!({"title": "ship it"})),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED);
    let id = created.body["data"]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        created.header("location"),
        Some(format!("/api/v1/projects/alpha/tasks/{id}")),
        "Location names the task inside its project"
    );
    let read = send(
        &app,
        "GET",
        &format!("/api/v1/projects/alpha/tasks/{}", &id[..8]),
        ALPHA,
        None,
    )
    .await;
    assert_eq!(read.body["data"]["title"], "ship it");
    let elsewhere = send(
        &app,
        "GET",
        &format!("/api/v1/projects/bravo/tasks/{id}"),
        BRAVO,
        None,
    )
    .await;
    assert_error(&elsewhere, StatusCode::NOT_FOUND, "task_not_found");
    let in_default = send(&app, "GET", &format!("/api/v1/tasks/{id}"), ADMIN, None).await;
    assert_error(&in_default, StatusCode::NOT_FOUND, "task_not_found");

    let archived = send(
        &app,
        "PATCH",
        "/api/v1/projects/alpha",
        ADMIN,
        Some(json!({"archived": true})),
    )
    .await;
    assert_eq!(archived.body["data"]["archived"], true);
    let write = send(
        &app,
        "POST",
        "/api/v1/projects/alpha/tasks",
        ALPHA,
        Some(json!({"title": "too late"})),
    )
    .await;
    assert_error(&write, StatusCode::FORBIDDEN, "project_archived");
    let list = send(&app, "GET", "/api/v1/projects/alpha/tasks", ALPHA, None).await;
    assert_eq!(
        list.body["data"]["total"], 1,
        "reads go on; the refused write wrote nothing"
    );

    send(
        &app,
        "PATCH",
        "/api/v1/projects/alpha",
        ADMIN,
        Some(json!({"archived": false})),
    )
    .await;
    let write = send(
        &app,
        "POST",
        "/api/v1/projects/alpha/tasks",
        ALPHA,
        Some(json!({"title": "open again"})),
    )
    .await;
    assert_eq!(write.status, StatusCode::CREATED);
}

/// What bravo holds, as bravo's token reads it.
struct Bravo {
    ids: Vec<String>,
    task_tag: String,
    task: String,
    note: String,
    slug: String,
}

async fn seed_bravo(app: &TestApp) -> Bravo {
    let task = send(
        app,
        "POST",
        "/api/v1/projects/bravo/tasks",
        BRAVO,
        Some(json!({"title": format!("{MARK} {SECRET} task"), "tags": [MARK]})),
    )
    .await;
    let task_id = task.body["data"]["id"].as_str().unwrap().to_owned();
    let claimed = send(
        app,
        "POST",
        &format!("/api/v1/projects/bravo/tasks/{task_id}/claim"),
        BRAVO,
        Some(json!({"agent": format!("{SECRET}-agent")})),
    )
    .await;
    assert_eq!(claimed.status, StatusCode::OK);
    let keyed = TestApp::request("POST", "/api/v1/projects/bravo/tasks")
        .header("authorization", &format!("Bearer {BRAVO}"))
        .header("idempotency-key", "shared-key-1")
        .json(&json!({"title": format!("{MARK} {SECRET} keyed")}));
    let keyed = app.send(keyed).await;
    let note = send(
        app,
        "POST",
        "/api/v1/projects/bravo/notes",
        BRAVO,
        Some(json!({"title": format!("{MARK} {SECRET} note"), "content": format!("{MARK} {SECRET} body [[{MARK} other]]")})),
    )
    .await;
    assert_eq!(note.status, StatusCode::CREATED, "{:?}", note.body);
    let note_id = note.body["data"]["id"].as_str().unwrap().to_owned();
    let link = send(
        app,
        "POST",
        "/api/v1/projects/bravo/links",
        BRAVO,
        Some(json!({"source": task_id, "target": note_id, "kind": "relates_to"})),
    )
    .await;
    assert_eq!(link.status, StatusCode::CREATED, "{:?}", link.body);
    let read = send(
        app,
        "GET",
        &format!("/api/v1/projects/bravo/tasks/{task_id}"),
        BRAVO,
        None,
    )
    .await;
    Bravo {
        ids: vec![
            task_id.clone(),
            note_id.clone(),
            keyed.body["data"]["id"].as_str().unwrap().to_owned(),
            link.body["data"]["id"].as_str().unwrap().to_owned(),
        ],
        task_tag: read.header("etag").unwrap(),
        slug: note.body["data"]["slug"].as_str().unwrap().to_owned(),
        task: task_id,
        note: note_id,
    }
}

/// Everything bravo holds, as its own token reads it (request ids and
/// timings left out).
async fn bravo_state(app: &TestApp) -> Vec<Value> {
    let mut state = Vec::new();
    for path in [
        "/api/v1/projects/bravo/tasks",
        "/api/v1/projects/bravo/notes",
        "/api/v1/projects/bravo/graph/export",
        "/api/v1/projects/bravo/changes",
    ] {
        state.push(send(app, "GET", path, BRAVO, None).await.body["data"].clone());
    }
    state
}

/// A value for an input named `name` of JSON Schema `schema`: bravo's ids
/// for anything that names an entity (bravo's slug for a slug), bravo's
/// words for what is searched, other text for the rest (what alpha writes
/// must not be mistaken for bravo's).
fn probe_value(name: &str, schema: &Value, doc: &Value, bravo: &Bravo) -> Value {
    let schema = resolve(schema, doc);
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let names_entity = name.contains("id")
        || ["source", "target", "from", "to", "src", "dst", "node"].contains(&name);
    let kind = schema["type"]
        .as_str()
        .or_else(|| {
            schema["type"]
                .as_array()
                .and_then(|t| t.first())
                .and_then(Value::as_str)
        })
        .unwrap_or("string");
    match kind {
        "integer" | "number" => json!(1),
        "boolean" => json!(false),
        "array" => json!([probe_value(name, &schema["items"], doc, bravo)]),
        "object" => json!({}),
        _ if names_entity => json!(bravo.task),
        _ if name == "slug" => json!(bravo.slug),
        // Searched for: bravo's words must find nothing.
        _ if ["q", "query", "prefix", "tag", "tags"].contains(&name) => json!(MARK),
        _ => json!("alpha-probe"),
    }
}

fn resolve<'a>(schema: &'a Value, doc: &'a Value) -> &'a Value {
    match schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
    {
        Some(name) => &doc["components"]["schemas"][name],
        None => schema
            .get("oneOf")
            .or_else(|| schema.get("anyOf"))
            .and_then(|all| all.as_array()?.iter().find(|s| s["type"] != "null"))
            .map_or(schema, |s| resolve(s, doc)),
    }
}

/// A body with every property the operation's request schema declares.
fn probe_body(op: &Value, doc: &Value, bravo: &Bravo) -> Option<Value> {
    let schema = &op["requestBody"]["content"]["application/json"]["schema"];
    schema.as_object()?;
    let schema = resolve(schema, doc);
    let mut body = Map::new();
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            body.insert(name.clone(), probe_value(name, property, doc, bravo));
        }
    }
    Some(Value::Object(body))
}

/// Fails when `text` carries anything of bravo's: its words, or an id alpha
/// did not send (an id sent comes back in a `task_not_found`).
fn assert_nothing_of_bravo(what: &str, text: &str, bravo: &Bravo) {
    // A slug sent (bravo's holds its words) comes back in a `note_not_found`.
    let text = &text.replace(&bravo.slug, "");
    assert!(!text.contains(SECRET), "{what} shows bravo's words: {text}");
    for id in bravo
        .ids
        .iter()
        .filter(|id| **id != bravo.task && **id != bravo.note)
    {
        assert!(
            !text.contains(id.as_str()),
            "{what} shows bravo's id {id}: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_operation_of_the_document_shows_or_changes_another_projects_data() {
    let app = two_projects().await;
    let bravo = seed_bravo(&app).await;
    send(
        &app,
        "POST",
        "/api/v1/projects/alpha/tasks",
        ALPHA,
        Some(json!({"title": "alpha's own"})),
    )
    .await;
    let before = bravo_state(&app).await;
    let doc = cairn::http::openapi::document();
    let mut called = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if !["get", "post", "put", "patch", "delete"].contains(&method.as_str())
                || op["operationId"]
                    .as_str()
                    .is_some_and(|id| id.starts_with("events"))
                || path.starts_with("/api/v1/projects/{project}/events")
                || path.ends_with("/events")
            {
                continue;
            }
            let params = op["parameters"].as_array().cloned().unwrap_or_default();
            let in_project = path.contains("{project}");
            // By path: alpha's token names bravo; by id: alpha's project,
            // bravo's ids; the default project's routes: alpha may not use it.
            let targets: &[&str] = if in_project {
                &["bravo", "alpha"]
            } else {
                &["-"]
            };
            for project in targets {
                for (round, id) in [
                    &bravo.task,
                    &bravo.note,
                    &bravo.task[..8].to_owned(),
                    &bravo.slug,
                ]
                .into_iter()
                .enumerate()
                {
                    // Bravo's key on the first call of each route, so that a
                    // replay can only be bravo's answer; then keys of alpha's own.
                    let key = match round {
                        0 => "shared-key-1".to_owned(),
                        n => format!("alpha-key-{called}-{n}"),
                    };
                    let mut url = path.replace("{project}", project).replace("{id}", id);
                    let query: Vec<String> = params
                        .iter()
                        .filter(|p| p["in"] == "query")
                        .map(|p| {
                            let name = p["name"].as_str().unwrap();
                            let value = probe_value(name, &p["schema"], &doc, &bravo);
                            let text = match value {
                                Value::String(s) => s,
                                Value::Array(items) => items
                                    .iter()
                                    .map(|i| i.as_str().map_or(i.to_string(), str::to_owned))
                                    .collect::<Vec<_>>()
                                    .join(","),
                                other => other.to_string(),
                            };
                            format!("{name}={text}")
                        })
                        .collect();
                    if !query.is_empty() {
                        url = format!("{url}?{}", query.join("&"));
                    }
                    let mut request = TestApp::request(&method.to_uppercase(), &url)
                        .header("authorization", &format!("Bearer {ALPHA}"))
                        .header("if-none-match", &bravo.task_tag)
                        .header("idempotency-key", &key);
                    if let Some(body) = probe_body(op, &doc, &bravo) {
                        request = request.json(&body);
                    }
                    let answer = app.send_raw(request).await;
                    let status = answer.status();
                    let headers = format!("{:?}", answer.headers());
                    let body = http_body_util::BodyExt::collect(answer.into_body())
                        .await
                        .unwrap()
                        .to_bytes();
                    let what = format!("{method} {url} ({status})");
                    assert_ne!(
                        status,
                        StatusCode::NOT_MODIFIED,
                        "{what}: bravo's tag matched"
                    );
                    assert!(
                        !headers.contains("idempotent-replayed"),
                        "{what}: bravo's answer replayed"
                    );
                    assert_nothing_of_bravo(&what, &String::from_utf8_lossy(&body), &bravo);
                    assert_nothing_of_bravo(&what, &headers, &bravo);
                    // Bravo's routes, and the default project's (the public
                    // probes, the registry's and the error pages, which are
                    // no project's, aside).
                    let projects_own = !in_project
                        && ["/api/v1/health", "/api/v1/projects", "/api/v1/errors"]
                            .iter()
                            .any(|own| path.starts_with(own));
                    let registry = path == "/api/v1/projects/{project}";
                    if *project != "alpha" && !projects_own && !registry {
                        assert_eq!(status, StatusCode::NOT_FOUND, "{what}");
                    }
                    called += 1;
                }
            }
        }
    }
    assert!(called > 100, "every operation was called ({called} calls)");
    assert_eq!(bravo_state(&app).await, before, "nothing of bravo changed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_mcp_tool_or_resource_of_a_session_in_one_project_reaches_another() {
    let (url, _dir) = crate::scopes::gateway_with(settings()).await;
    let base = url.trim_end_matches("/mcp").to_owned();
    let client = reqwest::Client::new();
    for key in ["alpha", "bravo"] {
        let made = client
            .post(format!("{base}/api/v1/projects"))
            .bearer_auth(ADMIN)
            .json(&json!({"key": key}))
            .send()
            .await
            .unwrap();
        assert_eq!(made.status(), 201);
    }
    let post = async |path: &str, secret: &str, body: Value| -> Value {
        client
            .post(format!("{base}{path}"))
            .bearer_auth(secret)
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    };
    let task = post(
        "/api/v1/projects/bravo/tasks",
        BRAVO,
        json!({"title": format!("{MARK} {SECRET} task")}),
    )
    .await;
    let note = post(
        "/api/v1/projects/bravo/notes",
        BRAVO,
        json!({"title": format!("{MARK} {SECRET} note"), "content": format!("{MARK} {SECRET}")}),
    )
    .await;
    let bravo = Bravo {
        ids: vec![
            task["data"]["id"].as_str().unwrap().to_owned(),
            note["data"]["id"].as_str().unwrap().to_owned(),
        ],
        task_tag: String::new(),
        task: task["data"]["id"].as_str().unwrap().to_owned(),
        note: note["data"]["id"].as_str().unwrap().to_owned(),
        slug: note["data"]["slug"].as_str().unwrap().to_owned(),
    };

    // A session for bravo with alpha's token is refused before it starts.
    let refused = client
        .post(format!("{base}/mcp?project=bravo"))
        .bearer_auth(ALPHA)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 404);
    let refused: Value = refused.json().await.unwrap();
    assert_eq!(refused["error"]["code"], "project_not_found");

    for url in [
        format!("{base}/mcp?project=alpha"),
        format!("{base}/projects/alpha/mcp"),
    ] {
        let session = mcp_client(&url, ALPHA).await;
        let doc = cairn::http::openapi::document();
        for tool in session.list_all_tools().await.unwrap() {
            let mut args = Map::new();
            if let Some(properties) = tool
                .input_schema
                .get("properties")
                .and_then(Value::as_object)
            {
                for (name, property) in properties {
                    args.insert(name.clone(), probe_value(name, property, &doc, &bravo));
                }
            }
            let params = CallToolRequestParams::new(tool.name.to_string()).with_arguments(args);
            let text = match session.call_tool(params).await {
                Ok(result) => serde_json::to_string(&result).unwrap(),
                Err(error) => error.to_string(),
            };
            assert_nothing_of_bravo(&format!("{} over {url}", tool.name), &text, &bravo);
        }
        for uri in [
            format!("cairn://tasks/{}", bravo.task),
            format!("cairn://notes/{}", bravo.slug),
            "cairn://board".to_owned(),
        ] {
            let read = session
                .read_resource(ReadResourceRequestParams::new(uri.clone()))
                .await;
            let text = match read {
                Ok(result) => serde_json::to_string(&result).unwrap(),
                Err(error) => error.to_string(),
            };
            assert_nothing_of_bravo(&uri, &text, &bravo);
        }
        let listed = session.list_all_resources().await.unwrap();
        assert_nothing_of_bravo(
            "resources/list",
            &serde_json::to_string(&listed).unwrap(),
            &bravo,
        );
        let prompts = session.list_all_prompts().await.unwrap();
        for prompt in prompts {
            let mut args = Map::new();
            for arg in prompt.arguments.unwrap_or_default() {
                args.insert(arg.name.clone(), json!(bravo.task));
            }
            let got = session
                .get_prompt(
                    rmcp::model::GetPromptRequestParams::new(prompt.name.clone())
                        .with_arguments(args),
                )
                .await;
            let text = match got {
                Ok(result) => serde_json::to_string(&result).unwrap(),
                Err(error) => error.to_string(),
            };
            assert_nothing_of_bravo(&prompt.name, &text, &bravo);
        }
        // Completion of every template variable and prompt argument, from
        // the first characters of bravo's ids, slug and words.
        let mut references = Vec::new();
        for template in session.list_all_resource_templates().await.unwrap() {
            let uri = template.uri_template.clone();
            for name in uri.split('{').skip(1).filter_map(|v| v.split('}').next()) {
                references.push((Reference::for_resource(uri.clone()), name.to_owned()));
            }
        }
        for prompt in session.list_all_prompts().await.unwrap() {
            for arg in prompt.arguments.unwrap_or_default() {
                references.push((Reference::for_prompt(prompt.name.clone()), arg.name.clone()));
            }
        }
        assert!(!references.is_empty());
        for (reference, name) in references {
            for value in ["", &bravo.task[..3], &bravo.slug[..3], &MARK[..4]] {
                let completed = session
                    .complete(CompleteRequestParams::new(
                        reference.clone(),
                        ArgumentInfo::new(name.clone(), value),
                    ))
                    .await;
                let text = match completed {
                    Ok(result) => serde_json::to_string(&result).unwrap(),
                    Err(error) => error.to_string(),
                };
                assert_nothing_of_bravo(&format!("completion of {name}"), &text, &bravo);
                assert!(!text.contains(&bravo.task), "completion of {name}: {text}");
            }
        }
        let listed = crate::mcp::listed_names(&session).await;
        assert!(listed.contains(&"task_list".to_owned()));
        session.cancel().await.unwrap();
    }
    // The session in alpha wrote there, not in bravo.
    let bravo_tasks: Value = client
        .get(format!("{base}/api/v1/projects/bravo/tasks"))
        .bearer_auth(BRAVO)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(bravo_tasks["data"]["total"], 1);
}

/// `cairn` on `db` with `args`: its exit code and envelope.
fn cli(db: &std::path::Path, args: &[&str]) -> (Option<i32>, Value) {
    let out = crate::process_helpers::cairn_command()
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    let envelope = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stdout)));
    (out.status.code(), envelope)
}

#[test]
fn the_cli_makes_projects_and_works_in_the_one_project_names() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    let (code, made) = cli(&db, &["project", "create", "web", "--name", "Web app"]);
    assert_eq!(code, Some(0), "{made}");
    assert_eq!(made["data"]["name"], "Web app");
    let (code, _) = cli(
        &db,
        &["--project", "web", "task_create", "--title", "in web"],
    );
    assert_eq!(code, Some(0));
    let (_, in_web) = cli(&db, &["--project", "web", "task_list"]);
    assert_eq!(in_web["data"]["total"], 1);
    let (_, in_default) = cli(&db, &["task_list"]);
    assert_eq!(
        in_default["data"]["total"], 0,
        "default holds none of web's"
    );

    let (code, missing) = cli(&db, &["--project", "nope", "task_list"]);
    assert_eq!(code, Some(2), "fix the call");
    assert_eq!(missing["error"]["code"], "project_not_found");

    let (_, archived) = cli(&db, &["project", "update", "web", "--archive"]);
    assert_eq!(archived["data"]["archived"], true);
    let (code, refused) = cli(&db, &["--project", "web", "task_create", "--title", "no"]);
    assert_eq!(code, Some(1), "the deployment, not the call, must change");
    assert_eq!(refused["error"]["code"], "project_archived");
    let (_, listed) = cli(&db, &["project", "list"]);
    let keys: Vec<&str> = listed["data"]["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["default", "web"]);

    let (_, line) = cli(
        &db,
        &["token", "new", "web-bot", "write", "--projects", "web,docs"],
    );
    let line = line["data"]["line"].as_str().unwrap().to_owned();
    assert!(
        line.starts_with("web-bot write sha256:") && line.ends_with(" web,docs"),
        "{line}"
    );
}

#[test]
fn every_project_moves_with_one_dump_and_one_restore() {
    let dir = tempfile::tempdir().unwrap();
    let (from, to) = (dir.path().join("from.db"), dir.path().join("to.db"));
    cli(&from, &["project", "create", "web", "--name", "Web app"]);
    cli(&from, &["project", "create", "old"]);
    cli(&from, &["task_create", "--title", "in default"]);
    cli(
        &from,
        &["--project", "web", "task_create", "--title", "in web"],
    );
    cli(
        &from,
        &[
            "--project",
            "old",
            "note_write",
            "--title",
            "Kept",
            "--content",
            "x",
        ],
    );
    cli(&from, &["project", "update", "old", "--archive"]);

    let out = dir.path().join("dump");
    let out_arg = out.to_str().unwrap();
    let (code, dumped) = cli(&from, &["dump", "--all-projects", "--output", out_arg]);
    assert_eq!(code, Some(0), "{dumped}");
    assert_eq!(dumped["data"]["dumped"]["web"]["tasks"], 1);
    let (code, again) = cli(&from, &["dump", "--all-projects", "--output", out_arg]);
    assert_eq!(
        (code, &again["error"]["code"]),
        (Some(2), &json!("invalid_input")),
        "a folder that holds files is refused"
    );

    let (code, restored) = cli(&to, &["restore", "--all-projects", out_arg]);
    assert_eq!(code, Some(0), "{restored}");
    let (_, web) = cli(&to, &["--project", "web", "task_list"]);
    assert_eq!(web["data"]["items"][0]["title"], "in web");
    let (_, default) = cli(&to, &["task_list"]);
    assert_eq!(default["data"]["items"][0]["title"], "in default");
    let (_, old) = cli(&to, &["--project", "old", "note_list"]);
    assert_eq!(old["data"]["total"], 1);
    let (_, listed) = cli(&to, &["project", "list"]);
    let projects = listed["data"]["projects"].as_array().unwrap();
    let of = |key: &str| projects.iter().find(|p| p["key"] == key).unwrap().clone();
    assert_eq!(of("web")["name"], "Web app");
    assert_eq!(of("old")["archived"], true, "archived after its restore");
}

#[test]
fn every_projects_notes_export_as_a_vault_each_and_import_back() {
    let dir = tempfile::tempdir().unwrap();
    let (from, to) = (dir.path().join("from.db"), dir.path().join("to.db"));
    cli(&from, &["project", "create", "web"]);
    cli(
        &from,
        &["note_write", "--title", "Default note", "--content", "d"],
    );
    cli(
        &from,
        &[
            "--project",
            "web",
            "note_write",
            "--title",
            "Web note",
            "--content",
            "w",
        ],
    );
    let vaults = dir.path().join("vaults");
    let vaults_arg = vaults.to_str().unwrap();
    let (code, exported) = cli(
        &from,
        &["export", "--all-projects", "--markdown", vaults_arg],
    );
    assert_eq!(code, Some(0), "{exported}");
    assert!(vaults.join("web/notes/Web note.md").exists());
    assert!(vaults.join("default/notes/Default note.md").exists());

    let (code, imported) = cli(&to, &["import", "--all-projects", vaults_arg]);
    assert_eq!(code, Some(0), "{imported}");
    let (_, web) = cli(&to, &["--project", "web", "note_list"]);
    assert_eq!(web["data"]["items"][0]["title"], "Web note");
    let (_, default) = cli(&to, &["note_list"]);
    assert_eq!(default["data"]["total"], 1);
    assert_eq!(default["data"]["items"][0]["title"], "Default note");
}
