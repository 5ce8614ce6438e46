//! What the framework itself answers, made to speak the envelope: unknown
//! routes, wrong methods, layer-made errors (timeout, body limit), panics,
//! missing credentials, and the fallback to the SPA.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use super::extract::{REQUEST_ID, payload_too_large, request_id_from, request_id_of};
use super::response::ApiResponse;
use super::{AppState, HttpSettings, spa};
use crate::envelope::{ErrorCode, ToolError};

/// Paths the envelope contract covers (MCP speaks its own protocol).
fn is_enveloped(path: &str) -> bool {
    !path.starts_with("/mcp")
}

/// Health and readiness stay public so monitors and load balancers can probe
/// without the token (CONTRACT §5: health always answers 200), and are never
/// rate limited.
pub fn is_probe(path: &str) -> bool {
    matches!(path, "/api/v1/health" | "/api/v1/health/ready")
}

/// Rewrites any error response that is not already JSON (made by a layer or by
/// axum itself) into the envelope, keyed by its status: what it needs of the
/// request is kept before the request goes on, as shared handles to the
/// request's own bytes (copied out only for an answer it rewrites).
pub struct Framed {
    request_id: Option<HeaderValue>,
    uri: Uri,
}

impl Framed {
    pub fn of(req: &Request) -> Self {
        Self {
            request_id: req.headers().get(&REQUEST_ID).cloned(),
            uri: req.uri().clone(),
        }
    }

    pub fn answer(self, settings: &HttpSettings, response: Response) -> Response {
        let path = self.uri.path();
        let status = response.status();
        let is_json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
        if !(status.is_client_error() || status.is_server_error()) || is_json || !is_enveloped(path)
        {
            return response;
        }
        let error = match status {
            StatusCode::NOT_FOUND => route_not_found(path),
            StatusCode::METHOD_NOT_ALLOWED => {
                // The route's methods, and `OPTIONS`, which every route
                // answers (`options`).
                let mut allowed: Vec<&str> = response
                    .headers()
                    .get(header::ALLOW)
                    .and_then(|v| v.to_str().ok())
                    .map(|v| v.split(',').map(str::trim).collect())
                    .unwrap_or_default();
                if !allowed.contains(&super::options::OPTIONS) {
                    allowed.push(super::options::OPTIONS);
                }
                ToolError::new(
                    ErrorCode::MethodNotAllowed,
                    "This route does not accept that method; `details.allowed` lists the ones it does.",
                )
                .detail("allowed", allowed)
            }
            StatusCode::PAYLOAD_TOO_LARGE => payload_too_large(settings.body_limit),
            StatusCode::TOO_MANY_REQUESTS => super::ratelimit::layer_refusal(response.headers()),
            StatusCode::FORBIDDEN => ToolError::new(
                ErrorCode::PermissionDenied,
                "This request is not permitted for this caller.",
            ),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => ToolError::new(
                ErrorCode::UnsupportedMediaType,
                "The body must be sent as `Content-Type: application/json`.",
            )
            .detail("expected", "application/json"),
            StatusCode::SERVICE_UNAVAILABLE | StatusCode::REQUEST_TIMEOUT => ToolError::new(
                ErrorCode::Timeout,
                "The request took longer than the server's time limit; retry, or narrow the request.",
            ),
            s if s.is_client_error() => {
                ToolError::invalid_input("request", "the request was rejected")
            }
            _ => ToolError::internal(),
        };
        let request_id = request_id_from(self.request_id.as_ref());
        ApiResponse::error(error, &request_id).into_response()
    }
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
