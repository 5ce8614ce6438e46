//! The token rule: with tokens configured, `/api`, `/mcp` and `/metrics`
//! need `Authorization: Bearer <secret>` of one of them (health probes
//! excepted), and what the request does must fit the token's scope: a read
//! (GET, HEAD) needs `read`, any other method `write`, `/metrics` `admin`.
//! MCP requests are checked per tool by the MCP surface, which reads the
//! [`Caller`] this puts in the request's extensions.

use axum::extract::Request;
use axum::http::{HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};

use crate::auth::tokens::Tokens;
use crate::auth::{Caller, Scope};
use crate::envelope::{ErrorCode, ToolError};
use crate::http::HttpSettings;
use crate::http::middleware::is_probe;
use crate::http::semantics::extract::request_id_of;
use crate::http::semantics::response::ApiResponse;
use crate::tools::projects::InProject;

/// Every token the gateway accepts: `--token` (as `default`) and the named ones.
pub struct Gate {
    tokens: Tokens,
}

impl Gate {
    pub fn new(settings: &HttpSettings) -> Self {
        let mut tokens = settings.tokens.clone();
        if let Some(secret) = &settings.token
            && let Err(reason) = tokens.add_default(secret)
        {
            // `serve` refuses this before it starts; a hand-made setting
            // keeps the named tokens and says why `--token` is not among them.
            tracing::warn!(reason, "--token is not accepted");
        }
        Self { tokens }
    }
}

/// The token rule: a refusal (401), or `None` with the request's [`Caller`]
/// in its extensions ([`scope_refusal`] checks what it may do); unguarded
/// paths go on without one when tokens are configured.
pub fn authenticate(gate: &Gate, req: &mut Request) -> Option<Response> {
    let path = req.uri().path();
    // A project's health is no public probe: it tells of the project.
    let probe = is_probe(path) && req.extensions().get::<InProject>().is_none();
    let guarded =
        (path.starts_with("/api") || path.starts_with("/mcp") || path == "/metrics") && !probe;
    let caller = if gate.tokens.is_empty() {
        Caller::anonymous()
    } else if !guarded {
        return None;
    } else {
        let Some(caller) = presented(req).and_then(|secret| gate.tokens.caller_for(secret)) else {
            return Some(unauthorized(req));
        };
        tracing::Span::current().record("token", &*caller.name);
        caller
    };
    req.extensions_mut().insert(caller);
    None
}

/// The refusal of what the caller's scope does not allow, if it does not.
pub fn scope_refusal(req: &Request) -> Option<Response> {
    let needed = needed_scope(req.method(), req.uri().path());
    if let (Some(caller), Some(needed)) = (req.extensions().get::<Caller>(), needed)
        && let Err(error) = caller.check(needed)
    {
        tracing::info!("scope refused");
        return Some(ApiResponse::error(error, &request_id_of(req.headers())).into_response());
    }
    None
}

/// The secret of `Authorization: Bearer <secret>`; the scheme's name is
/// case-insensitive (RFC 9110 §11.1).
fn presented(req: &Request) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, secret) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| secret.trim_start_matches(' '))
}

/// The scope a request needs, when the gateway decides it (MCP decides per tool).
fn needed_scope(method: &Method, path: &str) -> Option<Scope> {
    if path == "/metrics" {
        return Some(Scope::Admin);
    }
    if path.starts_with("/mcp") {
        return None;
    }
    let reads = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    Some(if reads { Scope::Read } else { Scope::Write })
}

/// The 401 answer for a request without a bearer token the server accepts.
fn unauthorized(req: &Request) -> Response {
    let error = ToolError::new(
        ErrorCode::Unauthorized,
        "Missing or wrong bearer token: send `Authorization: Bearer <CAIRN_TOKEN>`.",
    );
    let mut response = ApiResponse::error(error, &request_id_of(req.headers())).into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}
