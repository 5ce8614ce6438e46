//! Extractors whose rejections are envelopes, so that malformed input gets the
//! same typed error shape as a tool's own failures.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{FromRef, FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::{HeaderName, HeaderValue, header, request::Parts};
use serde_json::{Map, Value};

use axum::http::Extensions;

use crate::auth::Caller;
use crate::envelope::{ErrorCode, ToolError};
use crate::http::AppState;
use crate::http::semantics::response::{ACCEPT_PATCH, ApiResponse, JSON};
use crate::http::semantics::revalidation::{TagMatch, if_none_match};
use crate::store::DEFAULT_PROJECT;
use crate::tools::Cairn;
use crate::tools::fields::registered_input_fields;
use crate::tools::projects::InProject;

pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// [`REQUEST_ID_HEADER`] as a header name: looked up by it, a header map
/// hashes a name it has, where a `&str` is parsed and checked first.
pub const REQUEST_ID: HeaderName = HeaderName::from_static(REQUEST_ID_HEADER);

/// The request's correlation id (set or echoed by the request-id layer).
pub fn request_id_of(headers: &axum::http::HeaderMap) -> String {
    request_id_from(headers.get(&REQUEST_ID))
}

/// [`request_id_of`] from the header's value, kept apart from its request.
pub fn request_id_from(value: Option<&HeaderValue>) -> String {
    value
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .unwrap_or_else(crate::envelope::new_request_id)
}

/// What every REST handler needs: the application in the request's
/// project, the gateway's state and the request id.
pub struct Rest {
    /// The application over the project the path names (`default` under
    /// `/api/v1/...`).
    pub cairn: Cairn,
    /// The answers kept for [`Rest::call_cached`], the settings, the feed.
    pub state: AppState,
    pub request_id: String,
    /// A GET's `If-None-Match` ([`if_none_match`]).
    pub if_none_match: Option<TagMatch>,
}

impl<S> FromRequestParts<S> for Rest
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = ApiResponse;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let state = AppState::from_ref(state);
        let request_id = request_id_of(&parts.headers);
        let if_none_match = match if_none_match(&parts.method, &parts.headers) {
            Ok(tags) => tags,
            Err(error) => return Err(ApiResponse::error(error, &request_id)),
        };
        let cairn = match project_cairn(&state.cairn, &parts.extensions).await {
            Ok(cairn) => cairn,
            Err(error) => return Err(ApiResponse::error(error, &request_id)),
        };
        Ok(Rest {
            cairn,
            state,
            request_id,
            if_none_match,
        })
    }
}

/// The application over the project a request names ([`InProject`];
/// `default` without one): `project_not_found` when there is no such
/// project or the caller's token may not use it.
pub async fn project_cairn(cairn: &Cairn, extensions: &Extensions) -> Result<Cairn, ToolError> {
    let key = extensions
        .get::<InProject>()
        .map_or(DEFAULT_PROJECT, |named| named.0.as_str());
    if let Some(caller) = extensions.get::<Caller>() {
        caller.check_project(key)?;
    }
    cairn.in_project(key).await
}

impl Rest {
    /// Calls a tool with JSON arguments and unwraps its envelope.
    pub async fn call(&self, tool: &str, args: Map<String, Value>) -> ApiResponse {
        let envelope = self
            .cairn
            .call(tool, Value::Object(args), &self.request_id)
            .await;
        ApiResponse::new(envelope).revalidating(self.if_none_match.clone())
    }
}

impl Rest {
    /// Calls a tool with arguments read from the query (and the target `id`
    /// from the path, when given); a query that does not type-check is
    /// answered without calling the tool.
    pub async fn call_query(&self, tool: &str, id: Option<String>, query: ApiQuery) -> ApiResponse {
        match query.into_args(tool) {
            Ok(args) => self.call_with_body(tool, id, args).await,
            Err(error) => ApiResponse::error(error, &self.request_id),
        }
    }

    /// Calls a tool whose target `id` comes from the path (when it has one)
    /// and whose other arguments come from the body or query. REST bodies
    /// never carry `id`: the URL names the entity.
    pub async fn call_with_body(
        &self,
        tool: &str,
        id: Option<String>,
        mut args: Map<String, Value>,
    ) -> ApiResponse {
        if args.contains_key("id") {
            let error = ToolError::new(
                ErrorCode::UnknownField,
                "`id` is not a body field here: the entity is named by the URL.",
            )
            .detail("field", "id");
            return ApiResponse::error(error, &self.request_id);
        }
        if let Some(id) = id {
            args.insert("id".into(), Value::String(id));
        }
        self.call(tool, args).await
    }
}

/// A JSON object body. An empty body reads as `{}` (for actions whose fields
/// are all optional); otherwise the content type must be JSON.
pub struct ApiJson(pub Map<String, Value>);

