//! The REST gateway's own behaviour: every answer is one of the two JSON
//! shapes, framework errors included, with a request id on every response.

use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::http_helpers::{TestApp, assert_error, serve_binary, serve_refuses};
use cairn::http::HttpSettings;
use cairn::http::semantics::extract::ApiJson;

#[tokio::test]
async fn health_answers_data_and_meta_with_the_request_id() {
    let app = TestApp::new();
    let res = app.get("/api/v1/health").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body["data"]["status"], "ok");
    let request_id = res.header("x-request-id").expect("x-request-id");
    assert_eq!(res.body["meta"]["request_id"], request_id);
    assert_eq!(res.body["meta"]["tool"], "health");
    assert!(res.body.get("ok").is_none(), "REST bodies carry no `ok`");
}

#[tokio::test]
async fn a_client_request_id_is_echoed_everywhere() {
    let app = TestApp::new();
    let res = app
        .send(TestApp::request("GET", "/api/v1/nope").header("x-request-id", "client-id-42"))
        .await;
    assert_eq!(res.header("x-request-id").as_deref(), Some("client-id-42"));
    assert_eq!(res.body["error"]["request_id"], "client-id-42");
}

#[tokio::test]
async fn unknown_routes_are_route_not_found() {
    let app = TestApp::new();
    let res = app.get("/api/v1/nope").await;
    assert_error(&res, StatusCode::NOT_FOUND, "route_not_found");
    assert_eq!(res.body["error"]["details"]["path"], "/api/v1/nope");
}

#[tokio::test]
async fn wrong_methods_are_method_not_allowed_with_allow() {
    let app = TestApp::new();
    let res = app.send(TestApp::request("DELETE", "/api/v1/health")).await;
    assert_error(&res, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
    assert_eq!(
        res.body["error"]["details"]["allowed"],
        json!(["GET", "HEAD", "OPTIONS"])
    );
    assert_eq!(res.header("allow").as_deref(), Some("GET, HEAD, OPTIONS"));
}

#[tokio::test]
async fn options_says_what_a_route_allows_and_nothing_for_an_unknown_path() {
    let app = TestApp::new();
    let id = crate::openapi_truth::create_task(&app).await;
    for (path, allow) in [
        (format!("/api/v1/tasks/{id}"), "GET, HEAD, PATCH, OPTIONS"),
        ("/api/v1/tasks".to_owned(), "POST, GET, HEAD, OPTIONS"),
        ("/api/v1/health".to_owned(), "GET, HEAD, OPTIONS"),
        ("/".to_owned(), "GET, HEAD, OPTIONS"),
    ] {
        let res = app.send_raw(TestApp::request("OPTIONS", &path)).await;
        assert_eq!(res.status(), StatusCode::NO_CONTENT, "{path}");
        assert_eq!(res.headers()[header::ALLOW], allow, "{path}");
        assert!(res.headers().get(header::CONTENT_TYPE).is_none(), "{path}");
        assert!(res.headers().get("x-request-id").is_some(), "{path}");
        let patch = res.headers().get("accept-patch");
        if allow.contains("PATCH") {
            assert_eq!(patch.unwrap(), "application/json", "{path}");
        } else {
            assert!(patch.is_none(), "{path}");
        }
    }
    let res = app.send(TestApp::request("OPTIONS", "/api/v1/nope")).await;
    assert_error(&res, StatusCode::NOT_FOUND, "route_not_found");
    // The server as a whole: every method some route takes.
    let res = app.send_raw(TestApp::request("OPTIONS", "*")).await;
    assert_eq!(res.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        res.headers()[header::ALLOW],
        "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"
    );
}

#[tokio::test]
async fn a_preflight_is_still_the_cors_layers() {
    let app = allowing_app_example();
    let res = app
        .send_raw(
            TestApp::request("OPTIONS", "/api/v1/tasks")
                .header("origin", "http://app.example")
                .header("access-control-request-method", "POST"),
        )
        .await;
    assert!(res.status().is_success(), "{}", res.status());
    assert_eq!(
        res.headers()["access-control-allow-origin"],
        "http://app.example"
    );
    assert!(
        res.headers()["access-control-allow-methods"]
            .to_str()
            .unwrap()
            .contains("POST")
    );
}

fn echo_routes() -> Router<cairn::http::AppState> {
    Router::new()
        .route(
            "/api/v1/test/echo",
            post(|ApiJson(body): ApiJson| async move { axum::Json(Value::Object(body)) }),
        )
        .route(
            "/api/v1/test/panic",
            get(|| async {
                panic!("boom at /secret/path");
                #[allow(unreachable_code)]
                ""
            }),
        )
        .route(
            "/api/v1/test/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "late"
            }),
        )
}

