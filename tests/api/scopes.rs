//! Scoped tokens: several named bearer tokens, each `read`, `write` or
//! `admin`. A `read` token that writes gets 403 `permission_denied` on REST
//! and an isError tool result over MCP, where its `tools/list` shows only
//! the reading tools; `/metrics` needs `admin`; a tokens file stores only
//! hashes; a wrong secret is 401; no log line carries a secret.

use std::process::Stdio;

use axum::http::StatusCode;
use cairn::auth::tokens::{Tokens, hash_secret};
use cairn::http::HttpSettings;
use cairn::tools::{Effect, REGISTRY};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::http_helpers::{TestApp, assert_error};
use crate::mcp::{envelope_of, fresh_cairn};
use crate::process_helpers::{cairn_command, serve_with_json_log};

pub const READ: &str = "reader-secret-1";
const WRITE: &str = "writer-secret-2";
const ADMIN: &str = "admin-secret-3";

fn scoped() -> HttpSettings {
    let mut tokens = Tokens::default();
    tokens
        .add_env(&format!(
            "reader:read:{READ},writer:write:{WRITE},ops:admin:{ADMIN}"
        ))
        .unwrap();
    HttpSettings {
        tokens,
        ..HttpSettings::default()
    }
}

fn bearer(secret: &str) -> String {
    format!("Bearer {secret}")
}

#[tokio::test]
async fn a_read_token_reads_but_its_writes_are_permission_denied() {
    let app = TestApp::with(scoped(), axum::Router::new());
    let list = app
        .send(TestApp::request("GET", "/api/v1/tasks").header("authorization", &bearer(READ)))
        .await;
    assert_eq!(list.status, StatusCode::OK);

    let create = app
        .send(
            TestApp::request("POST", "/api/v1/tasks")
                .header("authorization", &bearer(READ))
                .json(&json!({"title": "not allowed"})),
        )
        .await;
    assert_error(&create, StatusCode::FORBIDDEN, "permission_denied");
    assert_eq!(create.body["error"]["category"], "permission");
    assert_eq!(create.body["error"]["details"]["token"], "reader");
    assert_eq!(create.body["error"]["details"]["scope"], "read");
    assert_eq!(create.body["error"]["details"]["required_scope"], "write");

    let written = app
        .send(
            TestApp::request("POST", "/api/v1/tasks")
                .header("authorization", &bearer(WRITE))
                .json(&json!({"title": "allowed"})),
        )
        .await;
    assert_eq!(written.status, StatusCode::CREATED);
    let all = app
        .send(TestApp::request("GET", "/api/v1/tasks").header("authorization", &bearer(READ)))
        .await;
    assert_eq!(
        all.body["data"]["total"], 1,
        "the refused write wrote nothing"
    );
}

