//! Unwrapping envelopes into HTTP: the one place a REST answer gets its status,
//! its headers and its body shape (`{data, meta}` or `{error}`).

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::envelope::{self, Envelope, ErrorBody, ErrorCode, Form, Meta, Tier, ToolError};

/// A REST answer: an envelope, plus a `Location` when it created something
/// and any headers the route adds (an `ETag`).
pub struct ApiResponse {
    envelope: Envelope,
    location: Option<String>,
    headers: HeaderMap,
}

impl ApiResponse {
    pub fn new(envelope: Envelope) -> Self {
        Self {
            envelope,
            location: None,
            headers: HeaderMap::new(),
        }
    }

    /// The success data, if the answer is a success.
    pub fn data(&self) -> Option<&Value> {
        self.envelope.outcome.as_ref().ok()
    }

    /// The failure, if the answer is one.
    pub fn failure(&self) -> Option<&ErrorBody> {
        self.envelope.outcome.as_ref().err()
    }

    /// The tool that answered.
    pub fn tool(&self) -> &str {
        &self.envelope.meta.tool
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
        let data = self.envelope.outcome.as_ref().ok()?;
        data.get(key)?.as_str().map(str::to_owned)
    }

    /// On success: 201 with `Location` built from the created entity's `id`.
    pub fn created(mut self, collection: &str) -> Self {
        if let Ok(data) = &self.envelope.outcome
            && let Some(id) = data.get("id").and_then(Value::as_str)
        {
            self.location = Some(format!("{collection}/{id}"));
        }
        self
    }
}

impl IntoResponse for ApiResponse {
    fn into_response(self) -> Response {
        let mut status = status_of(&self.envelope);
        let mut headers = self.headers;
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        match &self.envelope.outcome {
            Ok(_) => {
                if let Some(location) = self.location.and_then(|l| HeaderValue::try_from(l).ok()) {
                    status = StatusCode::CREATED;
                    headers.insert(header::LOCATION, location);
                }
            }
            Err(error) => {
                log_failure(error, &self.envelope.meta);
                decorate_error_headers(error, &mut headers);
            }
        }
        let tier = match &self.envelope.outcome {
            Ok(data) => Tier::browser_for(data),
            Err(_) => Tier::None,
        };
        let answered = super::observe::Answered {
            tool: self.envelope.meta.tool.clone(),
            code: self
                .envelope
                .outcome
                .as_ref()
                .map_or_else(|e| e.code.as_str(), |_| "ok"),
        };
        let body = envelope::render(self.envelope, tier, Form::Rest);
        let mut response = (status, headers, body).into_response();
        response.extensions_mut().insert(answered);
        response
    }
}

fn status_of(envelope: &Envelope) -> StatusCode {
    StatusCode::from_u16(envelope.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// `Retry-After` on 429 and 503; `Allow` on 405.
fn decorate_error_headers(error: &ErrorBody, headers: &mut HeaderMap) {
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

fn log_failure(error: &ErrorBody, meta: &Meta) {
    let (code, request_id, tool) = (error.code.as_str(), &error.request_id, &meta.tool);
    match error.category {
        crate::envelope::ErrorCategory::Internal => {
            tracing::error!(request_id, tool, code, "request failed")
        }
        crate::envelope::ErrorCategory::Transient | crate::envelope::ErrorCategory::Unavailable => {
            tracing::warn!(request_id, tool, code, "request failed")
        }
        _ => tracing::info!(request_id, tool, code, "request rejected"),
    }
}
