//! The layers around the router, each in a file of its own: the head limits
//! and problem details, the request id and its span, the host and origin
//! guard with the hardening headers, CORS and `OPTIONS`, the token, rate
//! limit and scope, the envelope for what the framework answers, metrics and
//! the request log; on `/mcp`, the tool set its URL names.
//! [`crate::http::app_with`] declares their order.

pub mod access;
pub mod auth;
pub mod cors;
pub mod framework_errors;
pub mod guard;
pub mod head_limits;
pub mod metrics;
pub mod project;
pub mod rate_limit;
pub mod request_id;
pub mod security_headers;
pub mod tool_set;

/// Paths the envelope contract covers (MCP speaks its own protocol).
pub fn is_enveloped(path: &str) -> bool {
    !path.starts_with("/mcp")
}

/// Health and readiness stay public so monitors and load balancers can probe without
/// the token (docs/contract.md, "REST gateway": health always answers 200), and are
/// never rate limited.
pub fn is_probe(path: &str) -> bool {
    matches!(path, "/api/v1/health" | "/api/v1/health/ready")
}
