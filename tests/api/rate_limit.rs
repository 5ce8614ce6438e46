//! Rate limits per client: a burst over the limit gets 429 `rate_limited`
//! with `Retry-After` and the IETF `RateLimit` / `RateLimit-Policy` fields,
//! then service again once the bucket refills; tokens and addresses have
//! buckets of their own; health probes are exempt; MCP gets refusals in its
//! own shape; `X-Forwarded-For` counts only when trusted.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use cairn::auth::tokens::Tokens;
use cairn::http::HttpSettings;
use cairn::http::middleware::rate_limit::RateLimit;
use cairn::tools::{Cairn, Config};
use serde_json::{Value, json};

use crate::http_helpers::{TestApp, assert_error};

struct Server {
    base: String,
    _dir: tempfile::TempDir,
}

/// A gateway on a real socket (so it knows each peer's address).
async fn serve(settings: HttpSettings) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let store = cairn::store::open_sqlite(&dir.path().join("cairn.db")).unwrap();
    let cairn = Cairn::new(store, Config::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
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
    Server {
        base: format!("http://{addr}"),
        _dir: dir,
    }
}

fn limited(per_second: u32, burst: u32) -> HttpSettings {
    HttpSettings {
        rate_limit: RateLimit::new(per_second, Some(burst)),
        ..HttpSettings::default()
    }
}

fn header(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
}