impl<S> FromRequest<S> for ApiJson
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = ApiResponse;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let request_id = request_id_of(req.headers());
        let limit = AppState::from_ref(state).settings.body_limit;
        let is_json = is_json_content_type(req.headers());
        let is_patch = req.method() == axum::http::Method::PATCH;
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiResponse::error(body_error(e, limit), &request_id))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(ApiJson(Map::new()));
        }
        if !is_json {
            let refused = ApiResponse::error(
                ToolError::new(
                    ErrorCode::UnsupportedMediaType,
                    "The body must be sent as `Content-Type: application/json`.",
                )
                .detail("expected", "application/json"),
                &request_id,
            );
            // A PATCH is told what a patch may be (RFC 5789 §2.2).
            return Err(if is_patch {
                refused.with_header(ACCEPT_PATCH, HeaderValue::from_static(JSON))
            } else {
                refused
            });
        }
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok(ApiJson(map)),
            Ok(_) => Err(ApiResponse::error(
                ToolError::invalid_input("body", "must be a JSON object"),
                &request_id,
            )),
            Err(e) => Err(ApiResponse::error(invalid_json(&e), &request_id)),
        }
    }
}

pub fn invalid_json(e: &serde_json::Error) -> ToolError {
    ToolError::new(ErrorCode::InvalidJson, "The body is not valid JSON.")
        .detail("line", e.line())
        .detail("column", e.column())
}

fn body_error(e: BytesRejection, limit: usize) -> ToolError {
    if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        payload_too_large(limit)
    } else {
        ToolError::invalid_input("body", "the body could not be read")
    }
}

pub fn payload_too_large(limit: usize) -> ToolError {
    ToolError::new(
        ErrorCode::PayloadTooLarge,
        "The request body is over the size limit.",
    )
    .detail("limit_bytes", limit)
}

/// The `{id}` path segment (a full id or a unique prefix; the tool resolves it).
pub struct ApiId(pub String);

impl<S: Send + Sync> FromRequestParts<S> for ApiId {
    type Rejection = ApiResponse;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Path::<String>::from_request_parts(parts, state)
            .await
            .map(|Path(id)| ApiId(id))
            .map_err(|e: PathRejection| {
                ApiResponse::error(
                    ToolError::invalid_field(
                        "id",
                        "The id in the path could not be read; it must be valid percent-encoded UTF-8.",
                        e.body_text(),
                    ),
                    &request_id_of(&parts.headers),
                )
            })
    }
}

/// Query parameters as tool arguments: each value is typed by the tool's
/// input schema (integers, booleans, comma-separated arrays), so that the
/// tool's own decoding reports unknown and bad fields as it does everywhere.
pub struct ApiQuery(pub Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for ApiQuery {
    type Rejection = ApiResponse;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<Vec<(String, String)>>::from_request_parts(parts, state)
            .await
            .map(|Query(pairs)| ApiQuery(pairs))
            .map_err(|e: QueryRejection| {
                ApiResponse::error(
                    ToolError::invalid_field(
                        "query",
                        "The query string could not be read; it must be valid percent-encoded UTF-8.",
                        e.body_text(),
                    ),
                    &request_id_of(&parts.headers),
                )
            })
    }
}

impl ApiQuery {
    /// The query as arguments of `tool`, each value typed by the tool's input
    /// schema as CLI flags are. A value of the wrong type is `invalid_input`,
    /// as is a single-valued parameter given twice; `null` is no value here
    /// (omit the parameter instead). A name the tool does not know stays a
    /// string, so the tool's decoding reports it as `unknown_field`.
    pub fn into_args(self, tool: &str) -> Result<Map<String, Value>, ToolError> {
        let fields = registered_input_fields(tool);
        let mut args = Map::new();
        for (key, raw) in self.0 {
            let Some(field) = fields.iter().find(|f| f.name == key) else {
                // Not the tool's: kept once, however often it is repeated, for
                // the decoding to name as `unknown_field`.
                args.entry(key).or_insert(Value::String(raw));
                continue;
            };
            let value = field.parse_text(&raw)?;
            // An array may come as `k=a,b` or as `k=a&k=b` (or both): join them.
            match (args.get_mut(&key), value) {
                (Some(Value::Array(have)), Value::Array(more)) => have.extend(more),
                (Some(_), _) => {
                    return Err(ToolError::invalid_input(
                        &key,
                        "must be given once (it takes one value)",
                    ));
                }
                (None, value) => {
                    args.insert(key, value);
                }
            }
        }
        Ok(args)
    }
}

/// `application/json` or an `application/*+json` type, parameters ignored.
fn is_json_content_type(headers: &axum::http::HeaderMap) -> bool {
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}
