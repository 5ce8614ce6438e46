//! The access steps of every request, in one layer and in the order they
//! run: the token rule ([`tokens::authenticate`]), the rate limit
//! ([`Limiter::admit`], when configured; inside the token rule, so a
//! bucket per token name once it is known), the scope
//! ([`tokens::scope_refusal`]; inside the rate limit, so refused requests
//! count against the caller's bucket too), then around everything below, the
//! envelope for framework-made errors
//! ([`Framed`]).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::http::HttpSettings;
use crate::http::middleware::auth as tokens;
use crate::http::middleware::framework_errors::Framed;
use crate::http::middleware::rate_limit::{Admission, Limiter, Remaining};

/// The access steps, made once and shared by every clone of the service.
#[derive(Clone)]
pub struct Access(Arc<Rules>);

/// What the steps need.
struct Rules {
    gate: tokens::Gate,
    limiter: Option<Arc<Limiter>>,
    settings: Arc<HttpSettings>,
}

impl Access {
    pub fn new(settings: &Arc<HttpSettings>) -> Self {
        Self(Arc::new(Rules {
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

impl Rules {
    /// The rate limit's headers, which go on every answer from inside it.
    fn mark(&self, response: &mut Response, remaining: Option<&Remaining>) {
        if let (Some(limiter), Some(remaining)) = (&self.limiter, remaining) {
            limiter.allowed(response, remaining);
        }
    }
}

/// The access steps as a layer (`from_fn_with_state`): token, rate limit
/// and scope, each of which may answer instead of going on; then the rest
/// of the stack's answer, its framework errors put in the envelope and the
/// rate limit's headers added.
pub async fn access(State(access): State<Access>, mut req: Request, next: Next) -> Response {
    let rules = &access.0;
    if let Some(refusal) = tokens::authenticate(&rules.gate, &mut req) {
        return refusal;
    }
    let remaining = match &rules.limiter {
        None => None,
        Some(limiter) => match limiter.admit(&req) {
            Admission::Unlimited => None,
            Admission::Allowed(remaining) => Some(remaining),
            Admission::Refused(wait) => return limiter.refusal(req, wait).await,
        },
    };
    if let Some(mut refusal) = tokens::scope_refusal(&req) {
        rules.mark(&mut refusal, remaining.as_ref());
        return refusal;
    }
    let framed = Framed::of(&req);
    let response = next.run(req).await;
    let mut response = framed.answer(&rules.settings, response);
    rules.mark(&mut response, remaining.as_ref());
    response
}
