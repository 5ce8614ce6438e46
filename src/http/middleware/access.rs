//! The access steps of every request, in one [`Step`] and in the order they
//! run: the token rule ([`tokens::authenticate`]), the rate limit
//! ([`Limiter::admit`], when configured; inside the token rule, so a
//! bucket per token name once it is known), the scope
//! ([`tokens::scope_refusal`]; inside the rate limit, so refused requests
//! count against the caller's bucket too), then around everything below, the
//! envelope for framework-made errors
//! ([`Framed`]).

use std::sync::Arc;

use axum::extract::Request;
use axum::response::Response;

use crate::http::HttpSettings;
use crate::http::middleware::auth as tokens;
use crate::http::middleware::framework_errors::Framed;
use crate::http::middleware::rate_limit::{Admission, Limiter, Remaining};
use crate::http::step::{After, Before, Step};

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

/// What a request that passed the steps keeps for its answer.
pub struct Admitted {
    access: Access,
    remaining: Option<Remaining>,
    framed: Framed,
}

impl Step for Access {
    type Carry = Admitted;

    /// Token, rate limit, scope; each may answer instead of going on.
    fn before(&self, mut req: Request) -> Before<Admitted> {
        let rules = &self.0;
        if let Some(refusal) = tokens::authenticate(&rules.gate, &mut req) {
            return Before::answer(refusal);
        }
        let remaining = match &rules.limiter {
            None => None,
            Some(limiter) => match limiter.admit(&req) {
                Admission::Unlimited => None,
                Admission::Allowed(remaining) => Some(remaining),
                Admission::Refused(wait) => {
                    let limiter = limiter.clone();
                    return Before::Answer(Box::pin(
                        async move { limiter.refusal(req, wait).await },
                    ));
                }
            },
        };
        if let Some(mut refusal) = tokens::scope_refusal(&req) {
            rules.mark(&mut refusal, remaining.as_ref());
            return Before::answer(refusal);
        }
        let framed = Framed::of(&req);
        Before::Pass(
            req,
            Admitted {
                access: self.clone(),
                remaining,
                framed,
            },
        )
    }

    /// The rest of the stack's answer, its framework errors put in the
    /// envelope.
    fn after(admitted: Admitted, response: Response) -> After {
        let rules = &admitted.access.0;
        let mut response = admitted.framed.answer(&rules.settings, response);
        rules.mark(&mut response, admitted.remaining.as_ref());
        After::now(response)
    }
}
