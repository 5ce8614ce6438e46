//! Local means local: a foreign `Host` is refused on every surface that serves
//! HTTP (DNS rebinding), a foreign browser `Origin` on every writing route and
//! on MCP (cross-site requests), and every response carries the browser
//! hardening headers.

use axum::Router;
use axum::http::StatusCode;
use http_body_util::BodyExt;
use serde_json::json;

use crate::http_helpers::{TestApp, TestRequest, assert_error, serve_refuses};
use cairn::http::HttpSettings;

const OWN_HOST: &str = "127.0.0.1:8787";
const FOREIGN_HOST: &str = "evil.example.com";
const FOREIGN_ORIGIN: &str = "http://evil.example.com";

/// A gateway with a built SPA, so that `/` serves a page.
struct Served {
    app: TestApp,
    _web: tempfile::TempDir,
}

fn served(settings: HttpSettings) -> Served {
    let web = tempfile::tempdir().unwrap();
    std::fs::write(
        web.path().join("index.html"),
        "<!doctype html><title>cairn</title>",
    )
    .unwrap();
    let settings = HttpSettings {
        web_dir: Some(web.path().to_owned()),
        ..settings
    };
    Served {
        app: TestApp::with(settings, Router::new()),
        _web: web,
    }
}

fn default_served() -> Served {
    served(HttpSettings::default())
}

/// A GET naming `host`.
fn get_as(path: &str, host: &str) -> TestRequest {
    TestApp::request("GET", path).header("host", host)
}

fn mcp_initialize() -> TestRequest {
    TestApp::request("POST", "/mcp")
        .header("accept", "application/json, text/event-stream")
        .json(&json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "host-guard-test", "version": "1"}
            }
        }))
}

/// One request to each surface that serves HTTP: API, MCP, SPA, Swagger UI, document.
fn every_surface() -> Vec<(&'static str, TestRequest)> {
    vec![
        ("/api", TestApp::request("GET", "/api/v1/tasks")),
        ("/mcp", mcp_initialize()),
        ("/", TestApp::request("GET", "/")),
        ("/docs", TestApp::request("GET", "/docs/")),
        ("/openapi.json", TestApp::request("GET", "/openapi.json")),
    ]
}

/// Each surface answers a request naming `host` with `status`.
async fn assert_every_surface(app: &TestApp, host: &str, status: StatusCode) {
    for (surface, req) in every_surface() {
        let res = app.send_raw(req.header("host", host)).await;
        assert_eq!(res.status(), status, "{surface} as {host}");
    }
}

