//! `errors`: the pages that a problem's `type` names, `/api/v1/errors/{code}`,
//! made from the code registry.

use axum::extract::Path;
use axum::extract::rejection::PathRejection;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::envelope::{Envelope, ErrorCategory, ErrorCode, Meta, error::CodeSpec};
use crate::http::AppState;
use crate::http::openapi::schemas::Success;
use crate::http::semantics::extract::request_id_of;
use crate::http::semantics::problem::{title_of, type_of};
use crate::http::semantics::response::{ApiResponse, route_not_found};

/// What `/api/v1/errors/{code}` says about a code, from the registry.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ErrorDoc {
    pub code: ErrorCode,
    pub category: ErrorCategory,
    /// The HTTP status a failure with this code answers with.
    #[schema(minimum = 100, maximum = 599)]
    pub status: u16,
    /// True when the same call may succeed later without changing it.
    pub retryable: bool,
    /// The problem details `title` of this code.
    pub title: String,
    /// What the code means and the `details` it carries.
    pub description: String,
    /// This page's path, the problem details `type` of this code.
    #[serde(rename = "type")]
    #[schema(rename = "type")]
    pub kind: String,
}

impl ErrorDoc {
    pub fn of(code: ErrorCode) -> Self {
        let CodeSpec {
            category,
            http_status,
            retryable,
        } = code.spec();
        Self {
            code,
            category,
            status: http_status,
            retryable,
            title: title_of(code),
            description: code.description(),
            kind: type_of(code),
        }
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(error_doc))
}

/// What an error code means: the page a problem details `type` names.
///
/// Made from the code registry, like AGENTS.md; an unknown code is
/// `route_not_found` (404).
#[utoipa::path(get, path = "/api/v1/errors/{code}", tag = "system", operation_id = "error_doc",
    params(("code" = ErrorCode, Path, description = "An error code (`error.code`).")),
    responses((status = 200, description = "The code's category, status, retry default and meaning", body = Success<ErrorDoc>)))]
async fn error_doc(
    method: Method,
    headers: HeaderMap,
    uri: Uri,
    name: Result<Path<String>, PathRejection>,
) -> Response {
    let request_id = request_id_of(&headers);
    let Some(code) = name.ok().and_then(|Path(name)| ErrorCode::from_name(&name)) else {
        let error = route_not_found(uri.path());
        return ApiResponse::error(error, &request_id).into_response();
    };
    let revalidate = match crate::http::semantics::revalidation::if_none_match(&method, &headers) {
        Ok(tags) => tags,
        Err(error) => return ApiResponse::error(error, &request_id).into_response(),
    };
    let data = serde_json::to_value(ErrorDoc::of(code)).unwrap_or(Value::Null);
    ApiResponse::new(Envelope::success(
        data,
        Meta::new("error_doc", "system", &request_id),
    ))
    .revalidating(revalidate)
    .into_response()
}
