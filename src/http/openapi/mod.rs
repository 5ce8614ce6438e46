//! The OpenAPI document, generated from the routers and finished on
//! utoipa's typed model. utoipa builds what the routes declare; each pass
//! below is a [`Modify`] that adds what one rule of the gateway means for
//! the document, in the file named after that rule:
//!
//! - [`SharedErrors`] (here): every operation's shared `ErrorEnvelope`
//!   responses, so no route can forget them and none repeats them;
//! - [`access::Access`]: the bearer scheme, the public probes, `servers`;
//! - [`bodies::Bodies`] and [`bodies::UpdateNamesAChange`]: REST bodies
//!   without the target `id`, note create and replace apart, an update that
//!   names a change;
//! - [`bounds::InputBounds`] and [`bounds::AnswerBounds`]: the limits the
//!   tools enforce, and those every answer keeps;
//! - [`idempotency::Idempotency`], [`rate_limit::RateLimits`],
//!   [`conditional::Conditional`], [`problem::Problems`] (every error
//!   response declared before it offers problem details too), and last
//!   [`projects::InProjects`] (each route again in a project).
//!
//! Three keywords OpenAPI 3.1 has and utoipa's model does not are carried in
//! the model's flattened `extensions` (see [`keyword`]): a response
//! header's `required`, a schema's `not`, and an object schema's `anyOf`
//! beside its `properties`.

mod access;
mod bodies;
mod bounds;
mod conditional;
mod idempotency;
mod problem;
mod projects;
mod rate_limit;
pub mod schemas;

use std::hash::{Hash, Hasher};
use std::sync::LazyLock;

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::header::{Header, HeaderBuilder};
use utoipa::openapi::path::{Operation, PathItem, Paths};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, Schema};
use utoipa::{Modify, PartialSchema};
use utoipa_swagger_ui::SwaggerUi;

use crate::envelope::{ErrorBody, ErrorCategory, ErrorCode, Meta, Trim, TrimKind};
use crate::http::AppState;
use crate::http::semantics::conditional::{IF_MATCH_OPERATIONS, IF_NONE_MATCH_OPERATIONS};
use crate::http::semantics::{response::JSON, revalidation};
pub use schemas::{ErrorEnvelope, Success};

/// The shared error responses: status, component name, description.
const ERROR_RESPONSES: [(&str, &str, &str); 12] = [
    (
        "400",
        "BadRequest",
        "Invalid input (`validation`): see `error.code` and `error.details`.",
    ),
    (
        "401",
        "Unauthorized",
        "Missing or wrong bearer token (`unauthorized`).",
    ),
    (
        "403",
        "Forbidden",
        "Not permitted: the store is read-only, the module is disabled, or the request used a host name (`host_not_allowed`) or came from a browser origin (`origin_not_allowed`) this server does not accept, or the token's scope does not allow it (`permission_denied`).",
    ),
    (
        "404",
        "NotFound",
        "The entity or route does not exist (`not_found`).",
    ),
    (
        "405",
        "MethodNotAllowed",
        "The route does not accept this method; `details.allowed` lists those it does.",
    ),
    (
        "409",
        "Conflict",
        "The write lost a race or collides (`conflict`): version conflict, duplicate, slug collision, claim held.",
    ),
    (
        "412",
        "PreconditionFailed",
        "`If-Match` names no current version (`precondition_failed`): `details.current_version` and `details.current_etag` say what the entity is now; nothing was written (on a read: nothing sent).",
    ),
    (
        "413",
        "PayloadTooLarge",
        "The body or content is over its limit (`too_large`).",
    ),
    (
        "415",
        "UnsupportedMediaType",
        "The body is not `application/json`.",
    ),
    (
        "431",
        "RequestHeaderFieldsTooLarge",
        "The request's headers are over the gateway's limit (`headers_too_large`): `details.limit_bytes`.",
    ),
    (
        "500",
        "InternalError",
        "A bug (`internal`); the log has the cause under `error.request_id`.",
    ),
    (
        "503",
        "ServiceUnavailable",
        "Busy or unavailable store, search off, or a timeout (`transient`/`unavailable`); see `Retry-After`.",
    ),
];

/// Which shared error statuses an operation can answer with.
fn error_statuses(method: &str, op: &Operation) -> Vec<&'static str> {
    let mut statuses = vec!["400", "401", "403", "404", "405", "431", "500", "503"];
    if method != "get" {
        statuses.push("409");
    }
    if op.operation_id.as_deref().is_some_and(|id| {
        IF_MATCH_OPERATIONS.contains(&id) || IF_NONE_MATCH_OPERATIONS.contains(&id)
    }) {
        statuses.push("412");
    }
    if op.request_body.is_some() {
        statuses.extend(["413", "415"]);
    }
    statuses
}

