//! Browser hardening headers: the ones every response carries, and the two
//! content security policies (the SPA's, strict; Swagger UI's, what it needs).

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::Response;

/// The SPA, and every answer outside the API that sets no policy of its own:
/// scripts and styles from this server only, nothing inline, no plugins, no
/// framing, no `<base>`. `data:` images cover the inline favicon and SVG
/// icons in CSS.
pub const SPA_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; \
form-action 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'";

/// The API's answers, MCP's and the metrics', which are never documents:
/// nothing may load from them and nothing may frame them (what OWASP's REST
/// security cheat sheet asks of an API), in 42 bytes where the SPA's policy
/// takes 215 on every answer.
pub const API_POLICY: &str = "default-src 'none'; frame-ancestors 'none'";

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

/// How an answer may be cached when its route says nothing: stored, but
/// asked again on every use (RFC 9111 §5.2.2.4), which an `ETag` makes a
/// `304`. Without it a cache may give an answer a freshness of its own
/// guessing (§4.2.2), a `404` among them, and serve it after it changed.
pub const REVALIDATE: &str = "no-cache";

/// Every response, whatever answered it: `policy` unless the response set
/// its own (Swagger UI's), [`REVALIDATE`] unless it said how to cache it
/// (the SPA's files do), the `Vary` of a `304` and of an answer to `HEAD`,
/// then the four fixed headers, replacing any a handler set.
pub fn harden(mut response: Response, head: bool, policy: &'static str) -> Response {
    let status = response.status();
    let headers = response.headers_mut();
    headers
        .entry(header::CONTENT_SECURITY_POLICY)
        .or_insert_with(|| csp(policy));
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert_with(|| HeaderValue::from_static(REVALIDATE));
    if (head || status == StatusCode::NOT_MODIFIED) && !varies_by_encoding(headers) {
        // The `Vary` the `GET`'s answer would have had (RFC 9110 §9.3.2,
        // §15.4.5): the compression layer adds it only to a body it could
        // compress, and these have none.
        headers.append(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static(NOSNIFF),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static(NO_REFERRER),
    );
    headers.insert(
        header::X_FRAME_OPTIONS,
        HeaderValue::from_static(NO_FRAMING),
    );
    headers.insert(
        CROSS_ORIGIN_OPENER_POLICY,
        HeaderValue::from_static(OPENER_SAME_ORIGIN),
    );
    response
}

fn varies_by_encoding(headers: &HeaderMap) -> bool {
    headers.get_all(header::VARY).iter().any(|v| {
        v.as_bytes()
            .split(|&b| b == b',')
            .any(|name| name.trim_ascii().eq_ignore_ascii_case(b"accept-encoding"))
    })
}

/// A content security policy as a header value.
pub fn csp(policy: &'static str) -> HeaderValue {
    HeaderValue::from_static(policy)
}

/// When an answer is compressed: tower-http's `DefaultPredicate`, whose
/// three content-type rules each looked the header up and checked its text
/// again (1,300 instructions of every request), with the header read once.
/// Not below 32 bytes; never gRPC but gRPC-Web, an event stream or an image
/// but SVG.
#[derive(Clone, Copy, Debug, Default)]
pub struct Compressible;

impl tower_http::compression::Predicate for Compressible {
    fn should_compress<B: hyper::body::Body>(&self, response: &Response<B>) -> bool {
        use tower_http::compression::predicate::SizeAbove;
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let except = |kind: &str, but: &str| {
            content_type.starts_with(kind) && !content_type.starts_with(but)
        };
        SizeAbove::default().should_compress(response)
            && !except("application/grpc", "application/grpc-web")
            && !except("image/", "image/svg+xml")
            && !content_type.starts_with("text/event-stream")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_http::compression::{DefaultPredicate, Predicate};

    #[test]
    fn compressible_is_what_the_default_predicate_allows() {
        let types = [
            None,
            Some("application/json"),
            Some("application/grpc"),
            Some("application/grpc+proto"),
            Some("application/grpc-web"),
            Some("image/png"),
            Some("image/svg+xml"),
            Some("text/event-stream"),
            Some("text/html; charset=utf-8"),
        ];
        for content_type in types {
            for size in [0, 31, 32, 1000] {
                let mut response = Response::new(axum::body::Body::from(vec![b'x'; size]));
                if let Some(content_type) = content_type {
                    response
                        .headers_mut()
                        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
                }
                assert_eq!(
                    Compressible.should_compress(&response),
                    DefaultPredicate::new().should_compress(&response),
                    "{content_type:?}, {size} bytes"
                );
            }
        }
    }
}
