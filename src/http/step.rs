//! One shape for the hand-written steps around the router: work on the
//! request before the stack inside (which may answer at once instead), and
//! work on the stack's answer after it. A [`Step`] says what the work is;
//! [`StepLayer`] makes it a tower layer.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

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
    fn after(carry: Self::Carry, response: Response) -> After;
}

/// What a step's `after` made of the stack's answer: most steps finish it
/// at once, without a box; one that must wait (reading a body) boxes that.
pub enum After {
    /// The final answer (taken when polled).
    Done(Option<Response>),
    /// Still to be made.
    Later(Reply),
}

impl After {
    /// The final answer, made at once.
    pub fn now(response: Response) -> Self {
        Self::Done(Some(response))
    }
}

impl Future for After {
    type Output = Response;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        match self.get_mut() {
            // Polled again after it finished (which a caller must not do):
            // an empty answer, not a panic.
            Self::Done(response) => Poll::Ready(response.take().unwrap_or_default()),
            Self::Later(reply) => reply.as_mut().poll(cx),
        }
    }
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
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = StepFuture<T, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        match self.step.before(req) {
            Before::Answer(reply) => StepFuture::Answer { reply },
            Before::Pass(req, carry) => StepFuture::Inner {
                answer: self.inner.call(req),
                carry,
            },
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`StepService`]: the step's own answer, or the stack's
    /// and then the step's work on it, in place (no box of its own).
    #[project = Polled]
    #[project_replace = Replaced]
    pub enum StepFuture<T: Step, F> {
        /// The step's own answer.
        Answer { reply: Reply },
        /// Waiting for the stack inside.
        Inner { #[pin] answer: F, carry: T::Carry },
        /// The step's work on the stack's answer.
        After { after: After },
        /// Finished.
        Done,
    }
}

impl<T, F, B, E> Future for StepFuture<T, F>
where
    T: Step,
    F: Future<Output = Result<axum::http::Response<B>, E>>,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Output = Result<Response, E>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            match self.as_mut().project() {
                Polled::Answer { reply } => return reply.as_mut().poll(cx).map(Ok),
                Polled::After { after } => return Pin::new(after).poll(cx).map(Ok),
                Polled::Done => return Poll::Ready(Ok(Response::default())),
                Polled::Inner { answer, .. } => {
                    let answered = ready!(answer.poll(cx));
                    let Replaced::Inner { carry, .. } = self.as_mut().project_replace(Self::Done)
                    else {
                        unreachable!("the state was `Inner` just above")
                    };
                    let response = answered?.map(Body::new);
                    self.set(Self::After {
                        after: T::after(carry, response),
                    });
                }
            }
        }
    }
}
