//! Limits on the request head, before anything else reads it: a header block
//! over [`MAX_HEADER_BYTES`] is refused with `headers_too_large` (431), and a
//! client's `x-request-id` is kept only when it is a short token, so a
//! hostile one is never echoed into headers, bodies or logs.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::envelope::{ErrorCode, ToolError, new_request_id};
use crate::http::semantics::extract::REQUEST_ID;
use crate::http::semantics::problem::Asked;
use crate::http::semantics::response::ApiResponse;

/// Largest header block (names, values and their separators) the gateway
/// reads; nginx's defaults allow 32 KiB.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// Longest client-chosen request id kept.
pub const MAX_REQUEST_ID_CHARS: usize = 128;

fn header_bytes(headers: &HeaderMap) -> usize {
    headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum()
}

/// A request id a client may choose: 1-128 of `A-Z a-z 0-9 - _ . :`.
fn is_acceptable_request_id(value: &HeaderValue) -> bool {
    let bytes = value.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_REQUEST_ID_CHARS
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

/// The outermost of cairn's own layers: what the request asked of its
/// errors is read ([`Asked`]), then the head limits, then the rest of the
/// stack; the answer, this layer's 431 included, goes out as problem details
/// when asked.
pub async fn front(mut req: Request, next: Next) -> Response {
    let asked = Asked::of(&req);
    let response = match bound(&mut req) {
        Some(refusal) => refusal,
        None => next.run(req).await,
    };
    asked.answer(response).await
}

/// The head limits: a hostile request id dropped, and the refusal of a
/// header block over the limit.
fn bound(req: &mut Request) -> Option<Response> {
    let size = header_bytes(req.headers());
    let given = req.headers().get(&REQUEST_ID);
    if given.is_some_and(|v| !is_acceptable_request_id(v)) {
        // Dropped here, so the request-id layer makes a fresh one.
        req.headers_mut().remove(&REQUEST_ID);
    }
    if size <= MAX_HEADER_BYTES {
        return None;
    }
    let request_id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .map_or_else(new_request_id, str::to_owned);
    tracing::warn!(request_id, size, "request headers over the limit");
    let error = ToolError::new(
        ErrorCode::HeadersTooLarge,
        "The request headers are over the size limit.",
    )
    .detail("limit_bytes", MAX_HEADER_BYTES);
    let mut response = ApiResponse::error(error, &request_id).into_response();
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    Some(response)
}
