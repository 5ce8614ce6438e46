//! HTTP metrics and the request log: every request counted and logged once
//! by its route template (axum's `MatchedPath`, carried out of the router on
//! the response), method, status and latency, with the tool and code that
//! answered; open event streams gauged until their body is dropped; and the
//! `/metrics` scrape itself.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper::body::{Body as HttpBody, Frame, SizeHint};

use crate::envelope::ErrorCategory;
use crate::http::AppState;
use crate::http::semantics::extract::REQUEST_ID;
use crate::http::semantics::idempotency;
use crate::http::semantics::response::Answered;
use crate::metrics::{
    MCP_SESSIONS_CLOSED, MCP_SESSIONS_OPENED, STREAMS_OPEN, record_request, render, route_label,
};

/// Route label of a request that no router handler (or the fallback) saw: it
/// was refused before routing (host, origin, token, head limits, time limit).
const REFUSED: &str = "refused";
/// Route label of what the fallback answered (the SPA, unknown paths).
const FALLBACK: &str = "fallback";

/// Inside the router, on every route (`from_fn_with_state`): notes which
/// route template matched, and runs [`idempotency::keyed_posts`] on a keyed
/// `POST`.
pub async fn tag_route(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or(FALLBACK, |m| route_label(m.as_str()));
    let mut response = if idempotency::may_be_keyed(&req) {
        idempotency::keyed_posts(&state, req, next).await
    } else {
        next.run(req).await
    };
    let extensions = response.extensions_mut();
    match extensions.get_mut::<Answered>() {
        Some(answered) => answered.route = Some(route),
        None => {
            extensions.insert(Answered {
                route: Some(route),
                ..Answered::default()
            });
        }
    }
    response
}

/// Outside everything: counts and logs each request once its response is
/// known.
pub async fn record(req: Request, next: Next) -> Response {
    let started = Started {
        at: Instant::now(),
        method: req.method().clone(),
        had_session: req.headers().contains_key(MCP_SESSION_HEADER),
    };
    let response = next.run(req).await;
    log_and_count(started, response)
}

/// What [`record`] keeps of a request for its log line and counts.
struct Started {
    at: Instant,
    method: Method,
    had_session: bool,
}

/// Logs and counts one answered request.
fn log_and_count(started: Started, response: Response) -> Response {
    let Started {
        at,
        method,
        had_session,
    } = started;
    let answered = response.extensions().get::<Answered>();
    let route = answered.and_then(|a| a.route).unwrap_or(REFUSED);
    let status = response.status().as_u16();
    let elapsed = at.elapsed();
    if route == MCP_ROUTE {
        count_mcp_session(&method, had_session, &response);
    }
    let request_id = response
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let (tool, code) = answered.map_or(("", ""), |a| (a.tool.as_str(), a.code));
    if let Some(category) = answered.and_then(|a| a.failure) {
        log_failure(category, request_id, tool, code);
    }
    tracing::info!(
        target: "cairn::request",
        request_id,
        method = method.as_str(),
        route,
        status,
        tool,
        code,
        // To the microsecond: `0.484`, not `0.48371499999999996`.
        latency_ms = elapsed.as_micros() as f64 / 1000.0,
        // A str, not a format string: the text log writes it as it is.
        message = "answered",
    );
    record_request(route, &method, status, elapsed);
    let is_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !is_stream {
        return response;
    }
    let (parts, body) = response.into_parts();
    Response::from_parts(parts, Body::new(Gauged::open(body, route)))
}

const MCP_ROUTE: &str = "/mcp";
const MCP_SESSION_HEADER: &str = "mcp-session-id";

/// An initialize that got a session id opened a session; a DELETE that
/// succeeded closed one.
fn count_mcp_session(method: &Method, had_session: bool, response: &Response) {
    if method == Method::POST && !had_session && response.headers().contains_key(MCP_SESSION_HEADER)
    {
        metrics::counter!(MCP_SESSIONS_OPENED).increment(1);
    } else if method == Method::DELETE && response.status().is_success() {
        metrics::counter!(MCP_SESSIONS_CLOSED).increment(1);
    }
}

/// `GET /metrics`: the Prometheus text exposition format.
pub async fn scrape() -> Response {
    let mut response = render().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

/// A stream's body: the gauge counts it open until it is dropped.
struct Gauged {
    inner: Body,
    route: &'static str,
}

impl Gauged {
    fn open(inner: Body, route: &'static str) -> Self {
        metrics::gauge!(STREAMS_OPEN, "route" => route).increment(1.0);
        Self { inner, route }
    }
}

impl Drop for Gauged {
    fn drop(&mut self) {
        metrics::gauge!(STREAMS_OPEN, "route" => self.route).decrement(1.0);
    }
}

impl HttpBody for Gauged {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A failure on our side gets a line of its own at its level, for whoever
/// watches for warnings and errors. A refusal of the caller's request (bad
/// input, not found, a conflict) does not: the request's line (`answered`)
/// already carries its id, tool and code.
fn log_failure(category: ErrorCategory, request_id: &str, tool: &str, code: &str) {
    match category {
        ErrorCategory::Internal => tracing::error!(request_id, tool, code, "request failed"),
        ErrorCategory::Transient | ErrorCategory::Unavailable => {
            tracing::warn!(request_id, tool, code, "request failed")
        }
        _ => {}
    }
}
