//! The request's id and its span, in one layer: a request that brought no
//! `x-request-id` gets one, every log line of the request carries it (the
//! span is entered while the stack inside takes the request and while it
//! makes the answer), and the answer carries it back. One hand-written layer
//! where tower-http needed three (set, propagate, trace), and no wrapper
//! around the response body.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::response::Response;
use tracing::Instrument;
use tracing::instrument::Instrumented;

use crate::envelope::new_request_id;
use crate::http::semantics::extract::REQUEST_ID;

/// The layer of [`Traced`].
#[derive(Clone, Copy)]
pub struct TracedLayer;

impl<S> tower::Layer<S> for TracedLayer {
    type Service = Traced<S>;

    fn layer(&self, inner: S) -> Traced<S> {
        Traced(inner)
    }
}

/// Gives the request its id and span; see the module.
#[derive(Clone)]
pub struct Traced<S>(S);

impl<S> tower::Service<Request> for Traced<S>
where
    S: tower::Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Instrumented<Identified<S::Future>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        let id = id_of(&mut req);
        let span = tracing::info_span!(
            "http",
            method = %req.method(),
            path = %req.uri().path(),
            request_id = %id.to_str().unwrap_or_default(),
            // The token's name (never its secret), once the token rule knows it.
            token = tracing::field::Empty,
        );
        let answer = span.in_scope(|| self.0.call(req));
        Identified {
            answer,
            id: Some(id),
        }
        .instrument(span)
    }
}

pin_project_lite::pin_project! {
    /// The stack's answer, given the request's id.
    pub struct Identified<F> {
        #[pin]
        answer: F,
        id: Option<HeaderValue>,
    }
}

impl<F, E> Future for Identified<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut response = ready!(this.answer.poll(cx))?;
        if let Some(id) = this.id.take() {
            response.headers_mut().entry(REQUEST_ID).or_insert(id);
        }
        Poll::Ready(Ok(response))
    }
}

/// The id the request brought (the head limits have dropped a hostile one),
/// or a new one, set on the request for everything inside.
fn id_of(req: &mut Request) -> HeaderValue {
    if let Some(id) = req.headers().get(&REQUEST_ID) {
        return id.clone();
    }
    let id = HeaderValue::try_from(new_request_id())
        .unwrap_or_else(|_| HeaderValue::from_static("unidentified"));
    req.headers_mut().insert(REQUEST_ID, id.clone());
    id
}
