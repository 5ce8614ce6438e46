//! Problem details (RFC 9457) on request: a client whose `Accept` prefers
//! `application/problem+json` gets every enveloped error as a problem object,
//! the envelope's members kept as extensions; every other client keeps the
//! envelope. One layer outside every producer of errors (handlers, the
//! framework, the guards) rewrites them, so no path can miss it. Also the
//! pages that a problem's `type` names: `/api/v1/errors/{code}`, made from
//! the registry.

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::envelope::{ErrorBody, ErrorCategory, ErrorCode, ToolError};
use crate::http::semantics::extract::request_id_of;

pub const PROBLEM_JSON: &str = "application/problem+json";
const JSON: &str = "application/json";

/// Where the page documenting `code` is served (a problem's `type`).
pub fn type_of(code: ErrorCode) -> String {
    format!("/api/v1/errors/{}", code.as_str())
}

/// An error as RFC 9457 problem details, with cairn's error members as extensions.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ProblemDetails {
    /// The page documenting the code: `/api/v1/errors/{code}` (relative to this server).
    #[serde(rename = "type")]
    #[schema(rename = "type")]
    pub kind: String,
    /// The code's summary; the same for every occurrence of the code.
    pub title: String,
    /// The HTTP status of this answer.
    #[schema(minimum = 100, maximum = 599)]
    pub status: u16,
    /// What happened, in one sentence (the envelope's `message`).
    pub detail: String,
    /// The path of the request that failed.
    pub instance: String,
    pub code: ErrorCode,
    pub category: ErrorCategory,
    /// True when the same call may succeed later without changing it.
    pub retryable: bool,
    /// A hint of how long to wait before retrying, when the server knows one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// Correlation id; the log line has the details.
    pub request_id: String,
    /// Code-specific fields a caller can act on; `{}` when none.
    #[schema(value_type = Object)]
    pub details: Map<String, Value>,
    /// Next steps a caller can take; `[]` when none.
    pub suggestions: Vec<String>,
}

impl ProblemDetails {
    pub fn new(error: ErrorBody, status: u16, instance: &str) -> Self {
        Self {
            kind: type_of(error.code),
            title: title_of(error.code),
            status,
            detail: error.message,
            instance: instance.to_owned(),
            code: error.code,
            category: error.category,
            retryable: error.retryable,
            retry_after_ms: error.retry_after_ms,
            request_id: error.request_id,
            details: error.details,
            suggestions: error.suggestions,
        }
    }
}

/// A code's title: the first sentence of its registry entry.
pub fn title_of(code: ErrorCode) -> String {
    let text = code.description();
    let summary = text.split(" Details:").next().unwrap_or_default();
    match summary.find(". ") {
        Some(end) => summary[..=end].to_owned(),
        None => summary.to_owned(),
    }
}

/// The weight `Accept` gives a media type: the q of the most specific range
/// that matches it (RFC 9110 §12.5.1), and whether that range names it
/// exactly. No `Accept` accepts anything.
fn weight(ranges: &[MediaRange], media: &str) -> (f32, bool) {
    let (kind, subtype) = media.split_once('/').unwrap_or((media, ""));
    ranges
        .iter()
        .filter_map(|range| {
            let specificity = match (range.kind.as_str(), range.subtype.as_str()) {
                (k, s) if k == kind && s == subtype => 2,
                (k, "*") if k == kind => 1,
                ("*", "*") => 0,
                _ => return None,
            };
            Some((specificity, range.q))
        })
        .max_by_key(|(specificity, _)| *specificity)
        .map_or((0.0, false), |(specificity, q)| (q, specificity == 2))
}

/// One media range of `Accept`, lowercased; parameters other than `q` are
/// not compared (cairn's two types have none).
#[derive(Debug, Clone, PartialEq)]
struct MediaRange {
    kind: String,
    subtype: String,
    q: f32,
}

/// Parses `Accept`; an element that is not a media range, or whose `q` is not
/// a qvalue, is skipped (as if absent) rather than failing the request.
fn parse_accept(field: &str) -> Vec<MediaRange> {
    split_outside_quotes(field)
        .into_iter()
        .filter_map(|element| {
            let mut parts = element.split(';');
            let range = parts.next()?.trim().to_ascii_lowercase();
            let (kind, subtype) = range.split_once('/')?;
            let token = |s: &str| {
                !s.is_empty()
                    && s.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
            };
            if !token(kind) || !token(subtype) || (kind == "*" && subtype != "*") {
                return None;
            }
            let mut q = 1.0;
            for param in parts {
                let Some((name, value)) = param.split_once('=') else {
                    continue;
                };
                if name.trim().eq_ignore_ascii_case("q") {
                    q = qvalue(value.trim())?;
                    break; // what follows `q` is accept-ext
                }
            }
            Some(MediaRange {
                kind: kind.to_owned(),
                subtype: subtype.to_owned(),
                q,
            })
        })
        .collect()
}

/// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`.
fn qvalue(text: &str) -> Option<f32> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = fraction.len() <= 3 && fraction.bytes().all(|b| b.is_ascii_digit());
    match whole {
        "0" if digits => Some(format!("0.{fraction}0").parse().ok()?),
        "1" if digits && fraction.bytes().all(|b| b == b'0') => Some(1.0),
        _ => None,
    }
}

/// Splits a list on commas that are not inside a quoted string.
fn split_outside_quotes(field: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in field.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&field[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&field[start..]);
    parts
}

