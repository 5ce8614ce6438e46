//! Unwrapping envelopes into HTTP: the one place a REST answer gets its status,
//! its headers and its body shape (`{data, meta}` or `{error}`).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use serde_json::Value;

use crate::envelope::{
    self, Envelope, ErrorBody, ErrorCode, Form, Meta, Prerendered, Tier, ToolError,
};
use crate::http::semantics::revalidation::{self, TagMatch, weak_tag};

/// A REST answer: an envelope (or a success rendered before, from
/// [`crate::http::semantics::cache`]), plus a `Location` when it created something and any
/// headers the route adds (an `ETag`).
pub struct ApiResponse {
    answer: Answer,
    location: Option<String>,
    headers: HeaderMap,
    /// A GET's `If-None-Match`: a `200` whose tag it names is sent as `304`.
    if_none_match: Option<TagMatch>,
}

#[expect(
    clippy::large_enum_variant,
    reason = "made and consumed once a request; a boxed envelope would cost every other answer an allocation"
)]
enum Answer {
    Envelope(Envelope),
    /// Answered again for `request_id`, which took `runtime_ms`. `tag`: the
    /// entity's strong `ETag`; `None`: the data's weak one.
    Prerendered {
        answer: Arc<Prerendered>,
        request_id: String,
        runtime_ms: f64,
        tag: Option<HeaderValue>,
    },
}

impl ApiResponse {
    pub fn new(envelope: Envelope) -> Self {
        Self::of(Answer::Envelope(envelope))
    }

    /// A success rendered before (kept by a cache), answered again for
    /// `request_id` in `runtime_ms`, with the strong `ETag` of the entity it
    /// is, if it is one.
    pub fn prerendered(
        answer: Arc<Prerendered>,
        request_id: &str,
        runtime_ms: f64,
        tag: Option<HeaderValue>,
    ) -> Self {
        Self::of(Answer::Prerendered {
            answer,
            request_id: request_id.to_owned(),
            runtime_ms,
            tag,
        })
    }

    fn of(answer: Answer) -> Self {
        Self {
            answer,
            location: None,
            // Room for every header an answer ends with (its own, the
            // hardening, CORS's `Vary`, the request id), so none regrows it.
            headers: HeaderMap::with_capacity(ANSWER_HEADERS),
            if_none_match: None,
        }
    }

    /// Answers `304` instead of a `200` whose `ETag` `tags` names.
    pub fn revalidating(mut self, tags: Option<TagMatch>) -> Self {
        self.if_none_match = tags;
        self
    }

    fn outcome(&self) -> Option<&Result<Value, ErrorBody>> {
        match &self.answer {
            Answer::Envelope(envelope) => Some(&envelope.outcome),
            Answer::Prerendered { .. } => None,
        }
    }

    /// The success data as a value, if the answer is a success that holds
    /// one (one served serialized holds none: only routes with no `ETag`
    /// or `Location` to make are served so).
    pub fn data(&self) -> Option<&Value> {
        self.outcome()?.as_ref().ok()
    }

    /// The `ETag` a success carries as one entity (its strong tag).
    pub fn entity_tag(&self) -> Option<&HeaderValue> {
        match &self.answer {
            Answer::Prerendered { tag, .. } => tag.as_ref(),
            Answer::Envelope(envelope) if envelope.outcome.is_ok() => {
                self.headers.get(header::ETAG)
            }
            Answer::Envelope(_) => None,
        }
    }

    /// The failure, if the answer is one.
    pub fn failure(&self) -> Option<&ErrorBody> {
        self.outcome()?.as_ref().err()
    }

    /// The tool that answered.
    pub fn tool(&self) -> &str {
        match &self.answer {
            Answer::Envelope(envelope) => &envelope.meta.tool,
            Answer::Prerendered { answer, .. } => answer.tool(),
        }
    }

