//! One shape for the hand-written steps around the router: work on the
//! request before the stack inside (which may answer at once instead), and
//! work on the stack's answer after it. A [`Step`] says what the work is;
//! [`StepLayer`] makes it a tower layer.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;
use hyper::body::Body as HttpBody;

/// An answer made without the stack inside.
pub type Reply = Pin<Box<dyn Future<Output = Response> + Send>>;

/// What a step decided about a request before the stack inside saw it.
#[expect(
    clippy::large_enum_variant,
    reason = "returned and matched at once, never stored; boxing the request would cost an allocation a request"
)]
pub enum Before<C> {
    /// Answered at once; the stack inside is not called.
    Answer(Reply),
    /// The request goes on, with what the step keeps for its answer.
    Pass(Request, C),
}

impl<C> Before<C> {
    /// Answered at once with a response already made.
    pub fn answer(response: Response) -> Self {
        Self::Answer(Box::pin(std::future::ready(response)))
    }
}

/// Work around the stack inside, run by [`StepLayer`].
pub trait Step {
    /// What `before` hands to `after` for a request that went on.
    type Carry: Send + 'static;

    /// Reads or changes the request; takes it by value, as an answer made
    /// here may consume it.
    fn before(&self, req: Request) -> Before<Self::Carry>;

    /// The final answer, from the stack's.
    fn after(
        carry: Self::Carry,
        response: Response,
    ) -> impl Future<Output = Response> + Send + 'static;
}

/// The layer of a [`Step`]. Hand-written, not a `from_fn`: it calls the
/// stack inside it directly, where a `from_fn` layer clones all of that
/// stack on every request.
#[derive(Clone, Copy)]
pub struct StepLayer<T>(T);

impl<T> StepLayer<T> {
    pub fn new(step: T) -> Self {
        Self(step)
    }
}

impl<T: Clone, S> tower::Layer<S> for StepLayer<T> {
    type Service = StepService<T, S>;

    fn layer(&self, inner: S) -> StepService<T, S> {
        StepService {
            step: self.0.clone(),
            inner,
        }
    }
}

/// The service of [`StepLayer`].
#[derive(Clone)]
pub struct StepService<T, S> {
    step: T,
    inner: S,
}

impl<T, S, B> tower::Service<Request> for StepService<T, S>
where
    T: Step,
    S: tower::Service<Request, Response = axum::http::Response<B>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = StepFuture<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        match self.step.before(req) {
            Before::Answer(reply) => StepFuture::Answer(reply),
            Before::Pass(req, carry) => {
                let answer = self.inner.call(req);
                StepFuture::Pass(Box::pin(async move {
                    let response = answer.await?.map(Body::new);
                    Ok(T::after(carry, response).await)
                }))
            }
        }
    }
}

/// The future of [`StepService`]: either way one box a request.
pub enum StepFuture<E> {
    /// The step's own answer.
    Answer(Reply),
    /// The stack's answer, then the step's work on it.
    Pass(Pin<Box<dyn Future<Output = Result<Response, E>> + Send>>),
}

impl<E> Future for StepFuture<E> {
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Self::Answer(reply) => reply.as_mut().poll(cx).map(Ok),
            Self::Pass(answer) => answer.as_mut().poll(cx),
        }
    }
}