#[tokio::test]
async fn metrics_need_an_admin_token() {
    let app = TestApp::with(scoped(), axum::Router::new());
    let as_writer = app
        .send(TestApp::request("GET", "/metrics").header("authorization", &bearer(WRITE)))
        .await;
    assert_error(&as_writer, StatusCode::FORBIDDEN, "permission_denied");
    assert_eq!(
        as_writer.body["error"]["details"]["required_scope"],
        "admin"
    );
    let as_admin = app
        .send_raw(TestApp::request("GET", "/metrics").header("authorization", &bearer(ADMIN)))
        .await;
    assert_eq!(as_admin.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_wrong_or_missing_secret_is_unauthorized() {
    let app = TestApp::with(scoped(), axum::Router::new());
    for auth in [
        bearer("reader-secret-"),
        bearer(&format!("{READ}x")),
        String::new(),
    ] {
        let mut request = TestApp::request("GET", "/api/v1/tasks");
        if !auth.is_empty() {
            request = request.header("authorization", &auth);
        }
        let res = app.send(request).await;
        assert_error(&res, StatusCode::UNAUTHORIZED, "unauthorized");
        assert_eq!(res.header("www-authenticate").as_deref(), Some("Bearer"));
    }
}

#[tokio::test]
async fn the_default_token_stays_an_admin_token_beside_named_ones() {
    let app = TestApp::with(
        HttpSettings {
            token: Some("plain-admin".into()),
            ..scoped()
        },
        axum::Router::new(),
    );
    let metrics = app
        .send_raw(TestApp::request("GET", "/metrics").header("authorization", "Bearer plain-admin"))
        .await;
    assert_eq!(metrics.status(), StatusCode::OK);
    let read = app
        .send(TestApp::request("GET", "/api/v1/tasks").header("authorization", &bearer(READ)))
        .await;
    assert_eq!(read.status, StatusCode::OK);
}

/// The gateway with MCP at `/mcp`, on a real socket, with the scoped tokens.
pub async fn gateway() -> (String, tempfile::TempDir) {
    gateway_with(scoped()).await
}

/// The gateway on a real socket, as `cairn serve` runs it with `settings`;
/// the URL of its `/mcp`.
pub async fn gateway_with(settings: HttpSettings) -> (String, tempfile::TempDir) {
    let (cairn, dir) = fresh_cairn(cairn::tools::Config::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = cairn::http::app(
        cairn,
        HttpSettings {
            bind: addr,
            ..settings
        },
    );
    tokio::spawn(cairn::http::serve_listener(
        listener,
        app,
        std::future::pending(),
    ));
    (format!("http://{addr}/mcp"), dir)
}

pub async fn mcp_client(
    url: &str,
    secret: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(secret);
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("initialize")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_mcp_a_read_token_sees_only_read_tools_and_cannot_call_a_write_tool() {
    let (url, _dir) = gateway().await;
    let reader = mcp_client(&url, READ).await;
    let listed = crate::mcp::listed_names(&reader).await;
    let reading: Vec<String> = REGISTRY
        .iter()
        .filter(|d| d.effect == Effect::Reads)
        .map(|d| d.name.to_owned())
        .collect();
    assert_eq!(listed, reading);

    let params = CallToolRequestParams::new("task_create")
        .with_arguments(json!({"title": "no"}).as_object().unwrap().clone());
    let result = reader
        .call_tool(params.clone())
        .await
        .expect("a tool result");
    assert_eq!(result.is_error, Some(true));
    let envelope = envelope_of(&result);
    assert_eq!(envelope["error"]["code"], "permission_denied");
    assert_eq!(envelope["error"]["details"]["required_scope"], "write");
    assert_eq!(envelope["meta"]["tool"], "task_create");
    let read = reader
        .call_tool(CallToolRequestParams::new("task_list"))
        .await
        .unwrap();
    assert_eq!(
        envelope_of(&read)["data"]["total"],
        0,
        "nothing was written"
    );

    let writer = mcp_client(&url, WRITE).await;
    assert_eq!(writer.list_all_tools().await.unwrap().len(), REGISTRY.len());
    let created = writer.call_tool(params).await.unwrap();
    assert_eq!(envelope_of(&created)["ok"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tokens_file_with_hashed_secrets_works_and_no_secret_is_logged() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens");
    std::fs::write(
        &file,
        format!(
            "# name scope hash\nreader read {}\nwriter write {}\n",
            hash_secret(READ),
            hash_secret(WRITE)
        ),
    )
    .unwrap();
    let log = dir.path().join("stderr.log");
    let (mut child, base) = serve_with_json_log(
        &dir.path().join("cairn.db"),
        &log,
        &[("CAIRN_LOG", "debug"), ("CAIRN_TOKEN", ADMIN)],
        &["--tokens-file".as_ref(), file.as_os_str()],
    )
    .await;
    let client = reqwest::Client::new();
    let send = |method: reqwest::Method, path: &str, secret: &str| {
        client
            .request(method, format!("{base}{path}"))
            .bearer_auth(secret)
            .json(&json!({"title": "t"}))
            .send()
    };
    use reqwest::Method;
    assert_eq!(
        send(Method::POST, "/api/v1/tasks", WRITE)
            .await
            .unwrap()
            .status(),
        201
    );
    assert_eq!(
        send(Method::GET, "/api/v1/tasks", READ)
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        send(Method::POST, "/api/v1/tasks", READ)
            .await
            .unwrap()
            .status(),
        403
    );
    assert_eq!(
        send(Method::GET, "/api/v1/tasks", "guessed")
            .await
            .unwrap()
            .status(),
        401
    );
    assert_eq!(
        send(Method::GET, "/metrics", ADMIN).await.unwrap().status(),
        200
    );
    // MCP too: its request logging (at debug) must not show the header.
    let init = client
        .post(format!("{base}/mcp"))
        .bearer_auth(WRITE)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(init.status(), 200);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = init.text().await;
    for message in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ] {
        let answer = client
            .post(format!("{base}/mcp"))
            .bearer_auth(WRITE)
            .header("mcp-session-id", &session)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(message)
            .send()
            .await
            .unwrap();
        assert!(answer.status().is_success());
        let _ = answer.text().await;
    }
    let hashed = hash_secret(READ);
    assert_eq!(
        send(Method::GET, "/api/v1/tasks", &hashed)
            .await
            .unwrap()
            .status(),
        401,
        "the stored hash is not a secret that works"
    );

    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    for secret in [READ, WRITE, ADMIN] {
        assert!(!text.contains(secret), "a line carries a secret:\n{text}");
    }
    assert!(
        text.contains("tools/list") || text.contains("ListTools"),
        "MCP requests were logged at debug:\n{text}"
    );
    let lines: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let named = |name: &str| {
        lines.iter().any(|l| {
            l["spans"]
                .as_array()
                .is_some_and(|s| s.iter().any(|span| span["token"] == name))
        })
    };
    assert!(
        named("writer") && named("reader"),
        "the name is logged:\n{text}"
    );
}

#[test]
fn a_tokens_file_with_a_plain_secret_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens");
    std::fs::write(&file, "ci read plain-text-secret\n").unwrap();
    let envelope = crate::http_helpers::serve_refuses(
        &["--tokens-file", file.to_str().unwrap()],
        "tokens_file",
    );
    let text = envelope.to_string();
    assert!(text.contains("line 1"), "{text}");
    assert!(!text.contains("plain-text-secret"), "{text}");
}

/// `cairn token ARGS` with `stdin`: its one envelope.
fn token_command(args: &[&str], stdin: &str) -> Value {
    use std::io::Write;
    let mut child = cairn_command()
        .arg("token")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn cairn_token_makes_file_lines_that_accept_the_secret() {
    let made = token_command(&["new", "ci-reader", "read"], "");
    assert_eq!(made["ok"], true, "{made}");
    let secret = made["data"]["secret"].as_str().unwrap();
    assert!(secret.len() >= 40, "a long random secret");
    let mut tokens = Tokens::default();
    tokens
        .add_file(made["data"]["line"].as_str().unwrap())
        .unwrap();
    let caller = tokens.caller_for(secret).unwrap();
    assert_eq!(&*caller.name, "ci-reader");

    let hashed = token_command(&["hash", "bot", "write"], "my-own-secret\n");
    assert_eq!(
        hashed["data"]["line"],
        format!("bot write {}", hash_secret("my-own-secret"))
    );
    assert!(hashed["data"].get("secret").is_none(), "never echoed");
    let refused = token_command(&["new", "x", "root"], "");
    assert_eq!(refused["error"]["code"], "invalid_input");
}
