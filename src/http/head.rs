//! Limits on the request head, before anything else reads it: a header block
//! over [`MAX_HEADER_BYTES`] is refused with `headers_too_large` (431), and a
//! client's `x-request-id` is kept only when it is a short token, so a
//! hostile one is never echoed into headers, bodies or logs.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use hyper::body::Body as HttpBody;

use super::extract::REQUEST_ID_HEADER;
use super::problem::Asked;
use super::response::ApiResponse;
use crate::envelope::{ErrorCode, ToolError, new_request_id};

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

/// The outer steps, one layer: what the request asked of its errors is read
/// ([`Asked`]), then the head limits, then the rest of the stack; the answer,
/// this layer's 431 included, goes out as problem details when asked. A
/// hand-written layer, not a `from_fn`: it calls the stack inside it directly
/// instead of cloning all of it on every request.
#[derive(Clone, Copy, Default)]
pub struct FrontLayer;

impl<S> tower::Layer<S> for FrontLayer {
    type Service = Front<S>;

    fn layer(&self, inner: S) -> Front<S> {
        Front { inner }
    }
}

/// The service of [`FrontLayer`].
#[derive(Clone)]
pub struct Front<S> {
    inner: S,
}

impl<S, B> tower::Service<Request> for Front<S>
where
    S: tower::Service<Request, Response = axum::http::Response<B>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        let asked = Asked::of(&req);
        if let Some(refusal) = bound(&mut req) {
            return Box::pin(async move { Ok(asked.answer(refusal).await) });
        }
        let answer = self.inner.call(req);
        Box::pin(async move { Ok(asked.answer(answer.await?.map(Body::new)).await) })
    }
}

/// The head limits: a hostile request id dropped, and the refusal of a
/// header block over the limit.
fn bound(req: &mut Request) -> Option<Response> {
    let size = header_bytes(req.headers());
    let given = req.headers().get(REQUEST_ID_HEADER);
    if given.is_some_and(|v| !is_acceptable_request_id(v)) {
        // Dropped here, so the request-id layer makes a fresh one.
        req.headers_mut().remove(REQUEST_ID_HEADER);
    }
    if size <= MAX_HEADER_BYTES {
        return None;
    }
    let request_id = req
        .headers()
        .get(REQUEST_ID_HEADER)
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
        response.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    Some(response)
}