async fn body_text(res: axum::response::Response) -> String {
    String::from_utf8(res.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
}

#[tokio::test]
async fn a_foreign_host_is_refused_on_every_surface() {
    let s = default_served();
    assert_every_surface(&s.app, FOREIGN_HOST, StatusCode::FORBIDDEN).await;
}

#[tokio::test]
async fn a_foreign_host_is_an_envelope_on_the_api() {
    let s = default_served();
    let res = s.app.send(get_as("/api/v1/tasks", FOREIGN_HOST)).await;
    assert_error(&res, StatusCode::FORBIDDEN, "host_not_allowed");
    assert_eq!(res.body["error"]["category"], "permission");
    assert_eq!(res.body["error"]["details"]["host"], FOREIGN_HOST);
    assert!(res.header("x-request-id").is_some());
}

#[tokio::test]
async fn a_foreign_host_is_a_plain_page_elsewhere() {
    let s = default_served();
    for path in ["/", "/board", "/docs/", "/openapi.json"] {
        let res = s.app.send_raw(get_as(path, FOREIGN_HOST)).await;
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{path}");
        assert_eq!(
            res.headers()["content-type"],
            "text/plain; charset=utf-8",
            "{path}"
        );
        assert!(body_text(res).await.contains("host_not_allowed"), "{path}");
    }
}

#[tokio::test]
async fn a_foreign_host_is_refused_before_any_handler_writes() {
    let s = default_served();
    let res = s
        .app
        .send(
            TestApp::request("POST", "/api/v1/tasks")
                .header("host", FOREIGN_HOST)
                .json(&json!({"title": "rebound"})),
        )
        .await;
    assert_error(&res, StatusCode::FORBIDDEN, "host_not_allowed");
    let list = s.app.get("/api/v1/tasks").await;
    assert_eq!(list.body["data"]["total"], 0, "nothing was written");
}

#[tokio::test]
async fn a_foreign_host_is_refused_even_with_the_token() {
    let s = served(HttpSettings {
        token: Some("s3cret".into()),
        ..HttpSettings::default()
    });
    let res = s
        .app
        .send(get_as("/api/v1/tasks", FOREIGN_HOST).header("authorization", "Bearer s3cret"))
        .await;
    assert_error(&res, StatusCode::FORBIDDEN, "host_not_allowed");
}

#[tokio::test]
async fn the_loopback_names_on_the_bound_port_are_served_everywhere() {
    let s = default_served();
    for host in ["localhost:8787", "127.0.0.1:8787", "[::1]:8787"] {
        assert_every_surface(&s.app, host, StatusCode::OK).await;
    }
}

#[tokio::test]
async fn another_port_is_another_host() {
    let s = default_served();
    let res = s.app.send(get_as("/api/v1/tasks", "localhost:9999")).await;
    assert_error(&res, StatusCode::FORBIDDEN, "host_not_allowed");
}

#[tokio::test]
async fn health_probes_answer_allowed_hosts_only() {
    let s = default_served();
    for path in ["/api/v1/health", "/api/v1/health/ready"] {
        let ok = s.app.send(get_as(path, OWN_HOST)).await;
        assert_eq!(ok.status, StatusCode::OK, "{path}");
        let refused = s.app.send(get_as(path, FOREIGN_HOST)).await;
        assert_error(&refused, StatusCode::FORBIDDEN, "host_not_allowed");
    }
}

#[tokio::test]
async fn allowed_hosts_adds_a_name_on_every_surface() {
    let s = served(HttpSettings {
        allowed_hosts: vec!["evil.example.com".parse().unwrap()],
        ..HttpSettings::default()
    });
    for host in [FOREIGN_HOST, "evil.example.com:8787", OWN_HOST] {
        assert_every_surface(&s.app, host, StatusCode::OK).await;
    }
    let res = s
        .app
        .send(get_as("/api/v1/tasks", "other.example.com"))
        .await;
    assert_error(&res, StatusCode::FORBIDDEN, "host_not_allowed");
}

#[tokio::test]
async fn a_public_bind_answers_only_to_the_configured_names() {
    let s = served(HttpSettings {
        bind: "0.0.0.0:8787".parse().unwrap(),
        allowed_hosts: vec!["cairn.example.com".parse().unwrap()],
        ..HttpSettings::default()
    });
    let ok = s
        .app
        .send(get_as("/api/v1/health", "cairn.example.com"))
        .await;
    assert_eq!(ok.status, StatusCode::OK);
    let refused = s.app.send(get_as("/api/v1/health", OWN_HOST)).await;
    assert_error(&refused, StatusCode::FORBIDDEN, "host_not_allowed");
}

/// Every operation of the document that is not a GET, with its path filled in.
fn writing_routes() -> Vec<(String, String)> {
    let doc = serde_json::to_value(cairn::http::openapi::document()).unwrap();
    let mut routes = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if method != "get" {
                let path = path.replace("{id}", "abcdef0123456789");
                routes.push((method.to_uppercase(), path));
            }
        }
    }
    assert!(routes.len() >= 10, "the document lists the writing routes");
    routes
}

fn write_from(method: &str, path: &str, origin: Option<&str>) -> TestRequest {
    let req = TestApp::request(method, path)
        .header("host", OWN_HOST)
        .json(&json!({"title": "cross-site"}));
    match origin {
        Some(origin) => req.header("origin", origin),
        None => req,
    }
}

