//! What the framework itself answers, made to speak the envelope: unknown
//! routes, wrong methods, layer-made errors (timeout, body limit), panics,
//! and missing credentials.

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::envelope::{ErrorCode, ToolError};
use crate::http::HttpSettings;
use crate::http::middleware::{cors, is_enveloped, rate_limit};
use crate::http::semantics::extract::{REQUEST_ID, payload_too_large, request_id_from};
use crate::http::semantics::response::{ApiResponse, route_not_found};

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
                if !allowed.contains(&cors::OPTIONS) {
                    allowed.push(cors::OPTIONS);
                }
                ToolError::new(
                    ErrorCode::MethodNotAllowed,
                    "This route does not accept that method; `details.allowed` lists the ones it does.",
                )
                .detail("allowed", allowed)
            }
            StatusCode::PAYLOAD_TOO_LARGE => payload_too_large(settings.body_limit),
            StatusCode::TOO_MANY_REQUESTS => rate_limit::layer_refusal(response.headers()),
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