/// Whether a request with these `Accept` fields gets problem details: when
/// it weighs `application/problem+json` above `application/json`, or names
/// it exactly with the same non-zero weight (`application/json,
/// application/problem+json`: JSON for answers, problems for errors).
/// Wildcards alone (`*/*`, `application/*`) keep the envelope, the default.
pub fn prefers_problem(accept: &[&str]) -> bool {
    let ranges: Vec<MediaRange> = accept.iter().flat_map(|f| parse_accept(f)).collect();
    if ranges.is_empty() {
        return false;
    }
    let (problem, named) = weight(&ranges, PROBLEM_JSON);
    let (json, _) = weight(&ranges, JSON);
    problem > json || (named && problem > 0.0 && problem == json)
}

/// Largest error body rewritten; failure envelopes are far smaller (their
/// echoed values are cut at 200 characters).
const MAX_ERROR_BODY: usize = 256 * 1024;

/// What a request asked of its error answers, read before any layer below
/// runs: [`Asked::answer`] rewrites an error envelope into problem details
/// when the request asked for them (run by [`crate::http::middleware::head_limits::Front`], outside
/// every layer that answers with an envelope).
pub struct Asked {
    /// The request's path, kept only when it wants problem details.
    path: Option<String>,
}

impl Asked {
    pub fn of(req: &Request) -> Self {
        let accept: Vec<&str> = req
            .headers()
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        let wants = prefers_problem(&accept);
        Self {
            path: wants.then(|| req.uri().path().to_owned()),
        }
    }

    /// The answer, an error envelope rewritten when problem details were
    /// asked for (then after its body is read; anything else at once).
    pub async fn answer(self, response: Response) -> Response {
        let Some(path) = self.path else {
            return response;
        };
        let status = response.status();
        let is_envelope = response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes() == JSON.as_bytes());
        if !(status.is_client_error() || status.is_server_error())
            || !is_envelope
            || path.starts_with("/mcp")
        {
            return response;
        }
        rewrite(response, status, path).await
    }
}

/// An error envelope as problem details.
async fn rewrite(response: Response, status: StatusCode, path: String) -> Response {
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_ERROR_BODY).await else {
        // Unreadable: the body is gone, so answer what it would have said.
        let error = ToolError::internal().into_body(&request_id_of(&parts.headers));
        return problem_response(parts, ProblemDetails::new(error, status.as_u16(), &path));
    };
    #[derive(Deserialize)]
    struct Failure {
        error: ErrorBody,
    }
    match serde_json::from_slice::<Failure>(&bytes) {
        Ok(Failure { error }) => {
            problem_response(parts, ProblemDetails::new(error, status.as_u16(), &path))
        }
        Err(_) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, Body::from(bytes))
        }
    }
}

fn problem_response(mut parts: axum::http::response::Parts, problem: ProblemDetails) -> Response {
    let body = serde_json::to_vec(&problem).unwrap_or_default();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
    Response::from_parts(parts, Body::from(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q_values_decide_and_ties_keep_the_envelope_unless_named() {
        for (accept, problem) in [
            ("application/problem+json", true),
            ("application/json;q=0.5, application/problem+json", true),
            ("application/problem+json;q=0", false),
            ("*/*", false),
            ("application/*", false),
            ("application/json", false),
            ("application/json, application/problem+json", true),
            ("application/problem+json;q=0.5, application/json", false),
            ("application/problem+json;q=0.5, */*;q=0.1", true),
            ("*/*;q=0.9, application/json;q=0.1", true),
            ("APPLICATION/PROBLEM+JSON; Q=0.8", true),
            ("text/html, application/xhtml+xml", false),
            ("", false),
        ] {
            assert_eq!(prefers_problem(&[accept]), problem, "{accept}");
        }
    }

    #[test]
    fn the_most_specific_range_wins() {
        // `application/*;q=1` is less specific than the exact zero.
        assert!(!prefers_problem(&[
            "application/*, application/problem+json;q=0"
        ]));
        assert!(prefers_problem(&[
            "application/*;q=0.2, application/problem+json;q=0.9"
        ]));
    }

    #[test]
    fn malformed_ranges_are_skipped() {
        assert!(prefers_problem(&["garbage, application/problem+json"]));
        assert!(prefers_problem(&[
            "application/json;q=2, application/problem+json"
        ]));
        assert!(!prefers_problem(&["application/problem+json;q=abc"]));
        assert!(!prefers_problem(&[
            "*/json, application/problem+json;q=1.5"
        ]));
    }

    #[test]
    fn quoted_commas_do_not_split_a_range() {
        assert!(prefers_problem(&[
            "application/json;q=0.1;x=\"a,b\", application/problem+json"
        ]));
    }

    #[test]
    fn qvalues_follow_the_grammar() {
        assert_eq!(qvalue("0"), Some(0.0));
        assert_eq!(qvalue("0.125"), Some(0.125));
        assert_eq!(qvalue("1.000"), Some(1.0));
        assert_eq!(qvalue("1.001"), None);
        assert_eq!(qvalue("0.1234"), None);
        assert_eq!(qvalue(".5"), None);
    }

    #[test]
    fn several_accept_fields_are_one_list() {
        assert!(prefers_problem(&[
            "application/json;q=0.1",
            "application/problem+json"
        ]));
    }

    #[test]
    fn every_code_has_a_title_ending_its_first_sentence() {
        for code in ErrorCode::ALL {
            let title = title_of(*code);
            assert!(!title.is_empty(), "{code} has no title");
            assert!(!title.contains("Details:"), "{code}: {title}");
        }
        assert_eq!(
            title_of(ErrorCode::VersionConflict),
            "The entity changed since the caller read it."
        );
    }
}
