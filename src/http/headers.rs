//! Browser hardening headers: the ones every response carries, and the two
//! content security policies (the SPA's, strict; Swagger UI's, what it needs).

use axum::http::{HeaderName, HeaderValue};
use tower_http::set_header::SetResponseHeaderLayer;

/// The SPA, and every response that sets no policy of its own: scripts and
/// styles from this server only, nothing inline, no plugins, no framing, no
/// `<base>`. `data:` images cover the inline favicon and SVG icons in CSS.
pub const SPA_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; \
form-action 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'";

/// Swagger UI at `/docs`: the SPA's policy, plus the one inline `<style>` it
/// renders (in the logo SVG of its top bar), allowed by its hash. Its scripts,
/// initializer included, are files under `/docs/`; "Try it out" calls this
/// server (`connect-src 'self'`). A new vendored Swagger UI whose logo style
/// changes shows up as a CSP violation in the e2e suite's docs scenario.
pub const DOCS_POLICY: &str = "default-src 'none'; script-src 'self'; \
style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='; \
img-src 'self' data:; font-src 'self'; connect-src 'self'; \
form-action 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'";

/// Set on every response, whatever answered it (a refusal, the SPA, an error).
pub const NOSNIFF: &str = "nosniff";
pub const NO_REFERRER: &str = "no-referrer";
pub const NO_FRAMING: &str = "DENY";
pub const OPENER_SAME_ORIGIN: &str = "same-origin";
pub const CROSS_ORIGIN_OPENER_POLICY: HeaderName =
    HeaderName::from_static("cross-origin-opener-policy");

/// One response header set to a fixed value, replacing any a handler set.
pub fn always(name: HeaderName, value: &'static str) -> SetResponseHeaderLayer<HeaderValue> {
    SetResponseHeaderLayer::overriding(name, HeaderValue::from_static(value))
}

/// A content security policy as a header value.
pub fn csp(policy: &'static str) -> HeaderValue {
    HeaderValue::from_static(policy)
}
