//! The browser SPA at `/`: its files are embedded in the binary at compile
//! time (`web-client/dist`), or read from `--web-dir` when developing it.
//! Client routes answer `index.html`; a missing asset is a 404, never the page.

use std::borrow::Cow;
use std::path::Path;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;
use tower::ServiceExt;
use tower_http::services::{ServeDir, ServeFile};

use crate::http::AppState;
use crate::http::middleware::security_headers::REVALIDATE;
use crate::http::semantics::extract::request_id_of;
use crate::http::semantics::response::{ApiResponse, route_not_found};
use crate::http::semantics::revalidation;

/// The committed build of the SPA. `debug-embed` embeds it in debug builds
/// too, so every build of `cairn` carries the same files.
#[derive(RustEmbed)]
#[folder = "web-client/dist/"]
struct Embedded;

const INDEX: &str = "index.html";
/// Vite's output folder: every file in it has a content hash in its name.
const HASHED: &str = "assets/";
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// What a path outside the API names: one of the SPA's files, or a client
/// route (no extension, not under `/assets/`), which the page itself handles.
#[derive(Debug, PartialEq, Eq)]
enum Target<'a> {
    File(&'a str),
    Page,
}

fn target(path: &str) -> Target<'_> {
    let relative = path.trim_start_matches('/');
    let last = relative.rsplit('/').next().unwrap_or_default();
    if relative.starts_with(HASHED) || last.contains('.') {
        Target::File(relative)
    } else {
        Target::Page
    }
}

/// Hashed assets may be cached for good; anything else is checked each time,
/// so a new build is picked up on the next load.
fn cache_control(file: &str) -> &'static str {
    if file.starts_with(HASHED) {
        IMMUTABLE
    } else {
        REVALIDATE
    }
}

/// Answers a request for the SPA from `dir` (`--web-dir`) or the embedded
/// build; `None` when it names no file (the caller answers `route_not_found`).
pub async fn serve(dir: Option<&Path>, req: Request) -> Option<Response> {
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        let allow = [(header::ALLOW, "GET, HEAD")];
        return Some((StatusCode::METHOD_NOT_ALLOWED, allow).into_response());
    }
    let file = match target(req.uri().path()) {
        Target::File(file) => file.to_owned(),
        Target::Page => INDEX.to_owned(),
    };
    let mut response = match dir {
        Some(dir) => from_dir(dir, &file, req).await?,
        None => embedded(&file, req.headers())?,
    };
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(cache_control(&file)),
    );
    Some(response)
}

/// A file of the embedded build, with a validator: its content hash as a
/// weak ETag (weak because the compression layer re-encodes the body, and a
/// strong one would have to differ per encoding).
fn embedded(file: &str, headers: &HeaderMap) -> Option<Response> {
    let found = Embedded::get(file)?;
    let hash = found.metadata.sha256_hash();
    let etag = format!(
        "W/\"{}\"",
        hash[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    let etag = HeaderValue::from_str(&etag).expect("hex is a valid header value");
    // A malformed or oversized `If-None-Match` is ignored: the full answer is a correct one.
    let asked = revalidation::if_none_match(&Method::GET, headers).unwrap_or_default();
    if revalidation::is_unchanged(asked.as_ref(), &etag) {
        return Some(revalidation::not_modified(etag));
    }
    let content_type = content_type(found.metadata.mimetype());
    let body = match found.data {
        Cow::Borrowed(bytes) => Body::from(bytes),
        Cow::Owned(bytes) => Body::from(bytes),
    };
    Some(
        (
            [(header::CONTENT_TYPE, content_type), (header::ETAG, etag)],
            body,
        )
            .into_response(),
    )
}

/// Text is UTF-8 (Vite writes it so); other types are as guessed from the name.
fn content_type(mime: &str) -> HeaderValue {
    let text = mime.starts_with("text/") || mime == "application/javascript";
    let value = if text && !mime.contains("charset") {
        format!("{mime}; charset=utf-8")
    } else {
        mime.to_owned()
    };
    HeaderValue::from_str(&value).unwrap_or(HeaderValue::from_static("application/octet-stream"))
}

/// `If-None-Match` by weak comparison (RFC 9110 §13.1.2): `*`, or any listed
/// tag equal to ours with `W/` ignored ([`revalidation::is_unchanged`]).
#[cfg(test)]
fn matches_etag(given: &HeaderValue, etag: &HeaderValue) -> bool {
    revalidation::is_unchanged(revalidation::parse_tags(given.as_bytes()).as_ref(), etag)
}

/// A file from `--web-dir`, as `ServeDir` serves it (content type,
/// `Last-Modified`, ranges); `None` when it is not there.
async fn from_dir(dir: &Path, file: &str, req: Request) -> Option<Response> {
    let response = if file == INDEX {
        ServeFile::new(dir.join(INDEX)).oneshot(req).await
    } else {
        ServeDir::new(dir).oneshot(req).await
    };
    let response = match response {
        Ok(response) => response.into_response(),
        Err(never) => match never {},
    };
    (response.status() != StatusCode::NOT_FOUND).then_some(response)
}

/// Unknown paths: `route_not_found` under `/api` and `/mcp`; elsewhere the
/// SPA (its files, and `index.html` for client routes), or `route_not_found`
/// for a file it does not have.
pub async fn fallback(State(state): State<AppState>, req: Request) -> Response {
    let path = req.uri().path().to_owned();
    let request_id = request_id_of(req.headers());
    let is_api = path.starts_with("/api") || path.starts_with("/mcp");
    let served = if is_api {
        None
    } else {
        serve(state.settings.web_dir.as_deref(), req).await
    };
    served
        .unwrap_or_else(|| ApiResponse::error(route_not_found(&path), &request_id).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_without_an_extension_are_client_routes() {
        for path in ["/", "/board", "/tasks/abc123", "/notes/some-slug/edit"] {
            assert_eq!(target(path), Target::Page, "{path}");
        }
    }

    #[test]
    fn paths_with_an_extension_or_under_assets_are_files() {
        assert_eq!(target("/index.html"), Target::File("index.html"));
        assert_eq!(target("/favicon.ico"), Target::File("favicon.ico"));
        assert_eq!(
            target("/assets/index-x1.js"),
            Target::File("assets/index-x1.js")
        );
        assert_eq!(target("/assets/gone"), Target::File("assets/gone"));
        assert_eq!(target("/notes/v1.2"), Target::File("notes/v1.2"));
    }

    #[test]
    fn only_hashed_assets_are_immutable() {
        assert_eq!(cache_control("assets/index-x1.js"), IMMUTABLE);
        assert_eq!(cache_control("index.html"), REVALIDATE);
        assert_eq!(cache_control("robots.txt"), REVALIDATE);
    }

    #[test]
    fn if_none_match_compares_weakly_and_accepts_lists_and_star() {
        let ours = HeaderValue::from_static("W/\"abc\"");
        for given in ["W/\"abc\"", "\"abc\"", "\"x\", W/\"abc\"", "*"] {
            assert!(
                matches_etag(&HeaderValue::from_static(given), &ours),
                "{given}"
            );
        }
        for given in ["\"abcd\"", "W/\"ab\"", ""] {
            assert!(
                !matches_etag(&HeaderValue::from_static(given), &ours),
                "{given}"
            );
        }
    }

    #[test]
    fn the_binary_carries_the_built_spa() {
        let html = Embedded::get(INDEX).expect("web-client/dist/index.html is embedded");
        assert!(String::from_utf8_lossy(&html.data).contains("/assets/"));
    }
}
