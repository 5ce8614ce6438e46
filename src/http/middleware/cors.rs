//! `OPTIONS` as HTTP means it (RFC 9110 §9.3.7): what a resource allows,
//! said in `Allow` on a `204`, and `OPTIONS *` for the server as a whole.
//!
//! tower-http's CORS layer answers every `OPTIONS` as a preflight (a `200`
//! with no `Allow`, at any path, one that names nothing included), so only
//! real preflights (`Access-Control-Request-Method` set) go through it here;
//! any other `OPTIONS` goes to the stack inside, whose `405` for it carries
//! the route's `Allow` (an unknown path stays `404`).
//!
//! With no origin allowed besides the server's own (the default), all CORS
//! does to any other request is add its `Vary`: that request goes to the
//! stack inside directly, and its answer gets the same `Vary`.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use tower::Layer;
use tower_http::cors::{self, AllowOrigin, Cors, CorsLayer};

use crate::http::middleware::rate_limit::{RATELIMIT, RATELIMIT_POLICY};
use crate::http::semantics::extract::REQUEST_ID;
use crate::http::semantics::response::{ACCEPT_PATCH, JSON};

/// Every method some route of the server takes: the `Allow` of `OPTIONS *`.
const SERVER_ALLOWS: &str = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";

/// The method every route takes besides its own: this one.
pub const OPTIONS: &str = "OPTIONS";

/// [`CorsLayer`] for everything but an `OPTIONS` that is no preflight.
#[derive(Clone)]
pub struct OptionsLayer {
    cors: CorsLayer,
    /// No origin is allowed but the server's own.
    same_origin: bool,
}

impl OptionsLayer {
    /// CORS for the browser origins allowed besides the server's own.
    pub fn new(origins: &[HeaderValue]) -> Self {
        Self {
            cors: cors(origins),
            same_origin: origins.is_empty(),
        }
    }
}

impl<S> Layer<S> for OptionsLayer {
    type Service = OptionsService<S>;

    fn layer(&self, inner: S) -> OptionsService<S> {
        OptionsService {
            cors: self.cors.layer(inner),
            same_origin: self.same_origin,
        }
    }
}

/// The `Vary` tower-http's CORS layer with no origin allowed adds to every
/// answer (a test compares them).
const CORS_VARY: &str = "origin";

/// The CORS layer for `origins`; none: no CORS headers at all.
fn cors(origins: &[HeaderValue]) -> CorsLayer {
    if origins.is_empty() {
        return CorsLayer::new();
    }
    CorsLayer::new()
        .allow_origin(AllowOrigin::list(origins.iter().cloned()))
        .allow_methods([
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
        ])
        .allow_headers([
            header::CONTENT_TYPE,
            header::AUTHORIZATION,
            header::IF_MATCH,
            header::IF_NONE_MATCH,
        ])
        .expose_headers([
            REQUEST_ID,
            header::ETAG,
            header::RETRY_AFTER,
            RATELIMIT,
            RATELIMIT_POLICY,
        ])
}

/// The service of [`OptionsLayer`]: the same stack inside, with CORS or
/// without.
#[derive(Clone)]
pub struct OptionsService<S> {
    /// The stack inside, in CORS; a plain `OPTIONS`, and with
    /// `same_origin` any request but a preflight, calls it directly (one
    /// stack, not two).
    cors: Cors<S>,
    same_origin: bool,
}

type Answer<E> = Pin<Box<dyn Future<Output = Result<Response, E>> + Send>>;

impl<S> tower::Service<Request> for OptionsService<S>
where
    S: tower::Service<Request, Response = Response>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = OptionsFuture<cors::ResponseFuture<S::Future>, S::Future, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.cors.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let plain_options = req.method() == Method::OPTIONS
            && !req
                .headers()
                .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
        if self.same_origin && req.method() != Method::OPTIONS {
            return OptionsFuture::Varied {
                answer: self.cors.get_mut().call(req),
            };
        }
        if !plain_options {
            return OptionsFuture::Cors {
                answer: self.cors.call(req),
            };
        }
        if req.uri() == "*" {
            return OptionsFuture::Plain {
                answer: Box::pin(std::future::ready(Ok(allows(
                    Response::new(Body::empty()),
                    HeaderValue::from_static(SERVER_ALLOWS),
                )))),
            };
        }
        let inner = self.cors.get_mut().call(req);
        let answer = Box::pin(async move {
            let response = inner.await?;
            if response.status() != StatusCode::METHOD_NOT_ALLOWED {
                return Ok(response);
            }
            let allow = response.headers().get(header::ALLOW).map(with_options);
            Ok(match allow {
                Some(allow) => allows(response, allow),
                None => response,
            })
        });
        OptionsFuture::Plain { answer }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`OptionsService`], unboxed but for a plain `OPTIONS`:
    /// the CORS layer's, the stack's with CORS's `Vary` added, or the
    /// `OPTIONS` answer.
    #[project = Polled]
    pub enum OptionsFuture<F, G, E> {
        Cors { #[pin] answer: F },
        Varied { #[pin] answer: G },
        Plain { answer: Answer<E> },
    }
}

impl<F, G, E> Future for OptionsFuture<F, G, E>
where
    F: Future<Output = Result<Response, E>>,
    G: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            Polled::Cors { answer } => answer.poll(cx),
            Polled::Varied { answer } => answer.poll(cx).map_ok(|mut response| {
                // Appended, as CORS does: a `Vary` already set stays.
                response
                    .headers_mut()
                    .append(header::VARY, HeaderValue::from_static(CORS_VARY));
                response
            }),
            Polled::Plain { answer } => answer.as_mut().poll(cx),
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

#[cfg(test)]
mod tests {
    use super::*;
    use tower::ServiceExt;

    /// The answers of a GET without and with an `Origin`, through the layer
    /// over a stack that answers 200 with a `Vary` of its own.
    async fn vary_of(layer: OptionsLayer, origin: Option<&'static str>) -> Vec<HeaderValue> {
        let stack = layer.layer(tower::service_fn(|_: Request| {
            let mut response = Response::new(Body::empty());
            response
                .headers_mut()
                .insert(header::VARY, HeaderValue::from_static("accept-encoding"));
            std::future::ready(Ok::<_, std::convert::Infallible>(response))
        }));
        let mut request = Request::new(Body::empty());
        if let Some(origin) = origin {
            request
                .headers_mut()
                .insert(header::ORIGIN, HeaderValue::from_static(origin));
        }
        let response = stack.oneshot(request).await.unwrap();
        response
            .headers()
            .get_all(header::VARY)
            .iter()
            .cloned()
            .collect()
    }

    #[tokio::test]
    async fn a_same_origin_answer_varies_as_the_cors_layer_makes_it() {
        let cors_only = OptionsLayer {
            cors: CorsLayer::new(),
            same_origin: false,
        };
        for origin in [None, Some("http://elsewhere.example")] {
            let ours = vary_of(OptionsLayer::new(&[]), origin).await;
            assert_eq!(ours, vary_of(cors_only.clone(), origin).await);
            assert_eq!(ours, ["accept-encoding", CORS_VARY]);
        }
    }
}