#[tokio::test]
async fn a_foreign_origin_is_refused_on_every_writing_route() {
    let s = default_served();
    for (method, path) in writing_routes() {
        let res = s
            .app
            .send(write_from(&method, &path, Some(FOREIGN_ORIGIN)))
            .await;
        assert_error(&res, StatusCode::FORBIDDEN, "origin_not_allowed");
        assert_eq!(res.body["error"]["details"]["origin"], FOREIGN_ORIGIN);
        // The same call without an Origin reaches its handler.
        let res = s.app.send(write_from(&method, &path, None)).await;
        assert_ne!(
            res.body["error"]["code"], "origin_not_allowed",
            "{method} {path}"
        );
    }
    assert_eq!(s.app.get("/api/v1/tasks").await.body["data"]["total"], 1);
}

#[tokio::test]
async fn a_foreign_origin_is_refused_whatever_the_content_type() {
    let s = default_served();
    for (content_type, origin) in [("text/plain", FOREIGN_ORIGIN), ("application/json", "null")] {
        let res = s
            .app
            .send(
                TestApp::request("POST", "/api/v1/tasks")
                    .header("host", OWN_HOST)
                    .header("origin", origin)
                    .header("content-type", content_type)
                    .body_text(r#"{"title": "simple request"}"#),
            )
            .await;
        assert_error(&res, StatusCode::FORBIDDEN, "origin_not_allowed");
    }
}

#[tokio::test]
async fn same_origin_listed_and_origin_less_writes_are_served() {
    let s = served(HttpSettings {
        cors_origins: vec!["http://app.example".parse().unwrap()],
        ..HttpSettings::default()
    });
    for origin in [
        Some("http://127.0.0.1:8787"),
        Some("http://localhost:8787"),
        Some("http://app.example"),
        None,
    ] {
        let res = s
            .app
            .send(write_from("POST", "/api/v1/tasks", origin))
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{origin:?}: {}", res.body);
    }
    // A page on another local port is another origin.
    let res = s
        .app
        .send(write_from(
            "POST",
            "/api/v1/tasks",
            Some("http://localhost:5173"),
        ))
        .await;
    assert_error(&res, StatusCode::FORBIDDEN, "origin_not_allowed");
}

#[tokio::test]
async fn reads_from_a_foreign_origin_are_served_without_cors_headers() {
    let s = default_served();
    let res = s
        .app
        .send(get_as("/api/v1/tasks", OWN_HOST).header("origin", FOREIGN_ORIGIN))
        .await;
    assert_eq!(res.status, StatusCode::OK);
    assert!(res.header("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn a_foreign_origin_is_refused_on_mcp_whatever_the_method() {
    let s = default_served();
    let requests = [
        mcp_initialize(),
        TestApp::request("GET", "/mcp").header("accept", "text/event-stream"),
        TestApp::request("DELETE", "/mcp"),
    ];
    for req in requests {
        let res = s
            .app
            .send_raw(
                req.header("host", OWN_HOST)
                    .header("origin", FOREIGN_ORIGIN),
            )
            .await;
        assert_eq!(res.status(), StatusCode::FORBIDDEN);
        assert!(body_text(res).await.contains("origin_not_allowed"));
    }
}

#[tokio::test]
async fn mcp_serves_its_own_origin_and_origin_less_clients() {
    let s = default_served();
    for origin in [Some("http://localhost:8787"), None] {
        let mut req = mcp_initialize().header("host", OWN_HOST);
        if let Some(origin) = origin {
            req = req.header("origin", origin);
        }
        let res = s.app.send_raw(req).await;
        assert_eq!(res.status(), StatusCode::OK, "{origin:?}");
    }
}

#[tokio::test]
async fn every_response_carries_the_hardening_headers() {
    let s = default_served();
    let requests = [
        TestApp::request("GET", "/"),
        TestApp::request("GET", "/api/v1/tasks"),
        TestApp::request("GET", "/api/v1/nope"),
        TestApp::request("GET", "/docs/"),
        TestApp::request("GET", "/openapi.json"),
        get_as("/", FOREIGN_HOST),
        get_as("/api/v1/tasks", FOREIGN_HOST),
        mcp_initialize(),
    ];
    for req in requests {
        let res = s.app.send_raw(req).await;
        let h = res.headers();
        let status = res.status();
        assert_eq!(h["x-content-type-options"], "nosniff", "{status}");
        assert_eq!(h["referrer-policy"], "no-referrer", "{status}");
        assert_eq!(h["cross-origin-opener-policy"], "same-origin", "{status}");
        assert_eq!(h["x-frame-options"], "DENY", "{status}");
        assert!(h.contains_key("content-security-policy"), "{status}");
        // How to cache it, on each: the SPA's files say their own.
        assert!(h.contains_key("cache-control"), "{status}");
    }
}

#[tokio::test]
async fn answers_that_say_nothing_of_caching_are_revalidated() {
    // The SPA's hashed files say their own (`spa::a_hashed_asset_is_immutable…`).
    let s = default_served();
    for path in ["/api/v1/tasks", "/api/v1/nope", "/openapi.json", "/"] {
        let res = s.app.send_raw(get_as(path, OWN_HOST)).await;
        assert_eq!(res.headers()["cache-control"], "no-cache", "{path}");
    }
}

fn directives(res: &axum::response::Response) -> Vec<String> {
    res.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .split(';')
        .map(|d| d.trim().to_owned())
        .collect()
}

#[tokio::test]
async fn the_spa_policy_allows_scripts_and_styles_from_self_only() {
    let s = default_served();
    let res = s.app.send_raw(TestApp::request("GET", "/")).await;
    let policy = directives(&res);
    for directive in [
        "script-src 'self'",
        "style-src 'self'",
        "object-src 'none'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ] {
        assert!(
            policy.iter().any(|d| d == directive),
            "{directive} in {policy:?}"
        );
    }
    assert!(
        !policy.iter().any(|d| d.contains("unsafe")),
        "nothing unsafe in {policy:?}"
    );
}

#[tokio::test]
async fn answers_that_are_never_documents_let_nothing_load_or_frame_them() {
    let s = default_served();
    let requests = [
        TestApp::request("GET", "/api/v1/tasks"),
        TestApp::request("GET", "/api/v1/nope"),
        TestApp::request("HEAD", "/api/v1/tasks"),
        TestApp::request("GET", "/metrics"),
        get_as("/api/v1/tasks", FOREIGN_HOST),
        mcp_initialize(),
    ];
    for req in requests {
        let res = s.app.send_raw(req).await;
        assert_eq!(
            directives(&res),
            ["default-src 'none'", "frame-ancestors 'none'"],
            "{}",
            res.status()
        );
    }
    // What the SPA serves keeps the SPA's policy, an unknown page and a
    // refused one too (`/api` only names the API when it is a whole segment).
    for req in [
        TestApp::request("GET", "/tasks/abc"),
        TestApp::request("GET", "/apiary"),
        get_as("/", FOREIGN_HOST),
    ] {
        let res = s.app.send_raw(req).await;
        assert!(
            directives(&res).contains(&"script-src 'self'".to_owned()),
            "{}",
            res.status()
        );
    }
}

#[tokio::test]
async fn swagger_ui_has_its_own_policy_without_unsafe_sources() {
    let s = default_served();
    let res = s.app.send_raw(TestApp::request("GET", "/docs/")).await;
    let policy = directives(&res);
    let style = policy.iter().find(|d| d.starts_with("style-src")).unwrap();
    assert!(
        style.contains("'sha256-") && !style.contains("unsafe"),
        "inline style by hash only: {style}"
    );
    assert!(policy.iter().any(|d| d == "frame-ancestors 'none'"));
    assert!(policy.iter().any(|d| d == "object-src 'none'"));
    assert!(
        !policy
            .iter()
            .any(|d| d.starts_with("script-src") && d.contains("unsafe")),
        "no unsafe script source in {policy:?}"
    );
}

#[test]
fn serve_refuses_a_public_bind_without_allowed_hosts() {
    let envelope = serve_refuses(
        &["--bind", "0.0.0.0:0", "--token", "s3cret"],
        "allowed_hosts",
    );
    let message = envelope["error"]["message"].as_str().unwrap();
    assert!(message.contains("CAIRN_ALLOWED_HOSTS"), "{message}");
}

#[test]
fn serve_refuses_an_allowed_host_that_is_not_a_host() {
    serve_refuses(
        &["--allowed-hosts", "http://cairn.example.com/"],
        "allowed_hosts",
    );
}
