//! One binary carries its SPA: `cairn serve` started from an empty directory
//! serves the page, its client routes and its hashed assets (cached for good,
//! with a validator), and still answers `route_not_found` for what it lacks.

use axum::http::StatusCode;
use reqwest::Response;
use reqwest::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, HeaderMap, IF_NONE_MATCH};
use serde_json::Value;

use crate::http_helpers::serve_refuses;
use crate::process_helpers::Gateway;

const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// A gateway on a fresh SQLite store, run from an empty working directory.
struct Served {
    gateway: Gateway,
    client: reqwest::Client,
    _store: tempfile::TempDir,
}

impl Served {
    async fn start() -> Self {
        let store = tempfile::tempdir().unwrap();
        let db = store.path().join("cairn.db");
        Self {
            gateway: Gateway::start(db.to_str().unwrap()).await,
            client: reqwest::Client::new(),
            _store: store,
        }
    }

    async fn get_with(&self, path: &str, headers: HeaderMap) -> Response {
        let url = format!("http://127.0.0.1:{}{path}", self.gateway.port());
        self.client.get(url).headers(headers).send().await.unwrap()
    }

    async fn get(&self, path: &str) -> Response {
        self.get_with(path, HeaderMap::new()).await
    }
}

fn header(res: &Response, name: impl reqwest::header::AsHeaderName) -> &str {
    res.headers()
        .get(name)
        .map(|v| v.to_str().unwrap())
        .unwrap_or_default()
}

/// The page's first script, `/assets/index-<hash>.js`.
fn script_of(html: &str) -> String {
    let start = html.find("/assets/").expect("the page loads an asset");
    let end = start + html[start..].find('"').unwrap();
    html[start..end].to_owned()
}

async fn assert_route_not_found(res: Response, path: &str) {
    assert_eq!(res.status(), StatusCode::NOT_FOUND, "{path}");
    assert!(
        header(&res, CONTENT_TYPE).starts_with("application/json"),
        "{path}"
    );
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"]["code"], "route_not_found", "{path}");
    assert_eq!(body["error"]["details"]["path"], path);
}

#[tokio::test]
async fn the_page_and_its_client_routes_are_served_from_an_empty_directory() {
    let served = Served::start().await;
    let page = served.get("/").await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(header(&page, CONTENT_TYPE), "text/html; charset=utf-8");
    assert_eq!(header(&page, CACHE_CONTROL), "no-cache");
    assert!(
        header(&page, "content-security-policy").contains("script-src 'self'"),
        "the SPA's policy is set"
    );
    let html = page.text().await.unwrap();
    assert!(html.contains("<div id=\"app\">"), "{html}");

    for route in ["/board", "/tasks/abc123def456"] {
        let res = served.get(route).await;
        assert_eq!(res.status(), StatusCode::OK, "{route}");
        assert_eq!(header(&res, CACHE_CONTROL), "no-cache", "{route}");
        assert_eq!(
            res.text().await.unwrap(),
            html,
            "{route} answers index.html"
        );
    }
}

#[tokio::test]
async fn a_hashed_asset_is_immutable_with_an_etag_and_revalidates_to_304() {
    let served = Served::start().await;
    let html = served.get("/").await.text().await.unwrap();
    let script = script_of(&html);

    let res = served.get(&script).await;
    assert_eq!(res.status(), StatusCode::OK, "{script}");
    assert_eq!(header(&res, CONTENT_TYPE), "text/javascript; charset=utf-8");
    assert_eq!(header(&res, CACHE_CONTROL), IMMUTABLE);
    let etag = header(&res, ETAG).to_owned();
    assert!(etag.starts_with("W/\"") && etag.len() > 10, "{etag}");
    assert!(!res.bytes().await.unwrap().is_empty());

    let mut again = HeaderMap::new();
    again.insert(IF_NONE_MATCH, etag.parse().unwrap());
    let res = served.get_with(&script, again).await;
    assert_eq!(res.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(header(&res, ETAG), etag);
    assert_eq!(header(&res, CACHE_CONTROL), IMMUTABLE);
    assert!(res.bytes().await.unwrap().is_empty());

    let mut other = HeaderMap::new();
    other.insert(IF_NONE_MATCH, "W/\"someone-elses\"".parse().unwrap());
    assert_eq!(
        served.get_with(&script, other).await.status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn assets_are_compressed_for_clients_that_accept_it() {
    let served = Served::start().await;
    let html = served.get("/").await.text().await.unwrap();
    let mut gzip = HeaderMap::new();
    gzip.insert("accept-encoding", "gzip".parse().unwrap());
    let res = served.get_with(&script_of(&html), gzip).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(header(&res, "content-encoding"), "gzip");
    assert!(
        header(&res, ETAG).starts_with("W/"),
        "weak: one tag for every encoding"
    );
}

#[tokio::test]
async fn a_missing_asset_and_an_unknown_api_route_are_route_not_found() {
    let served = Served::start().await;
    for path in [
        "/assets/index-gone.js",
        "/assets/gone",
        "/favicon.ico",
        "/api/v1/nope",
    ] {
        assert_route_not_found(served.get(path).await, path).await;
    }
}

#[test]
fn serve_refuses_a_web_dir_without_a_built_spa() {
    let empty = tempfile::tempdir().unwrap();
    let envelope = serve_refuses(&["--web-dir", empty.path().to_str().unwrap()], "web_dir");
    let message = envelope["error"]["message"].as_str().unwrap();
    assert!(message.contains("index.html"), "{message}");
}
