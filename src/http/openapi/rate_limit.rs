//! The rate limit (`middleware::rate_limit`) in the document: every route but
//! the health probes may answer 429 (`TooManyRequests`, with `Retry-After`),
//! and its answers carry `RateLimit` and `RateLimit-Policy` when the server
//! limits rates (the headers are not required: a server on loopback does not
//! limit by default). Wherever headers are declared, so is the CORS
//! `Access-Control-Allow-Origin` (OWASP's rule asks it of every header map).

use utoipa::Modify;
use utoipa::openapi::header::Header;
use utoipa::openapi::response::Response;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
use utoipa::openapi::{OpenApi, Ref, RefOr, Schema};

use super::{error_response, header, operations, response_ref, string};
use crate::http::middleware::is_probe;

pub(super) struct RateLimits;

/// The headers every limited answer may carry, by reference.
const LIMIT_HEADERS: [&str; 3] = [
    "Access-Control-Allow-Origin",
    "RateLimit",
    "RateLimit-Policy",
];

impl Modify for RateLimits {
    fn modify(&self, doc: &mut OpenApi) {
        let quota = |description: &str| {
            let pattern = "^\"default\";[a-z]=[0-9]+;[a-z]=[0-9]+$";
            header(description, Some(false), string(200, Some(pattern)))
        };
        let retry_after = ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .minimum(Some(1))
            .maximum(Some(86400))
            .build();
        let mut too_many = error_response(
            "Over the client's rate limit (`rate_limited`, retryable): wait `Retry-After` seconds (`error.retry_after_ms`).",
        );
        too_many
            .headers
            .insert("Retry-After".into(), header_ref("Retry-After"));
        add_limit_headers(&mut too_many);
        let components = doc.components.get_or_insert_with(Default::default);
        components.headers.extend([
            ("RateLimit".to_owned(), quota("The client's remaining quota (draft-ietf-httpapi-ratelimit-headers): `\"default\";r=REMAINING;t=SECONDS` until the quota is whole again. Sent when the server limits rates (`--rate-limit`; on by default on a non-loopback bind).")),
            ("RateLimit-Policy".to_owned(), quota("The quota policy: `\"default\";q=BURST;w=SECONDS`, a bucket of BURST requests per client (per token, or per address without one) that refills in SECONDS.")),
            // Declared wherever response headers are: sent when the request's
            // `Origin` is one `--cors-origin` allows (never by default).
            ("Access-Control-Allow-Origin".to_owned(), header(
                "The request's `Origin`, when `--cors-origin` allows it; absent for same-origin and non-browser calls.",
                Some(false),
                string(2048, Some("^[!-~]+$")),
            )),
            ("Retry-After".to_owned(), header(
                "Seconds to wait before retrying (also `error.retry_after_ms`).",
                Some(true),
                Schema::Object(retry_after),
            )),
        ]);
        // The shared error responses (every limited answer has the fields).
        for response in components.responses.values_mut() {
            if let RefOr::T(response) = response {
                add_limit_headers(response);
            }
        }
        components
            .responses
            .insert("TooManyRequests".into(), RefOr::T(too_many));
        for (path, _, op) in operations(&mut doc.paths) {
            for (status, response) in op.responses.responses.iter_mut() {
                let limited = status.starts_with('2') || status.starts_with('4');
                if limited && let RefOr::T(response) = response {
                    add_limit_headers(response);
                }
            }
            if !is_probe(path) {
                op.responses
                    .responses
                    .insert("429".into(), response_ref("TooManyRequests"));
            }
        }
    }
}

/// Adds the limit headers `response` does not declare yet.
fn add_limit_headers(response: &mut Response) {
    for name in LIMIT_HEADERS {
        response
            .headers
            .entry(name.to_owned())
            .or_insert_with(|| header_ref(name));
    }
}

fn header_ref(name: &str) -> RefOr<Header> {
    RefOr::Ref(Ref::new(format!("#/components/headers/{name}")))
}
