//! A gateway under test, driven in-process with `oneshot`.

#![allow(dead_code)] // shared by the test modules; not every module uses every helper

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

use cairn::http::{AppState, HttpSettings};
use cairn::tools::{Cairn, Config};

pub struct TestApp {
    pub app: cairn::http::App,
    pub cairn: Cairn,
    _dir: tempfile::TempDir,
}

#[derive(Debug)]
pub struct TestResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl TestResponse {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    }
}

/// A request under construction.
pub struct TestRequest {
    builder: axum::http::request::Builder,
    body: Body,
}

impl TestRequest {
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.builder = self.builder.header(name, value);
        self
    }

    pub fn json(self, value: &Value) -> Self {
        self.json_text(&value.to_string())
    }

    pub fn json_text(self, text: &str) -> Self {
        self.header(header::CONTENT_TYPE.as_str(), "application/json")
            .body_text(text)
    }

    /// A JSON body without a Content-Length (as a chunked upload sends it).
    pub fn json_stream(mut self, text: String) -> Self {
        self = self.header(header::CONTENT_TYPE.as_str(), "application/json");
        let chunks = vec![Ok::<_, std::io::Error>(axum::body::Bytes::from(text))];
        self.body = Body::from_stream(futures_util::stream::iter(chunks));
        self
    }

    pub fn body_text(mut self, text: &str) -> Self {
        self.body = Body::from(text.to_owned());
        self
    }
}

impl TestApp {
    pub fn new() -> Self {
        Self::with(HttpSettings::default(), Router::new())
    }

    pub fn with(settings: HttpSettings, extra: Router<AppState>) -> Self {
        Self::with_config(settings, Config::default(), extra)
    }

    pub fn with_config(settings: HttpSettings, config: Config, extra: Router<AppState>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = cairn::store::open_sqlite(&dir.path().join("cairn.db")).unwrap();
        let cairn = Cairn::new(store, config);
        let app = cairn::http::app_with(cairn.clone(), settings, extra);
        Self {
            app,
            cairn,
            _dir: dir,
        }
    }

    /// A gateway over `cairn`, whose store the test opened (several gateways
    /// may share one database).
    pub fn over(cairn: Cairn, settings: HttpSettings) -> Self {
        let app = cairn::http::app(cairn.clone(), settings);
        Self {
            app,
            cairn,
            _dir: tempfile::tempdir().unwrap(),
        }
    }

    /// The folder holding this app's database (tests remove it to fail the store).
    pub fn db_dir(&self) -> &std::path::Path {
        self._dir.path()
    }

    pub fn request(method: &str, path: &str) -> TestRequest {
        TestRequest {
            builder: Request::builder().method(method).uri(path),
            body: Body::empty(),
        }
    }

    pub async fn send_raw(&self, req: TestRequest) -> axum::response::Response {
        let request = req.builder.body(req.body).unwrap();
        self.app.clone().oneshot(request).await.unwrap()
    }

    pub async fn send(&self, req: TestRequest) -> TestResponse {
        let response = self.send_raw(req).await;
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
            panic!(
                "{status}: body is not JSON: {:?}",
                String::from_utf8_lossy(&bytes)
            )
        });
        TestResponse {
            status,
            headers,
            body,
        }
    }

    pub async fn get(&self, path: &str) -> TestResponse {
        self.send(Self::request("GET", path)).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> TestResponse {
        self.send(Self::request("POST", path).json(body)).await
    }

    pub async fn patch(&self, path: &str, body: &Value) -> TestResponse {
        self.send(Self::request("PATCH", path).json(body)).await
    }

    pub async fn put(&self, path: &str, body: &Value) -> TestResponse {
        self.send(Self::request("PUT", path).json(body)).await
    }

    pub async fn delete(&self, path: &str) -> TestResponse {
        self.send(Self::request("DELETE", path)).await
    }
}

/// The response is the `ErrorEnvelope` of `code`, with its category's status and JSON.
pub fn assert_error(res: &TestResponse, status: StatusCode, code: &str) {
    assert_eq!(res.status, status, "status of {}", res.body);
    assert_eq!(res.body["error"]["code"], code, "code of {}", res.body);
    assert_eq!(
        res.header("content-type").as_deref(),
        Some("application/json")
    );
    let error = res.body["error"].as_object().expect("an error object");
    for key in [
        "category",
        "code",
        "message",
        "retryable",
        "request_id",
        "details",
        "suggestions",
    ] {
        assert!(error.contains_key(key), "error lacks `{key}`: {}", res.body);
    }
    assert_eq!(res.body.as_object().unwrap().len(), 1, "only `error`");
}

/// Runs `cairn serve` with `args` until it exits (start-up refusals): its exit
/// code, the one envelope it printed on stdout, and its stderr.
pub fn serve_binary(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, Value, String) {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    command
        .arg("serve")
        .args(args)
        .env_remove("CAIRN_TOKEN")
        .env_remove("CAIRN_ALLOWED_HOSTS");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "one line on stdout: {stdout:?}");
    let envelope = serde_json::from_str(&stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    (output.status.code(), envelope, stderr)
}

/// `cairn serve` with `args` on a fresh database refuses to start: exit 2 (fix
/// the call) and an `invalid_input` envelope naming `field`; returns the envelope.
pub fn serve_refuses(args: &[&str], field: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db");
    let mut all = vec!["--db", db.to_str().unwrap()];
    all.extend_from_slice(args);
    let (code, envelope, _) = serve_binary(&all, &[]);
    assert_eq!(code, Some(2), "fix the call: {envelope}");
    assert_eq!(envelope["error"]["code"], "invalid_input");
    assert_eq!(envelope["error"]["details"]["field"], field);
    envelope
}
