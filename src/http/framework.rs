//! What the framework itself answers, made to speak the envelope: unknown
//! routes, wrong methods, layer-made errors (timeout, body limit), panics,
//! missing credentials, and the fallback to the SPA.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tower_http::request_id::{MakeRequestId, RequestId};

use super::extract::{payload_too_large, request_id_of};
use super::response::ApiResponse;
use super::{AppState, HttpSettings, spa};
use crate::auth::Caller;
use crate::envelope::{ErrorCode, ToolError, new_request_id};

/// Request ids for requests that did not bring one.
#[derive(Clone, Copy)]
pub struct MakeId;

impl MakeRequestId for MakeId {
    fn make_request_id<B>(&mut self, _: &axum::http::Request<B>) -> Option<RequestId> {
        HeaderValue::from_str(&new_request_id())
            .ok()
            .map(RequestId::new)
    }
}

/// The request span: every log line of a request carries its id.
pub fn span(req: &axum::http::Request<Body>) -> tracing::Span {
    tracing::info_span!(
        "http",
        method = %req.method(),
        path = %req.uri().path(),
        request_id = %request_id_of(req.headers()),
    )
}

/// Paths the envelope contract covers (MCP speaks its own protocol).
fn is_enveloped(path: &str) -> bool {
    !path.starts_with("/mcp")
}

/// With a token configured, `/api`, `/mcp` and `/metrics` require
/// `Authorization: Bearer <token>` (health probes excepted). The request
/// goes on with its [`Caller`] in its extensions.
pub async fn require_token(
    State(settings): State<Arc<HttpSettings>>,
    req: Request,
    next: Next,
) -> Response {
    let path = req.uri().path();
    let guarded = (path.starts_with("/api") || path.starts_with("/mcp") || path == "/metrics")
        && !is_probe(path);
    let caller = if settings.token.is_none() {
        Caller::anonymous()
    } else if !guarded {
        return next.run(req).await;
    } else {
        match token_refusal(&settings, &req) {
            None => Caller::default_token(),
            Some(refusal) => return refusal,
        }
    };
    let mut req = req;
    req.extensions_mut().insert(caller);
    next.run(req).await
}

/// Health and readiness stay public so monitors and load balancers can probe
/// without the token (CONTRACT §5: health always answers 200).
fn is_probe(path: &str) -> bool {
    matches!(path, "/api/v1/health" | "/api/v1/health/ready")
}

/// The 401 answer for a request without the right bearer token, if any.
pub fn token_refusal(settings: &HttpSettings, req: &Request) -> Option<Response> {
    let expected = settings.token.as_deref()?;
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if given.is_some_and(|g| constant_time_eq(g.as_bytes(), expected.as_bytes())) {
        return None;
    }
    let error = ToolError::new(
        ErrorCode::Unauthorized,
        "Missing or wrong bearer token: send `Authorization: Bearer <CAIRN_TOKEN>`.",
    );
    let mut response = ApiResponse::error(error, &request_id_of(req.headers())).into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    Some(response)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Rewrites any error response that is not already JSON (made by a layer or by
/// axum itself) into the envelope, keyed by its status.
pub async fn envelope_framework_errors(
    State(settings): State<Arc<HttpSettings>>,
    req: Request,
    next: Next,
) -> Response {
    let request_id = request_id_of(req.headers());
    let path = req.uri().path().to_owned();
    let response = next.run(req).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json || !is_enveloped(&path) {
        return response;
    }
    let error = match status {
        StatusCode::NOT_FOUND => route_not_found(&path),
        StatusCode::METHOD_NOT_ALLOWED => {
            let allowed: Vec<Value> = response
                .headers()
                .get(header::ALLOW)
                .and_then(|v| v.to_str().ok())
                .map(|v| {
                    v.split(',')
                        .map(|m| Value::String(m.trim().to_owned()))
                        .collect()
                })
                .unwrap_or_default();
            ToolError::new(
                ErrorCode::MethodNotAllowed,
                "This route does not accept that method; `details.allowed` lists the ones it does.",
            )
            .detail("allowed", allowed)
        }
        StatusCode::PAYLOAD_TOO_LARGE => payload_too_large(settings.body_limit),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ToolError::new(
            ErrorCode::UnsupportedMediaType,
            "The body must be sent as `Content-Type: application/json`.",
        )
        .detail("expected", "application/json"),
        StatusCode::SERVICE_UNAVAILABLE | StatusCode::REQUEST_TIMEOUT => ToolError::new(
            ErrorCode::Timeout,
            "The request took longer than the server's time limit; retry, or narrow the request.",
        ),
        s if s.is_client_error() => ToolError::invalid_input("request", "the request was rejected"),
        _ => ToolError::internal(),
    };
    ApiResponse::error(error, &request_id).into_response()
}

pub fn route_not_found(path: &str) -> ToolError {
    ToolError::new(
        ErrorCode::RouteNotFound,
        "No route at this path; `/openapi.json` lists every route.",
    )
    .detail("path", path)
}

/// A panic in a handler: logged in full, answered as a plain 500 that the
/// framework-error middleware turns into `internal_error` with the request id.
pub fn panic_response(payload: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let cause = crate::tools::panic_payload_text(payload.as_ref());
    tracing::error!(
        cause,
        pid = std::process::id(),
        thread = ?std::thread::current().name(),
        "handler panicked"
    );
    StatusCode::INTERNAL_SERVER_ERROR.into_response()
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
        spa::serve(state.settings.web_dir.as_deref(), req).await
    };
    served
        .unwrap_or_else(|| ApiResponse::error(route_not_found(&path), &request_id).into_response())
}