/// The finished document, as served at `/openapi.json` and committed.
pub fn openapi() -> OpenApi {
    let (_, mut doc) = crate::http::routes::api_router().split_for_parts();
    let passes: [&dyn Modify; 10] = [
        &Described,
        &SharedErrors,
        &bodies::Bodies,
        &access::Access,
        &bounds::InputBounds,
        &bodies::UpdateNamesAChange,
        &bounds::AnswerBounds,
        &idempotency::Idempotency,
        &rate_limit::RateLimits,
        &conditional::Conditional,
    ];
    for pass in passes {
        pass.modify(&mut doc);
    }
    // Every error response declared above offers problem details too.
    problem::Problems.modify(&mut doc);
    // Last: each project's copy of the routes, with all of the above.
    projects::InProjects.modify(&mut doc);
    doc
}

/// The finished document as JSON (what the tests read).
pub fn document() -> Value {
    serde_json::to_value(openapi()).expect("document serializes")
}

/// The document's `info` and the envelope's schemas, named.
struct Described;

impl Modify for Described {
    fn modify(&self, doc: &mut OpenApi) {
        doc.info.title = "cairn".into();
        doc.info.version = env!("CARGO_PKG_VERSION").into();
        doc.info.description = Some(
            "A coordination hub for AI agents and the people who watch them. Every success is `{data, meta}`; every failure is `{error}` (`ErrorEnvelope`) with a stable `code`.".into(),
        );
        doc.info.license = Some(
            utoipa::openapi::LicenseBuilder::new()
                .name("MIT")
                .identifier(Some("MIT"))
                .build(),
        );
        doc.info.contact = None;
        let components = doc.components.get_or_insert_with(Default::default);
        for (name, schema) in [
            ("ErrorEnvelope", ErrorEnvelope::schema()),
            ("ErrorBody", ErrorBody::schema()),
            ("ErrorCategory", ErrorCategory::schema()),
            ("ErrorCode", ErrorCode::schema()),
            (
                "ProblemDetails",
                crate::http::semantics::problem::ProblemDetails::schema(),
            ),
            ("Meta", Meta::schema()),
            ("Trim", Trim::schema()),
            ("TrimKind", TrimKind::schema()),
        ] {
            components.schemas.insert(name.into(), schema);
        }
        name_success_data(components);
    }
}

/// The shared error responses on every operation, each declared once
/// under `components/responses`.
struct SharedErrors;

impl Modify for SharedErrors {
    fn modify(&self, doc: &mut OpenApi) {
        let mut used = std::collections::BTreeSet::new();
        for (_, method, op) in operations(&mut doc.paths) {
            for status in error_statuses(method, op) {
                let (_, name, _) = ERROR_RESPONSES.iter().find(|(s, ..)| *s == status).unwrap();
                used.insert(status);
                op.responses
                    .responses
                    .insert(status.into(), response_ref(name));
            }
        }
        let components = doc.components.get_or_insert_with(Default::default);
        for (status, name, description) in ERROR_RESPONSES {
            if used.contains(status) {
                let response = error_response(description);
                components.responses.insert(name.into(), RefOr::T(response));
            }
        }
    }
}

/// A response whose body is the `ErrorEnvelope`.
fn error_response(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            JSON,
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorEnvelope")))
                .build(),
        )
        .build()
}

/// A reference to the shared response `name`.
fn response_ref<T>(name: &str) -> RefOr<T> {
    RefOr::Ref(Ref::new(format!("#/components/responses/{name}")))
}

/// utoipa inlines a generic's argument; point `Success_X.data` back at the
/// named schema `X`, so clients get one named type per tool output.
fn name_success_data(components: &mut utoipa::openapi::Components) {
    let names: Vec<String> = components.schemas.keys().cloned().collect();
    for name in names {
        let Some(data_type) = name.strip_prefix("Success_") else {
            continue;
        };
        if !components.schemas.contains_key(data_type) {
            continue;
        }
        let data_ref = RefOr::Ref(Ref::from_schema_name(data_type));
        if let Some(RefOr::T(Schema::Object(success))) = components.schemas.get_mut(&name) {
            success.properties.insert("data".into(), data_ref);
        }
    }
}

/// Every operation of the document: its path, method and itself.
fn operations(paths: &mut Paths) -> Vec<(&str, &'static str, &mut Operation)> {
    paths
        .paths
        .iter_mut()
        .flat_map(|(path, item)| {
            methods(item)
                .into_iter()
                .map(move |(method, op)| (path.as_str(), method, op))
        })
        .collect()
}

