//! `OPTIONS` as HTTP means it (RFC 9110 §9.3.7): what a resource allows,
//! said in `Allow` on a `204`, and `OPTIONS *` for the server as a whole.
//!
//! tower-http's CORS layer answers every `OPTIONS` as a preflight (a `200`
//! with no `Allow`, at any path, one that names nothing included), so only
//! real preflights (`Access-Control-Request-Method` set) go through it here;
//! any other `OPTIONS` goes to the stack inside, whose `405` for it carries
//! the route's `Allow` (an unknown path stays `404`).

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use tower::Layer;
use tower_http::cors::{self, Cors, CorsLayer};

use super::response::{ACCEPT_PATCH, JSON};

/// Every method some route of the server takes: the `Allow` of `OPTIONS *`.
const SERVER_ALLOWS: &str = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";

/// The method every route takes besides its own: this one.
pub const OPTIONS: &str = "OPTIONS";

/// [`CorsLayer`] for everything but an `OPTIONS` that is no preflight.
#[derive(Clone)]
pub struct OptionsLayer(pub CorsLayer);

impl<S> Layer<S> for OptionsLayer {
    type Service = OptionsService<S>;

    fn layer(&self, inner: S) -> OptionsService<S> {
        OptionsService {
            cors: self.0.layer(inner),
        }
    }
}

/// The service of [`OptionsLayer`]: the same stack inside, with CORS or
/// without.
#[derive(Clone)]
pub struct OptionsService<S> {
    /// The stack inside, in CORS; a plain `OPTIONS` calls it directly (one
    /// stack, not two: the service is cloned for every request).
    cors: Cors<S>,
}

type Answer<E> = Pin<Box<dyn Future<Output = Result<Response, E>> + Send>>;

impl<S> tower::Service<Request> for OptionsService<S>
where
    S: tower::Service<Request, Response = Response>,
    S::Future: Send + Unpin + 'static,
    S::Error: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = OptionsFuture<cors::ResponseFuture<S::Future>, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.cors.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let plain_options = req.method() == Method::OPTIONS
            && !req
                .headers()
                .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
        if !plain_options {
            return OptionsFuture::Cors(self.cors.call(req));
        }
        if req.uri() == "*" {
            return OptionsFuture::Plain(Box::pin(std::future::ready(Ok(allows(
                Response::new(Body::empty()),
                HeaderValue::from_static(SERVER_ALLOWS),
            )))));
        }
        let answer = self.cors.get_mut().call(req);
        OptionsFuture::Plain(Box::pin(async move {
            let response = answer.await?;
            if response.status() != StatusCode::METHOD_NOT_ALLOWED {
                return Ok(response);
            }
            let allow = response.headers().get(header::ALLOW).map(with_options);
            Ok(match allow {
                Some(allow) => allows(response, allow),
                None => response,
            })
        }))
    }
}

/// The future of [`OptionsService`]: the CORS layer's, unboxed (every
/// request but a plain `OPTIONS` takes it), or the `OPTIONS` answer.
pub enum OptionsFuture<F, E> {
    Cors(F),
    Plain(Answer<E>),
}

impl<F, E> Future for OptionsFuture<F, E>
where
    F: Future<Output = Result<Response, E>> + Unpin,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Self::Cors(answer) => Pin::new(answer).poll(cx),
            Self::Plain(answer) => answer.as_mut().poll(cx),
        }
    }
}

/// `allow` with `OPTIONS` in it (the envelope's `405`s list it already;
/// `/mcp`'s does not).
fn with_options(allow: &HeaderValue) -> HeaderValue {
    if lists(allow, OPTIONS) {
        return allow.clone();
    }
    let mut list = allow.as_bytes().to_vec();
    list.extend_from_slice(b", OPTIONS");
    HeaderValue::from_bytes(&list).unwrap_or_else(|_| allow.clone())
}

/// `allow` names `method`.
fn lists(allow: &HeaderValue, method: &str) -> bool {
    allow
        .to_str()
        .is_ok_and(|list| list.split(',').any(|m| m.trim() == method))
}

/// `response` as a `204` that says `allow` (and, with `PATCH` in it, what a
/// patch may be), its other headers kept.
fn allows(response: Response, allow: HeaderValue) -> Response {
    let (mut parts, _) = response.into_parts();
    parts.status = StatusCode::NO_CONTENT;
    parts.headers.remove(header::CONTENT_TYPE);
    parts.headers.remove(header::CONTENT_LENGTH);
    // What a PATCH may send (RFC 5789 §3.1).
    if lists(&allow, "PATCH") {
        parts
            .headers
            .insert(ACCEPT_PATCH, HeaderValue::from_static(JSON));
    }
    parts.headers.insert(header::ALLOW, allow);
    Response::from_parts(parts, Body::empty())
}
