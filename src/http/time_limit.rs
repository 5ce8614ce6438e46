//! The request's time limit (`--timeout-secs`): past it, the answer is a
//! plain `503`, which [`Framed`](crate::http::middleware::framework_errors::Framed) makes the
//! `timeout` envelope. The answer is polled before the timer, and the timer
//! is armed only when the answer is not ready: a read answered at once (one
//! served from the read cache) never registers a timer with the runtime,
//! where tower-http's layer registered and cancelled one on every request.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::http::{Response, StatusCode};
use tokio::time::Timeout;

/// Answers `503` for a request whose answer is not ready within `limit`.
#[derive(Clone)]
pub struct TimeLimit<S> {
    inner: S,
    limit: Duration,
}

impl<S> TimeLimit<S> {
    /// `inner` within `limit` (the layer is `tower::layer::layer_fn` of this).
    pub fn new(inner: S, limit: Duration) -> Self {
        Self { inner, limit }
    }
}

impl<S, R, B> tower::Service<R> for TimeLimit<S>
where
    S: tower::Service<R, Response = Response<B>, Error = Infallible>,
    B: Default,
{
    type Response = Response<B>;
    type Error = Infallible;
    type Future = Limited<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: R) -> Self::Future {
        Limited {
            // Its deadline is set now; its timer, only if polled pending.
            answer: tokio::time::timeout(self.limit, self.inner.call(req)),
        }
    }
}

pin_project_lite::pin_project! {
    /// The answer, or a `503` once the limit has passed.
    pub struct Limited<F> {
        #[pin]
        answer: Timeout<F>,
    }
}

impl<F, B> Future for Limited<F>
where
    F: Future<Output = Result<Response<B>, Infallible>>,
    B: Default,
{
    type Output = Result<Response<B>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(match ready!(self.project().answer.poll(cx)) {
            Ok(answer) => answer,
            Err(_elapsed) => {
                let mut lapsed = Response::new(B::default());
                *lapsed.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
                Ok(lapsed)
            }
        })
    }
}
