//! The access steps of every request, in one layer and in the order they
//! run: the token rule ([`tokens::authenticate`]), the rate limit
//! ([`ratelimit::limit`], when configured; inside the token rule, so a
//! bucket per token name once it is known), the scope
//! ([`tokens::scope_refusal`]; inside the rate limit, so refused requests
//! count against the caller's bucket too), then around everything below, the
//! envelope for framework-made errors
//! ([`framework::envelope_framework_errors`]). One `from_fn` rather than four:
//! each `from_fn` layer clones the whole stack inside it and boxes a future on
//! every request.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::{HttpSettings, framework, ratelimit, tokens};

/// What the steps need, made once.
pub struct Access {
    gate: tokens::Gate,
    limiter: Option<ratelimit::Limiter>,
    settings: Arc<HttpSettings>,
}

impl Access {
    pub fn new(settings: &Arc<HttpSettings>) -> Self {
        Self {
            gate: tokens::Gate::new(settings),
            limiter: settings.rate_limit.map(|limit| {
                ratelimit::Limiter::new(limit, settings.trust_forwarded_for, settings.body_limit)
            }),
            settings: settings.clone(),
        }
    }
}

/// Token, rate limit, scope, then the rest of the stack with its framework
/// errors put in the envelope; each step may answer instead of going on.
pub async fn steps(State(access): State<Arc<Access>>, mut req: Request, next: Next) -> Response {
    if let Some(refusal) = tokens::authenticate(&access.gate, &mut req) {
        return refusal;
    }
    let settings = &*access.settings;
    let scoped = |req: Request| async move {
        if let Some(refusal) = tokens::scope_refusal(&req) {
            return refusal;
        }
        framework::envelope_framework_errors(settings, req, next).await
    };
    match &access.limiter {
        Some(limiter) => ratelimit::limit(limiter, req, scoped).await,
        None => scoped(req).await,
    }
}