async fn get(server: &Server, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = reqwest::Client::new().get(format!("{}{path}", server.base));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_over_the_limit_gets_429_with_every_header_then_service_again() {
    let server = serve(limited(2, 3)).await;
    for remaining in [2, 1, 0] {
        let ok = get(&server, "/api/v1/tasks", &[]).await;
        assert_eq!(ok.status(), 200);
        assert_eq!(
            header(&ok, "ratelimit-policy").as_deref(),
            Some("\"default\";q=3;w=2")
        );
        let state = header(&ok, "ratelimit").unwrap();
        assert!(
            state.starts_with(&format!("\"default\";r={remaining};t=")),
            "{state}"
        );
    }
    let refused = get(&server, "/api/v1/tasks", &[]).await;
    assert_eq!(refused.status(), 429);
    assert_eq!(header(&refused, "retry-after").as_deref(), Some("1"));
    assert_eq!(
        header(&refused, "ratelimit").as_deref(),
        Some("\"default\";r=0;t=1")
    );
    assert_eq!(
        header(&refused, "ratelimit-policy").as_deref(),
        Some("\"default\";q=3;w=2")
    );
    assert_eq!(
        header(&refused, "content-type").as_deref(),
        Some("application/json")
    );
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limited");
    assert_eq!(body["error"]["category"], "rate_limited");
    assert_eq!(body["error"]["retryable"], true);
    let wait = body["error"]["retry_after_ms"].as_u64().unwrap();
    assert!((1..=500).contains(&wait), "one unit at 2/s: {wait} ms");

    tokio::time::sleep(Duration::from_millis(wait + 50)).await;
    assert_eq!(get(&server, "/api/v1/tasks", &[]).await.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tokens_do_not_share_a_bucket() {
    let mut tokens = Tokens::default();
    tokens
        .add_env("alice:write:secret-a,bob:write:secret-b")
        .unwrap();
    let server = serve(HttpSettings {
        tokens,
        ..limited(1, 1)
    })
    .await;
    let alice = [("authorization", "Bearer secret-a")];
    let bob = [("authorization", "Bearer secret-b")];
    assert_eq!(get(&server, "/api/v1/tasks", &alice).await.status(), 200);
    assert_eq!(get(&server, "/api/v1/tasks", &alice).await.status(), 429);
    assert_eq!(get(&server, "/api/v1/tasks", &bob).await.status(), 200);
    assert_eq!(get(&server, "/api/v1/tasks", &bob).await.status(), 429);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_probes_are_never_limited_and_spend_nothing() {
    let server = serve(limited(1, 1)).await;
    for path in ["/api/v1/health", "/api/v1/health/ready"].repeat(5) {
        let probe = get(&server, path, &[]).await;
        assert_eq!(probe.status(), 200, "{path}");
        assert!(header(&probe, "ratelimit").is_none(), "{path}");
    }
    let first = get(&server, "/api/v1/tasks", &[]).await;
    assert_eq!(
        first.status(),
        200,
        "the probes took nothing from the bucket"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_limit_nothing_is_refused_and_no_field_is_sent() {
    assert_eq!(RateLimit::new(0, Some(5)), None, "0 turns limits off");
    let server = serve(HttpSettings::default()).await;
    for _ in 0..30 {
        let ok = get(&server, "/api/v1/tasks", &[]).await;
        assert_eq!(ok.status(), 200);
        assert!(header(&ok, "ratelimit").is_none());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_address_is_ignored_unless_trusted() {
    let server = serve(limited(1, 1)).await;
    let from = |ip: &'static str| [("x-forwarded-for", ip)];
    assert_eq!(
        get(&server, "/api/v1/tasks", &from("1.1.1.1"))
            .await
            .status(),
        200
    );
    assert_eq!(
        get(&server, "/api/v1/tasks", &from("2.2.2.2"))
            .await
            .status(),
        429,
        "untrusted: both come from the same peer"
    );

    let trusted = serve(HttpSettings {
        trust_forwarded_for: true,
        ..limited(1, 1)
    })
    .await;
    assert_eq!(
        get(&trusted, "/api/v1/tasks", &from("1.1.1.1"))
            .await
            .status(),
        200
    );
    assert_eq!(
        get(&trusted, "/api/v1/tasks", &from("2.2.2.2"))
            .await
            .status(),
        200
    );
    assert_eq!(
        get(&trusted, "/api/v1/tasks", &from("9.9.9.9, 1.1.1.1"))
            .await
            .status(),
        429,
        "the proxy's own entry (the last) counts, not what the client wrote"
    );
}

/// One JSON-RPC POST to `/mcp`: the response's status, content type and body text.
async fn mcp_post(server: &Server, session: Option<&str>, message: Value) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(format!("{}/mcp", server.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(message.to_string());
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_over_the_limit_gets_a_tool_error_or_a_json_rpc_error_with_the_envelope() {
    let server = serve(limited(1, 3)).await;
    let init = mcp_post(
        &server,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    assert_eq!(init.status(), 200);
    let session = header(&init, "mcp-session-id").expect("a session");
    let _ = init.text().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        mcp_post(&server, Some(&session), initialized)
            .await
            .status(),
        202
    );
    let call = |id: u32| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "task_list", "arguments": {}}})
    };
    let served = mcp_post(&server, Some(&session), call(2)).await;
    assert_eq!(served.status(), 200);
    let _ = served.text().await;

    let refused = mcp_post(&server, Some(&session), call(3)).await;
    assert_eq!(refused.status(), 200, "an MCP answer, not an HTTP failure");
    assert_eq!(header(&refused, "retry-after").as_deref(), Some("1"));
    assert!(header(&refused, "ratelimit").unwrap().contains("r=0"));
    let answer: Value = refused.json().await.unwrap();
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["result"]["isError"], true);
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    let envelope: Value = serde_json::from_str(text).unwrap();
    assert_eq!(envelope["ok"], false);
    assert_eq!(envelope["error"]["code"], "rate_limited");
    assert_eq!(envelope["meta"]["tool"], "task_list");
    assert!(envelope["error"]["retry_after_ms"].as_u64().unwrap() > 0);

    let list = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"});
    let answer: Value = mcp_post(&server, Some(&session), list)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(answer["id"], 4);
    assert!(answer["error"]["code"].is_i64(), "{answer}");
    assert_eq!(answer["error"]["data"]["error"]["code"], "rate_limited");
}

#[tokio::test]
async fn a_429_made_by_any_layer_is_the_rate_limited_envelope() {
    let extra = Router::new().route(
        "/api/v1/test/throttled",
        axum::routing::get(|| async { StatusCode::TOO_MANY_REQUESTS }),
    );
    let app = TestApp::with(HttpSettings::default(), extra);
    let res = app.get("/api/v1/test/throttled").await;
    assert_error(&res, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    assert_eq!(res.header("retry-after").as_deref(), Some("1"));
    assert_eq!(res.body["error"]["retryable"], true);
}

/// `cairn serve` on every address with one named token and `flags`: the
/// `RateLimit-Policy` of an authenticated read.
async fn public_policy(flags: &[&str]) -> Option<String> {
    use crate::process_helpers::{cairn_command, free_port, within};
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut child = cairn_command()
        .args(["serve", "--bind", &format!("0.0.0.0:{port}")])
        .args(["--allowed-hosts", "127.0.0.1"])
        .arg("--db")
        .arg(dir.path().join("cairn.db"))
        .args(flags)
        .env("CAIRN_TOKENS", "bot:read:bot-secret")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/api/v1/tasks");
    let client = reqwest::Client::new();
    let answer = within(Duration::from_secs(30), async || {
        client.get(&url).bearer_auth("bot-secret").send().await.ok()
    })
    .await
    .expect("serve answers");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        answer.status(),
        200,
        "a named token alone opens a public bind"
    );
    header(&answer, "ratelimit-policy")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_bind_limits_by_default_unless_told_zero() {
    assert_eq!(
        public_policy(&[]).await.as_deref(),
        Some("\"default\";q=100;w=2"),
        "50 a second, bursts of 100"
    );
    assert_eq!(public_policy(&["--rate-limit", "0"]).await, None);
    assert_eq!(
        public_policy(&["--rate-limit", "5", "--rate-limit-burst", "20"])
            .await
            .as_deref(),
        Some("\"default\";q=20;w=4")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_writes_count_against_the_token_bucket() {
    let mut tokens = Tokens::default();
    tokens.add_env("reader:read:secret-r").unwrap();
    let server = serve(HttpSettings {
        tokens,
        ..limited(1, 1)
    })
    .await;
    let write = reqwest::Client::new()
        .post(format!("{}/api/v1/tasks", server.base))
        .bearer_auth("secret-r")
        .json(&json!({"title": "no"}))
        .send()
        .await
        .unwrap();
    assert_eq!(write.status(), 403);
    assert!(header(&write, "ratelimit").is_some());
    let read = get(
        &server,
        "/api/v1/tasks",
        &[("authorization", "Bearer secret-r")],
    )
    .await;
    assert_eq!(read.status(), 429, "the 403 took the bucket's one unit");
}
