//! Rate limits per client on `/api`, `/mcp` and `/metrics` (health probes
//! exempt): a GCRA bucket per token name, or per peer address for calls
//! without a token (the `X-Forwarded-For` a trusted proxy appended, when
//! `--trust-forwarded-for` says there is one). Every limited answer carries
//! the IETF `RateLimit-Policy` and `RateLimit` fields
//! (draft-ietf-httpapi-ratelimit-headers, structured-field form); over the
//! limit, REST gets 429 `rate_limited` with `Retry-After`, MCP a refused
//! JSON-RPC request in MCP's own shape ([`crate::mcp::refusal`]).

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use crate::auth::Caller;
use crate::envelope::{ErrorCode, ToolError};
use crate::http::middleware::is_probe;
use crate::http::semantics::extract::request_id_of;
use crate::http::semantics::response::ApiResponse;
use crate::tools::projects::InProject;

pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");
pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");

/// The policy's name in the headers.
const POLICY: &str = "default";

/// Buckets are dropped once full again, every this many checks, so a
/// stream of one-off addresses does not grow the table without bound.
const SWEEP_EVERY: u64 = 4096;

/// How fast each client may call: `per_second` on average, `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub per_second: NonZeroU32,
    pub burst: NonZeroU32,
}

impl RateLimit {
    /// The limit of a server on a non-loopback address when none is given:
    /// 50 requests a second per client, 100 at once (a board, its tasks and
    /// an agent's burst of calls fit; a runaway loop does not).
    pub const PUBLIC_DEFAULT: RateLimit = RateLimit {
        per_second: NonZeroU32::new(50).unwrap(),
        burst: NonZeroU32::new(100).unwrap(),
    };

    /// `per_second` with `burst` (default: twice `per_second`); 0 turns limits off.
    pub fn new(per_second: u32, burst: Option<u32>) -> Option<Self> {
        let per_second = NonZeroU32::new(per_second)?;
        let burst = burst
            .and_then(NonZeroU32::new)
            .unwrap_or(per_second.saturating_mul(NonZeroU32::new(2).unwrap()));
        Some(Self { per_second, burst })
    }

    /// The window the quota is stated over: the time a drained bucket
    /// takes to fill again, in whole seconds.
    fn window_secs(self) -> u32 {
        self.burst.get().div_ceil(self.per_second.get())
    }

    /// `RateLimit-Policy: "default";q=BURST;w=WINDOW`.
    pub fn policy_header(self) -> HeaderValue {
        HeaderValue::try_from(format!(
            "\"{POLICY}\";q={};w={}",
            self.burst,
            self.window_secs()
        ))
        .expect("digits and quotes are a valid header value")
    }
}

type Keyed =
    RateLimiter<String, DefaultKeyedStateStore<String>, DefaultClock, StateInformationMiddleware>;

/// The buckets of every client.
pub struct Limiter {
    limit: RateLimit,
    policy: HeaderValue,
    buckets: Keyed,
    trust_forwarded_for: bool,
    body_limit: usize,
    checks: AtomicU64,
}

/// A bucket's state after a check: what remains, and when it is full again.
pub struct Remaining {
    units: u32,
    reset: Duration,
}

impl Limiter {
    pub fn new(limit: RateLimit, trust_forwarded_for: bool, body_limit: usize) -> Self {
        let quota = Quota::per_second(limit.per_second).allow_burst(limit.burst);
        Self {
            limit,
            policy: limit.policy_header(),
            buckets: RateLimiter::keyed(quota).with_middleware::<StateInformationMiddleware>(),
            trust_forwarded_for,
            body_limit,
            checks: AtomicU64::new(0),
        }
    }

    /// Takes one unit from `key`'s bucket, or says how long until one is there.
    fn check(&self, key: &String) -> Result<Remaining, Duration> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.buckets.retain_recent();
            self.buckets.shrink_to_fit();
        }
        match self.buckets.check_key(key) {
            Ok(state) => {
                let units = state.remaining_burst_capacity();
                let missing = self.limit.burst.get().saturating_sub(units);
                let reset = Duration::from_secs_f64(
                    f64::from(missing) / f64::from(self.limit.per_second.get()),
                );
                Ok(Remaining { units, reset })
            }
            Err(not_until) => Err(not_until.wait_time_from(DefaultClock::default().now())),
        }
    }

    /// Whose bucket a request draws from: its token's, else its address's,
    /// in the project the request names (each project has its own).
    fn key_of(&self, req: &Request) -> String {
        let project = req
            .extensions()
            .get::<InProject>()
            .map_or(crate::store::DEFAULT_PROJECT, |p| p.0.as_str());
        format!("{}@{project}", self.client_of(req))
    }

    fn client_of(&self, req: &Request) -> String {
        if let Some(caller) = req.extensions().get::<Caller>()
            && !caller.is_anonymous()
        {
            return format!("token:{}", caller.name);
        }
        let forwarded = self
            .trust_forwarded_for
            .then(|| forwarded_for(req.headers()))
            .flatten();
        let peer = req
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip());
        match forwarded.or(peer) {
            Some(ip) => format!("addr:{ip}"),
            None => "addr:unknown".to_owned(),
        }
    }

    fn headers(&self, headers: &mut HeaderMap, remaining: u32, reset: Duration) {
        let t = reset.as_secs_f64().ceil() as u64;
        let value = format!("\"{POLICY}\";r={remaining};t={t}");
        if let Ok(value) = HeaderValue::try_from(value) {
            headers.insert(RATELIMIT, value);
        }
        headers.insert(RATELIMIT_POLICY, self.policy.clone());
    }
}