fn test_settings() -> HttpSettings {
    HttpSettings {
        timeout: Duration::from_millis(200),
        body_limit: 1024,
        ..HttpSettings::default()
    }
}

#[tokio::test]
async fn malformed_json_is_invalid_json_with_position() {
    let app = TestApp::with(test_settings(), echo_routes());
    let res = app
        .send(TestApp::request("POST", "/api/v1/test/echo").json_text("{\"a\":\n  tru"))
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_json");
    assert_eq!(res.body["error"]["details"]["line"], 2);
    assert!(res.body["error"]["details"]["column"].as_u64().is_some());
}

#[tokio::test]
async fn a_body_that_is_not_an_object_is_invalid_input() {
    let app = TestApp::with(test_settings(), echo_routes());
    let res = app
        .send(TestApp::request("POST", "/api/v1/test/echo").json_text("[1,2]"))
        .await;
    assert_error(&res, StatusCode::BAD_REQUEST, "invalid_input");
}

/// `method path` with a body sent as text: refused, `unsupported_media_type`.
async fn sent_as_text(
    app: &TestApp,
    method: &str,
    path: &str,
) -> crate::http_helpers::TestResponse {
    let res = app
        .send(
            TestApp::request(method, path)
                .header(header::CONTENT_TYPE.as_str(), "text/plain")
                .body_text("{}"),
        )
        .await;
    assert_error(
        &res,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    );
    assert_eq!(res.body["error"]["details"]["expected"], "application/json");
    assert_eq!(res.header("accept").as_deref(), Some("application/json"));
    res
}

#[tokio::test]
async fn a_wrong_content_type_is_unsupported_media_type() {
    let app = TestApp::with(test_settings(), echo_routes());
    let res = sent_as_text(&app, "POST", "/api/v1/test/echo").await;
    assert_eq!(res.header("accept-patch"), None, "not a PATCH");
}

#[tokio::test]
async fn a_patch_of_another_media_type_is_told_what_a_patch_may_be() {
    let app = TestApp::new();
    let id = crate::openapi_truth::create_task(&app).await;
    let res = sent_as_text(&app, "PATCH", &format!("/api/v1/tasks/{id}")).await;
    assert_eq!(
        res.header("accept-patch").as_deref(),
        Some("application/json")
    );
}

#[tokio::test]
async fn an_empty_body_reads_as_an_empty_object() {
    let app = TestApp::with(test_settings(), echo_routes());
    let res = app
        .send(TestApp::request("POST", "/api/v1/test/echo"))
        .await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body, json!({}));
}

