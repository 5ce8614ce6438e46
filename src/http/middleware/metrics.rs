//! HTTP metrics and the request log: every request counted and logged once
//! by its route template (axum's `MatchedPath`, carried out of the router on
//! the response), method, status and latency, with the tool and code that
//! answered; open event streams gauged until their body is dropped; and the
//! `/metrics` scrape itself.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use axum::body::Body;
use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use hyper::body::{Body as HttpBody, Frame, SizeHint};

use crate::http::AppState;
use crate::http::semantics::extract::REQUEST_ID;
use crate::http::semantics::idempotency;
use crate::http::semantics::response::Answered;
use crate::http::step::{After, Before, Step};
use crate::metrics::{
    MCP_SESSIONS_CLOSED, MCP_SESSIONS_OPENED, STREAMS_OPEN, record_request, render, route_label,
};

/// Route label of a request that no router handler (or the fallback) saw: it
/// was refused before routing (host, origin, token, head limits, time limit).
const REFUSED: &str = "refused";
/// Route label of what the fallback answered (the SPA, unknown paths).
const FALLBACK: &str = "fallback";

/// Inside the router, on every route: notes which route template matched,
/// and runs [`idempotency::keyed_posts`] on a keyed `POST`. Hand-written, not
/// a `from_fn`: a request calls its route directly, and only a keyed `POST`
/// (which runs in a task of its own) takes the route with it.
#[derive(Clone)]
pub struct TagRouteLayer(pub AppState);

impl<S> tower::Layer<S> for TagRouteLayer {
    type Service = TagRoute<S>;

    fn layer(&self, route: S) -> TagRoute<S> {
        TagRoute {
            route,
            state: self.0.clone(),
        }
    }
}

/// The service of [`TagRouteLayer`].
#[derive(Clone)]
pub struct TagRoute<S> {
    route: S,
    state: AppState,
}

impl<S> tower::Service<Request> for TagRoute<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Tagged<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.route.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let route = req
            .extensions()
            .get::<MatchedPath>()
            .map_or(FALLBACK, |m| route_label(m.as_str()));
        if !idempotency::may_be_keyed(&req) {
            let answer = self.route.call(req);
            return Tagged::Routed { answer, route };
        }
        // The ready service goes with the request; a clone stays for the next.
        let clone = self.route.clone();
        let ready = std::mem::replace(&mut self.route, clone);
        let state = self.state.clone();
        let answer = Box::pin(async move { idempotency::keyed_posts(&state, req, ready).await });
        Tagged::Keyed { answer, route }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`TagRoute`]: the route's answer (a keyed `POST`'s in
    /// a box of its own), tagged with the route template.
    #[project = Polled]
    pub enum Tagged<F> {
        Routed { #[pin] answer: F, route: &'static str },
        Keyed { answer: Pin<Box<dyn Future<Output = Response> + Send>>, route: &'static str },
    }
}

impl<F> Future for Tagged<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (mut response, route) = match self.project() {
            Polled::Routed { answer, route } => (ready!(answer.poll(cx))?, *route),
            Polled::Keyed { answer, route } => (ready!(answer.as_mut().poll(cx)), *route),
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
        Poll::Ready(Ok(response))
    }
}

/// Outside everything: counts and logs each request once its response is
/// known.
#[derive(Clone, Copy)]
pub struct Record;

/// What [`Record`] keeps of a request for its log line and counts.
pub struct Started {
    at: Instant,
    method: Method,
    had_session: bool,
}

impl Step for Record {
    type Carry = Started;

    fn before(&self, req: Request) -> Before<Started> {
        let started = Started {
            at: Instant::now(),
            method: req.method().clone(),
            had_session: req.headers().contains_key(MCP_SESSION_HEADER),
        };
        Before::Pass(req, started)
    }

    fn after(started: Started, response: Response) -> After {
        After::now(record(started, response))
    }
}

/// Logs and counts one answered request.
fn record(started: Started, response: Response) -> Response {
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