/// The client address the nearest proxy saw: the last `X-Forwarded-For`
/// entry (the one the trusted proxy appended; earlier ones are the
/// client's word and may be forged).
fn forwarded_for(headers: &HeaderMap) -> Option<IpAddr> {
    let last = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .rfind(|v| !v.is_empty())?;
    last.parse().ok()
}

fn limited(path: &str) -> bool {
    (path.starts_with("/api") || path.starts_with("/mcp") || path == "/metrics") && !is_probe(path)
}

/// What the rate limit says of a request, decided before it goes on (by
/// [`crate::http::middleware::access`], inside the token rule, so the caller is known).
pub enum Admission {
    /// Not a limited path: it goes on, its answer without `RateLimit` headers.
    Unlimited,
    /// Within the limit: it goes on, and [`Limiter::allowed`] marks its answer.
    Allowed(Remaining),
    /// Over the limit: [`Limiter::refusal`] answers it.
    Refused(Duration),
}

impl Limiter {
    pub fn admit(&self, req: &Request) -> Admission {
        if !limited(req.uri().path()) {
            return Admission::Unlimited;
        }
        let key = self.key_of(req);
        match self.check(&key) {
            Ok(remaining) => Admission::Allowed(remaining),
            Err(wait) => {
                tracing::info!(client = %key, wait_ms = wait.as_millis() as u64, "rate limited");
                Admission::Refused(wait)
            }
        }
    }

    /// The `RateLimit` headers on the answer of an allowed request.
    pub fn allowed(&self, response: &mut Response, remaining: &Remaining) {
        self.headers(response.headers_mut(), remaining.units, remaining.reset);
    }

    /// The answer of a refused request, headers included.
    pub async fn refusal(&self, req: Request, wait: Duration) -> Response {
        let mut response = refuse(self, req, wait).await;
        self.headers(response.headers_mut(), 0, wait);
        response
    }
}

/// `rate_limited`, with a retry hint of `wait` (at least a millisecond).
fn rate_limited(wait: Duration) -> ToolError {
    let ms = (wait.as_millis() as u64).max(1);
    ToolError::new(
        ErrorCode::RateLimited,
        "Too many requests from this client; retry after `retry_after_ms`.",
    )
    .retry_after(ms)
}

/// A 429 made by some other layer (no envelope yet): `rate_limited`, with
/// the wait its `Retry-After` gives.
pub fn layer_refusal(headers: &HeaderMap) -> ToolError {
    let secs = headers
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1);
    rate_limited(Duration::from_secs(secs))
}

async fn refuse(limiter: &Limiter, req: Request, wait: Duration) -> Response {
    let request_id = request_id_of(req.headers());
    let error = rate_limited(wait);
    if req.uri().path().starts_with("/mcp") && req.method() == Method::POST {
        let body = axum::body::to_bytes(req.into_body(), limiter.body_limit).await;
        let answer = body
            .ok()
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
            .and_then(|message| crate::mcp::refusal::refuse_request(&message, error.clone()));
        if let Some(answer) = answer {
            let mut response = (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/json")],
                Body::from(answer.to_string()),
            )
                .into_response();
            insert_retry_after(response.headers_mut(), wait);
            return response;
        }
    }
    // `ApiResponse` sets `Retry-After` from the error's `retry_after_ms`.
    ApiResponse::error(error, &request_id).into_response()
}

fn insert_retry_after(headers: &mut HeaderMap, wait: Duration) {
    let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
    headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_states_the_burst_over_the_time_it_takes_to_refill() {
        let limit = RateLimit::new(20, Some(50)).unwrap();
        assert_eq!(limit.policy_header(), "\"default\";q=50;w=3");
        assert_eq!(RateLimit::new(5, None).unwrap().burst.get(), 10);
        assert_eq!(RateLimit::new(0, Some(5)), None);
    }

    #[test]
    fn only_the_last_forwarded_address_counts() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-forwarded-for",
            HeaderValue::from_static("6.6.6.6, 10.0.0.7"),
        );
        assert_eq!(forwarded_for(&headers), "10.0.0.7".parse().ok());
        headers.insert(
            "x-forwarded-for",
            HeaderValue::from_static("not an address"),
        );
        assert_eq!(forwarded_for(&headers), None);
    }
}
