//! The request's id and its span, from tower-http's parts: a request that
//! brought no `x-request-id` (or one the head limits dropped) gets a new
//! one, the answer carries it back, and every log line of the request is in
//! its `http` span, which names it.

use axum::extract::Request;
use axum::http::HeaderValue;
use tower_http::request_id::{MakeRequestId, RequestId};
use tracing::Span;

use crate::envelope::new_request_id;
use crate::http::semantics::extract::REQUEST_ID;

/// Makes cairn's request ids (the ones envelopes carry in `meta.request_id`).
#[derive(Clone, Copy, Default)]
pub struct NewRequestId;

impl MakeRequestId for NewRequestId {
    fn make_request_id<B>(&mut self, _: &axum::http::Request<B>) -> Option<RequestId> {
        HeaderValue::try_from(new_request_id())
            .ok()
            .map(RequestId::new)
    }
}

/// The request's span (tower-http's `TraceLayer::make_span_with`); the
/// token rule records the token's name (never its secret) once it knows it.
pub fn request_span(req: &Request) -> Span {
    let request_id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    tracing::info_span!(
        "http",
        method = %req.method(),
        path = %req.uri().path(),
        request_id = %request_id,
        token = tracing::field::Empty,
    )
}