#[tokio::test]
async fn an_oversized_body_is_payload_too_large() {
    let app = TestApp::with(test_settings(), echo_routes());
    let big = format!("{{\"a\":\"{}\"}}", "x".repeat(4096));
    let res = app
        .send(TestApp::request("POST", "/api/v1/test/echo").json_text(&big))
        .await;
    assert_error(&res, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    assert_eq!(res.body["error"]["details"]["limit_bytes"], 1024);
}

#[tokio::test]
async fn an_oversized_streamed_body_is_payload_too_large() {
    let app = TestApp::with(test_settings(), echo_routes());
    let big = format!("{{\"a\":\"{}\"}}", "x".repeat(4096));
    let res = app
        .send(TestApp::request("POST", "/api/v1/test/echo").json_stream(big))
        .await;
    assert_error(&res, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    assert_eq!(res.body["error"]["details"]["limit_bytes"], 1024);
}

#[tokio::test]
async fn a_request_over_the_time_limit_is_a_retryable_timeout() {
    let app = TestApp::with(test_settings(), echo_routes());
    let res = app.get("/api/v1/test/slow").await;
    assert_error(&res, StatusCode::SERVICE_UNAVAILABLE, "timeout");
    assert_eq!(res.body["error"]["retryable"], true);
    assert!(res.header("retry-after").is_some());
}

#[tokio::test]
async fn a_panicking_handler_is_internal_error_without_internals() {
    let app = TestApp::with(test_settings(), echo_routes());
    let res = app.get("/api/v1/test/panic").await;
    assert_error(&res, StatusCode::INTERNAL_SERVER_ERROR, "internal_error");
    let message = res.body["error"]["message"].as_str().unwrap();
    assert!(!message.contains("boom") && !message.contains("/secret"));
    assert_eq!(
        res.body["error"]["request_id"].as_str(),
        res.header("x-request-id").as_deref()
    );
    // The process keeps serving.
    assert_eq!(app.get("/api/v1/health").await.status, StatusCode::OK);
}

fn with_token() -> HttpSettings {
    HttpSettings {
        token: Some("s3cret".into()),
        ..HttpSettings::default()
    }
}

#[tokio::test]
async fn with_a_token_api_requests_without_it_are_unauthorized() {
    let app = TestApp::with(with_token(), Router::new());
    let res = app.get("/api/v1/tasks").await;
    assert_error(&res, StatusCode::UNAUTHORIZED, "unauthorized");
    assert_eq!(res.header("www-authenticate").as_deref(), Some("Bearer"));
    let res = app
        .send(TestApp::request("GET", "/api/v1/tasks").header("authorization", "Bearer wrong"))
        .await;
    assert_error(&res, StatusCode::UNAUTHORIZED, "unauthorized");
    let res = app.send(TestApp::request("POST", "/mcp")).await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn with_a_token_api_requests_with_it_pass() {
    let app = TestApp::with(with_token(), Router::new());
    let res = app
        .send(TestApp::request("GET", "/api/v1/tasks").header("authorization", "Bearer s3cret"))
        .await;
    assert_eq!(res.status, StatusCode::OK);
    // The scheme's name is case-insensitive (RFC 9110 §11.1); the secret is not.
    for presented in ["bearer s3cret", "BEARER s3cret", "Bearer  s3cret"] {
        let res = app
            .send(TestApp::request("GET", "/api/v1/tasks").header("authorization", presented))
            .await;
        assert_eq!(res.status, StatusCode::OK, "{presented}");
    }
    for refused in ["Bearer S3CRET", "Bearers3cret", "Basic s3cret", "s3cret"] {
        let res = app
            .send(TestApp::request("GET", "/api/v1/tasks").header("authorization", refused))
            .await;
        assert_error(&res, StatusCode::UNAUTHORIZED, "unauthorized");
    }
    // The document and the docs stay public.
    assert_eq!(app.get("/openapi.json").await.status, StatusCode::OK);
}

#[tokio::test]
async fn with_a_token_health_probes_stay_public() {
    let app = TestApp::with(with_token(), Router::new());
    assert_eq!(app.get("/api/v1/health").await.status, StatusCode::OK);
    assert_eq!(app.get("/api/v1/health/ready").await.status, StatusCode::OK);
}

/// A gateway that lets `http://app.example` call it across origins.
fn allowing_app_example() -> TestApp {
    let settings = HttpSettings {
        cors_origins: vec!["http://app.example".parse().unwrap()],
        ..HttpSettings::default()
    };
    TestApp::with(settings, Router::new())
}

#[tokio::test]
async fn cors_is_same_origin_by_default() {
    let app = TestApp::new();
    let res = app
        .send(TestApp::request("GET", "/api/v1/health").header("origin", "http://evil.example"))
        .await;
    assert!(res.header("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn cors_allows_configured_origins() {
    let app = allowing_app_example();
    let res = app
        .send(TestApp::request("GET", "/api/v1/health").header("origin", "http://app.example"))
        .await;
    assert_eq!(
        res.header("access-control-allow-origin").as_deref(),
        Some("http://app.example")
    );
}

#[tokio::test]
async fn responses_are_compressed_on_request() {
    let app = TestApp::new();
    let res = app
        .send_raw(TestApp::request("GET", "/openapi.json").header("accept-encoding", "gzip"))
        .await;
    assert_eq!(res.headers().get("content-encoding").unwrap(), "gzip");
}

#[tokio::test]
async fn the_openapi_document_and_swagger_ui_are_served() {
    let app = TestApp::new();
    let res = app.get("/openapi.json").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body["openapi"], "3.1.0");
    assert_eq!(res.body, cairn::http::openapi::document());
    // Tagged, so Swagger UI and generators asking again get a 304.
    let tag = res.header("etag").expect("the document has an ETag");
    let again = app
        .send_raw(TestApp::request("GET", "/openapi.json").header("if-none-match", &tag))
        .await;
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(again.headers()["etag"], tag.as_str());
    let other = app
        .send_raw(TestApp::request("GET", "/openapi.json").header("if-none-match", "\"other\""))
        .await;
    assert_eq!(other.status(), StatusCode::OK);
    let res = app.send_raw(TestApp::request("GET", "/docs/")).await;
    assert_eq!(res.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_real_socket_serves_and_shuts_down_gracefully() {
    let dir = tempfile::tempdir().unwrap();
    let store = cairn::store::open_sqlite(&dir.path().join("cairn.db")).unwrap();
    let cairn = cairn::tools::Cairn::new(store, Default::default());
    let slow = Router::new().route(
        "/api/v1/test/slow",
        get(|| async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            axum::Json(json!({"finished": true}))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let settings = HttpSettings {
        bind: addr,
        ..HttpSettings::default()
    };
    let app = cairn::http::app_with(cairn, settings, slow);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(cairn::http::serve_listener(listener, app, async {
        let _ = stopped.await;
    }));
    let client = reqwest::Client::new();
    let res = client
        .get(format!("http://{addr}/api/v1/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers().contains_key("x-request-id"));
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["data"]["status"], "ok");
    let res = client
        .get(format!("http://{addr}/api/v1/nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    assert_eq!(
        res.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );

    // A request in flight when shutdown begins still gets its answer.
    let in_flight = tokio::spawn(client.get(format!("http://{addr}/api/v1/test/slow")).send());
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.send(()).unwrap();
    let res = in_flight.await.unwrap().unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.unwrap()["finished"], true);
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_web_dir_spa_is_served_with_client_routes_but_never_under_api() {
    let web = tempfile::tempdir().unwrap();
    std::fs::write(
        web.path().join("index.html"),
        "<!doctype html><title>cairn</title>",
    )
    .unwrap();
    std::fs::write(web.path().join("app.js"), "console.log(1)").unwrap();
    let settings = HttpSettings {
        web_dir: Some(web.path().to_owned()),
        ..HttpSettings::default()
    };
    let app = TestApp::with(settings, Router::new());
    for path in ["/", "/board", "/notes/some-slug"] {
        let res = app.send_raw(TestApp::request("GET", path)).await;
        assert_eq!(res.status(), StatusCode::OK, "{path}");
        assert!(
            res.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/html"),
            "{path}"
        );
    }
    let res = app.send_raw(TestApp::request("GET", "/app.js")).await;
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .contains("javascript")
    );
    for path in ["/api/v1/nope", "/assets/gone.js", "/gone.css"] {
        let res = app.get(path).await;
        assert_error(&res, StatusCode::NOT_FOUND, "route_not_found");
    }
}

#[test]
fn serve_refuses_to_start_when_the_store_cannot_be_opened() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("missing-dir").join("cairn.db");
    let (code, envelope, _) = serve_binary(&["--db", db.to_str().unwrap()], &[]);
    assert_eq!(code, Some(1), "fix the environment");
    assert_eq!(envelope["error"]["code"], "store_unavailable");
    let message = envelope["error"]["message"].as_str().unwrap();
    assert!(!message.contains("missing-dir"), "no path in {message}");
}

#[test]
fn serve_refuses_a_public_bind_without_a_token() {
    let envelope = serve_refuses(&["--bind", "0.0.0.0:0"], "bind");
    let message = envelope["error"]["message"].as_str().unwrap();
    assert!(message.contains("CAIRN_TOKEN"), "{message}");
}