fn methods(item: &mut PathItem) -> Vec<(&'static str, &mut Operation)> {
    [
        ("get", &mut item.get),
        ("put", &mut item.put),
        ("post", &mut item.post),
        ("delete", &mut item.delete),
        ("patch", &mut item.patch),
        ("head", &mut item.head),
        ("options", &mut item.options),
        ("trace", &mut item.trace),
    ]
    .into_iter()
    .filter_map(|(method, op)| Some((method, op.as_mut()?)))
    .collect()
}

/// The name of the schema a `$ref` points at, if it is one of the document's.
fn schema_name(reference: &Ref) -> Option<&str> {
    reference.ref_location.strip_prefix("#/components/schemas/")
}

/// The schema of an operation's JSON request body, when it is a `$ref`.
fn body_ref(op: &mut Operation) -> Option<&mut Ref> {
    let RefOr::T(body) = op.request_body.as_mut()? else {
        return None;
    };
    let RefOr::T(content) = body.content.get_mut(JSON)? else {
        return None;
    };
    match content.schema.as_mut()? {
        RefOr::Ref(reference) => Some(reference),
        RefOr::T(_) => None,
    }
}

/// One keyword OpenAPI 3.1 has that utoipa's model has no field for,
/// written through the model's flattened `extensions`.
fn keyword(extensions: &mut Option<Extensions>, name: &str, value: Value) {
    extensions
        .get_or_insert_with(Default::default)
        .insert(name.to_owned(), value);
}

/// A response header: its description, whether every such answer carries
/// it (when the document says), and its schema.
fn header(
    description: &str,
    required: Option<bool>,
    schema: impl Into<RefOr<Schema>>,
) -> RefOr<Header> {
    let mut header = HeaderBuilder::new()
        .description(Some(description))
        .schema(Some(schema))
        .build();
    if let Some(required) = required {
        keyword(&mut header.extensions, "required", Value::Bool(required));
    }
    RefOr::T(header)
}

/// A string schema of at most `max_length` bytes, matching `pattern` if given.
fn string(max_length: u64, pattern: Option<&str>) -> Schema {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    Schema::Object(
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(pattern)
            .max_length(Some(max_length as usize))
            .build(),
    )
}

/// The CORS header an answer carries for an origin `--cors-origin` allows.
fn allow_origin(description: &str) -> RefOr<Header> {
    header(description, Some(false), string(2048, None))
}

/// `/openapi.json` and Swagger UI at `/docs` (with an Authorize button for
/// the bearer token, from the document's security scheme).
pub fn docs_router() -> Router<AppState> {
    Router::new()
        .route("/openapi.json", axum::routing::get(served_document))
        .merge(SwaggerUi::new("/docs").config(utoipa_swagger_ui::Config::from("/openapi.json")))
}

/// The document as served: compact JSON, made once, and its strong `ETag`
/// (a hash of those bytes, so every gateway of one build gives the same).
struct Served {
    body: axum::body::Bytes,
    etag: HeaderValue,
}

static SERVED: LazyLock<Served> = LazyLock::new(|| {
    let body = serde_json::to_vec(&openapi()).expect("document serializes");
    let mut hasher = std::hash::DefaultHasher::new();
    body.hash(&mut hasher);
    let etag = HeaderValue::try_from(format!("\"{:016x}\"", hasher.finish()))
        .expect("hex digits in quotes are a header value");
    Served {
        body: body.into(),
        etag,
    }
});

/// `/openapi.json`, with its `ETag`; a `304` when `If-None-Match` names it
/// (Swagger UI and client generators fetch it again and again).
async fn served_document(headers: HeaderMap) -> Response {
    let served = &*SERVED;
    // A malformed or oversized `If-None-Match` is ignored: the full answer is a correct one.
    let asked = revalidation::if_none_match(&Method::GET, &headers).unwrap_or_default();
    if revalidation::is_unchanged(asked.as_ref(), &served.etag) {
        return revalidation::not_modified(served.etag.clone());
    }
    let json = HeaderValue::from_static(JSON);
    let etag = served.etag.clone();
    (
        [(header::CONTENT_TYPE, json), (header::ETAG, etag)],
        served.body.clone(),
    )
        .into_response()
}

/// The committed document's text (pretty JSON with a trailing newline).
pub fn document_json() -> String {
    let mut text = serde_json::to_string_pretty(&openapi()).expect("document serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keyword_utoipa_lacks_is_written_beside_the_models_own() {
        let etag = header("The tag.", Some(true), string(20, None));
        assert_eq!(
            serde_json::to_value(&etag).unwrap(),
            serde_json::json!({"schema": {"type": "string", "maxLength": 20},
                "description": "The tag.", "required": true})
        );
        let replayed = header("Replayed.", None, string(4, None));
        assert!(
            serde_json::to_value(&replayed)
                .unwrap()
                .get("required")
                .is_none()
        );
    }
}