    /// Adds a header to the answer, whatever its outcome.
    pub fn with_header(mut self, name: header::HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// A failure raised by the surface itself (a bad path, a malformed body).
    pub fn error(error: ToolError, request_id: &str) -> Self {
        Self::new(Envelope::failure(error, Meta::new("", "", request_id)))
    }

    /// A top-level string field of the success data.
    pub fn data_field(&self, key: &str) -> Option<String> {
        self.data()?.get(key)?.as_str().map(str::to_owned)
    }

    /// On success: 201 with `Location` built from the created entity's `id`.
    pub fn created(self, collection: &str) -> Self {
        self.created_by(collection, "id")
    }

    /// [`ApiResponse::created`] for an entity named by its `field` (a
    /// project by its `key`).
    pub fn created_by(mut self, collection: &str, field: &str) -> Self {
        if let Some(id) = self
            .data()
            .and_then(|d| d.get(field))
            .and_then(Value::as_str)
        {
            self.location = Some(format!("{collection}/{id}"));
        }
        self
    }
}

/// How many headers an answer carries at most, about: see [`ApiResponse::of`].
const ANSWER_HEADERS: usize = 16;

/// The media type of every answer, and of every body a route takes.
pub const JSON: &str = "application/json";

/// What a PATCH may send (RFC 5789 §3.1): [`JSON`].
pub const ACCEPT_PATCH: header::HeaderName = header::HeaderName::from_static("accept-patch");

impl IntoResponse for ApiResponse {
    fn into_response(self) -> Response {
        let mut headers = self.headers;
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
        let envelope = match self.answer {
            Answer::Envelope(envelope) => envelope,
            Answer::Prerendered {
                answer,
                request_id,
                runtime_ms,
                tag,
            } => {
                let tag = tag.unwrap_or_else(|| weak_tag(answer.digest()));
                let tool = answer.tool();
                if let Some(unchanged) = not_modified(self.if_none_match.as_ref(), &tag, tool) {
                    return unchanged;
                }
                headers.insert(header::ETAG, tag);
                let (head, rest) = answer.answer(&request_id, runtime_ms);
                let body = Body::new(HeadAndRest {
                    head: Some(head),
                    rest: Some(rest.into()),
                });
                let answered_by = Answered::new(tool.to_owned(), "ok");
                return answered(StatusCode::OK, headers, body, answered_by);
            }
        };
        let mut status = status_of(&envelope);
        match &envelope.outcome {
            Ok(_) => {
                if let Some(location) = self.location.and_then(|l| HeaderValue::try_from(l).ok()) {
                    status = StatusCode::CREATED;
                    headers.insert(header::LOCATION, location);
                }
            }
            Err(error) => {
                decorate_error_headers(error, &mut headers);
            }
        }
        let tier = match &envelope.outcome {
            Ok(data) => Tier::browser_for(data),
            Err(_) => Tier::None,
        };
        let tool = envelope.meta.tool.clone();
        let answered_by = match &envelope.outcome {
            Ok(_) => Answered::new(tool.clone(), "ok"),
            Err(error) => Answered::failed(tool.clone(), error),
        };
        let body = envelope::render(envelope, tier, Form::Rest);
        // Every 200 can be revalidated: one entity has its strong tag
        // already (`conditional`), anything else gets its data's weak one.
        let tag = (status == StatusCode::OK)
            .then(|| {
                let weak = || {
                    let data = envelope::rest_data(&body)?;
                    Some(weak_tag(envelope::digest(data)))
                };
                headers.get(header::ETAG).cloned().or_else(weak)
            })
            .flatten();
        if let Some(tag) = tag {
            if let Some(unchanged) = not_modified(self.if_none_match.as_ref(), &tag, &tool) {
                return unchanged;
            }
            headers.insert(header::ETAG, tag);
        }
        answered(status, headers, Body::from(body), answered_by)
    }
}

/// The `304` for `tag` when `If-None-Match` names it.
fn not_modified(asked: Option<&TagMatch>, tag: &HeaderValue, tool: &str) -> Option<Response> {
    revalidation::is_unchanged(asked, tag).then(|| {
        let mut response = revalidation::not_modified(tag.clone());
        let answered_by = Answered::new(tool.to_owned(), "ok");
        response.extensions_mut().insert(answered_by);
        response
    })
}

/// The response, marked with what answered (for the request log and metrics).
fn answered(status: StatusCode, headers: HeaderMap, body: Body, answered_by: Answered) -> Response {
    // Built from its parts: a `String`'s own response would get a
    // `Content-Type` of its own for these headers to replace.
    let mut response = Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response.extensions_mut().insert(answered_by);
    response
}

/// A prerendered answer's body: its shared head, then the rest, its own,
/// each sent as it is (hyper writes both in one vectored write), the length
/// known up front.
struct HeadAndRest {
    head: Option<Bytes>,
    rest: Option<Bytes>,
}

impl HttpBody for HeadAndRest {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let next = this.head.take().or_else(|| this.rest.take());
        Poll::Ready(next.map(|part| Ok(Frame::data(part))))
    }

    fn is_end_stream(&self) -> bool {
        self.head.is_none() && self.rest.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        let length = |part: &Option<Bytes>| part.as_ref().map_or(0, Bytes::len) as u64;
        SizeHint::with_exact(length(&self.head) + length(&self.rest))
    }
}

fn status_of(envelope: &Envelope) -> StatusCode {
    StatusCode::from_u16(envelope.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// `Retry-After` on 429 and 503; `Allow` on 405; on 415, the `Accept` that
/// says which body would have done (RFC 9110 §12.5.1).
fn decorate_error_headers(error: &ErrorBody, headers: &mut HeaderMap) {
    if error.code == ErrorCode::UnsupportedMediaType {
        headers.insert(header::ACCEPT, HeaderValue::from_static(JSON));
    }
    if matches!(error.code.http_status(), 429 | 503) {
        let ms = error
            .retry_after_ms
            .unwrap_or(crate::envelope::error::DEFAULT_RETRY_AFTER_MS);
        headers.insert(
            header::RETRY_AFTER,
            HeaderValue::from(ms.div_ceil(1000).max(1)),
        );
    }
    if error.code == ErrorCode::MethodNotAllowed
        && let Some(allowed) = error.details.get("allowed").and_then(Value::as_array)
    {
        let list: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
        if let Ok(value) = HeaderValue::try_from(list.join(", ")) {
            headers.insert(header::ALLOW, value);
        }
    }
}

/// No route at `path` (the fallback's answer, and an unknown error page's).
pub fn route_not_found(path: &str) -> ToolError {
    ToolError::new(
        ErrorCode::RouteNotFound,
        "No route at this path; `/openapi.json` lists every route.",
    )
    .detail("path", path)
}

/// What the request's log line and counts know of its answer (a response
/// extension): which tool answered and with what code (`ok` or the error
/// code), set by the envelope's unwrapping, and the route template the
/// request was routed to, set by [`TagRoute`].
#[derive(Clone, Default)]
pub struct Answered {
    pub tool: String,
    pub code: &'static str,
    pub route: Option<&'static str>,
    /// The failure's category, when the answer is one (the request log
    /// gives failures on cairn's side a line of their own).
    pub failure: Option<crate::envelope::ErrorCategory>,
}

impl Answered {
    pub fn new(tool: String, code: &'static str) -> Self {
        Answered {
            tool,
            code,
            route: None,
            failure: None,
        }
    }

    /// A failure's answer: its code, and its category for the request log.
    pub fn failed(tool: String, error: &ErrorBody) -> Self {
        Answered {
            failure: Some(error.category),
            ..Answered::new(tool, error.code.as_str())
        }
    }
}
