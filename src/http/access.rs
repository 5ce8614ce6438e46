//! The access steps of every request, in one layer and in the order they
//! run: the token rule ([`tokens::authenticate`]), the rate limit
//! ([`Limiter::admit`], when configured; inside the token rule, so a
//! bucket per token name once it is known), the scope
//! ([`tokens::scope_refusal`]; inside the rate limit, so refused requests
//! count against the caller's bucket too), then around everything below, the
//! envelope for framework-made errors
//! ([`Framed`]). One hand-written layer rather than four `from_fn`s: each
//! `from_fn` layer clones the whole stack inside it on every request.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;
use hyper::body::Body as HttpBody;

use super::framework::Framed;
use super::ratelimit::{Admission, Limiter};
use super::{HttpSettings, tokens};

/// What the steps need, made once.
pub struct Access {
    gate: tokens::Gate,
    limiter: Option<Arc<Limiter>>,
    settings: Arc<HttpSettings>,
}

/// The layer of the steps. Hand-written, not a `from_fn`: it calls the stack
/// inside it directly instead of cloning all of it on every request.
#[derive(Clone)]
pub struct AccessLayer(Arc<Access>);

impl AccessLayer {
    pub fn new(settings: &Arc<HttpSettings>) -> Self {
        Self(Arc::new(Access {
            gate: tokens::Gate::new(settings),
            limiter: settings.rate_limit.map(|limit| {
                Arc::new(Limiter::new(
                    limit,
                    settings.trust_forwarded_for,
                    settings.body_limit,
                ))
            }),
            settings: settings.clone(),
        }))
    }
}

impl<S> tower::Layer<S> for AccessLayer {
    type Service = Steps<S>;

    fn layer(&self, inner: S) -> Steps<S> {
        Steps {
            access: self.0.clone(),
            inner,
        }
    }
}

/// The service of [`AccessLayer`].
#[derive(Clone)]
pub struct Steps<S> {
    access: Arc<Access>,
    inner: S,
}

type Answer<E> = Pin<Box<dyn Future<Output = Result<Response, E>> + Send>>;

impl<S, B> tower::Service<Request> for Steps<S>
where
    S: tower::Service<Request, Response = axum::http::Response<B>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Answer<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    /// Token, rate limit, scope, then the rest of the stack with its
    /// framework errors put in the envelope; each step may answer instead of
    /// going on.
    fn call(&mut self, mut req: Request) -> Self::Future {
        let access = self.access.clone();
        if let Some(refusal) = tokens::authenticate(&access.gate, &mut req) {
            return Box::pin(async move { Ok(refusal) });
        }
        // The rate limit's headers go on every answer from inside it.
        let admitted = match &access.limiter {
            None => None,
            Some(limiter) => match limiter.admit(&req) {
                Admission::Unlimited => None,
                Admission::Allowed(remaining) => Some((limiter.clone(), remaining)),
                Admission::Refused(wait) => {
                    let limiter = limiter.clone();
                    return Box::pin(async move { Ok(limiter.refusal(req, wait).await) });
                }
            },
        };
        let marked = move |mut response: Response| {
            if let Some((limiter, remaining)) = &admitted {
                limiter.allowed(&mut response, remaining);
            }
            response
        };
        if let Some(refusal) = tokens::scope_refusal(&req) {
            return Box::pin(async move { Ok(marked(refusal)) });
        }
        let framed = Framed::of(&req);
        let answer = self.inner.call(req);
        Box::pin(async move {
            let response = answer.await?.map(Body::new);
            Ok(marked(framed.answer(&access.settings, response)))
        })
    }
}
