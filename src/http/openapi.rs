//! The OpenAPI document, generated from the routers. After the routes are
//! collected, one walk over every operation attaches the shared `ErrorEnvelope`
//! responses, so no route can forget them and none repeats them.

use axum::Router;
use serde::{Deserialize, Serialize};
use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, Required, Schema};
use utoipa::{PartialSchema, ToSchema};
use utoipa_swagger_ui::SwaggerUi;

use super::AppState;
use crate::envelope::{ErrorBody, ErrorCategory, ErrorCode, Meta, Trim, TrimKind};

/// A successful REST answer: the tool's data and the envelope meta.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Success<T> {
    pub data: T,
    pub meta: Meta,
}

/// Every failed REST answer, whatever the route: `{"error": ErrorBody}`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ErrorEnvelope {
    pub error: ErrorBody,
}

/// The shared error responses: status, component name, description.
const ERROR_RESPONSES: [(&str, &str, &str); 10] = [
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
        "Not permitted: the store is read-only, the module is disabled, or the request used a host name (`host_not_allowed`) or came from a browser origin (`origin_not_allowed`) this server does not accept.",
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
    let mut statuses = vec!["400", "401", "403", "404", "405", "500", "503"];
    if method != "get" {
        statuses.push("409");
    }
    if op.request_body.is_some() {
        statuses.extend(["413", "415"]);
    }
    statuses
}

/// The finished document: routes, shared errors, named enums and bodies.
pub fn document() -> OpenApi {
    let (_, mut doc) = super::api_router().split_for_parts();
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
        ("Meta", Meta::schema()),
        ("Trim", Trim::schema()),
        ("TrimKind", TrimKind::schema()),
    ] {
        components.schemas.insert(name.into(), schema);
    }
    name_success_data(components);
    let mut used = std::collections::BTreeSet::new();
    let mut bodies = std::collections::BTreeSet::new();
    for item in doc.paths.paths.values_mut() {
        for_each_operation(item, |method, op| {
            for status in error_statuses(method, op) {
                let (_, name, _) = ERROR_RESPONSES.iter().find(|(s, ..)| *s == status).unwrap();
                used.insert(status);
                op.responses.responses.insert(
                    status.into(),
                    RefOr::Ref(Ref::new(format!("#/components/responses/{name}"))),
                );
            }
            if let Some(RefOr::T(body)) = &mut op.request_body {
                body.required = Some(Required::True);
                for content in body.content.values() {
                    if let RefOr::T(content) = content
                        && let Some(RefOr::Ref(schema)) = &content.schema
                    {
                        bodies.insert(schema.ref_location.clone());
                    }
                }
            }
        });
    }
    let components = doc.components.get_or_insert_with(Default::default);
    let renamed: std::collections::BTreeMap<String, Ref> = bodies
        .iter()
        .filter_map(|location| Some((location.clone(), strip_id(components, location)?)))
        .collect();
    for (status, name, description) in ERROR_RESPONSES {
        if !used.contains(status) {
            continue;
        }
        let response = ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("ErrorEnvelope")))
                    .build(),
            )
            .build();
        components.responses.insert(name.into(), RefOr::T(response));
    }
    for item in doc.paths.paths.values_mut() {
        for_each_operation(item, |_, op| {
            let Some(RefOr::T(body)) = &mut op.request_body else {
                return;
            };
            for content in body.content.values_mut() {
                if let RefOr::T(content) = content
                    && let Some(RefOr::Ref(schema)) = &mut content.schema
                    && let Some(stripped) = renamed.get(&schema.ref_location)
                {
                    *schema = stripped.clone();
                }
            }
        });
    }
    drop_unreferenced(&mut doc, renamed.keys());
    doc
}

/// Removes the schemas at `locations` that nothing references any more.
fn drop_unreferenced<'a>(doc: &mut OpenApi, locations: impl Iterator<Item = &'a String>) {
    let text = serde_json::to_string(&*doc).unwrap_or_default();
    let unused: Vec<String> = locations
        .filter(|location| !text.contains(&format!("\"{location}\"")))
        .filter_map(|location| location.strip_prefix("#/components/schemas/"))
        .map(str::to_owned)
        .collect();
    if let Some(components) = &mut doc.components {
        for name in unused {
            components.schemas.remove(&name);
        }
    }
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

/// REST bodies never carry the target `id` (the URL names the entity): a body
/// typed by a tool input `X` with an `id` field is documented as `XBody`, the
/// same schema without it.
fn strip_id(components: &mut utoipa::openapi::Components, location: &str) -> Option<Ref> {
    let name = location.strip_prefix("#/components/schemas/")?;
    let Some(RefOr::T(Schema::Object(input))) = components.schemas.get(name) else {
        return None;
    };
    if !input.properties.contains_key("id") {
        return None;
    }
    let mut stripped = input.clone();
    stripped.properties.shift_remove("id");
    stripped.required.retain(|field| field != "id");
    let body_name = format!("{name}Body");
    components
        .schemas
        .insert(body_name.clone(), RefOr::T(Schema::Object(stripped)));
    Some(Ref::from_schema_name(body_name))
}

fn for_each_operation(item: &mut PathItem, mut f: impl FnMut(&str, &mut Operation)) {
    for (method, op) in [
        ("get", &mut item.get),
        ("put", &mut item.put),
        ("post", &mut item.post),
        ("delete", &mut item.delete),
        ("patch", &mut item.patch),
        ("head", &mut item.head),
        ("options", &mut item.options),
        ("trace", &mut item.trace),
    ] {
        if let Some(op) = op {
            f(method, op);
        }
    }
}

/// `/openapi.json` and Swagger UI at `/docs`.
pub fn docs_router() -> Router<AppState> {
    Router::new().merge(SwaggerUi::new("/docs").url("/openapi.json", document()))
}

/// The committed document's text (pretty JSON with a trailing newline).
pub fn document_json() -> String {
    let mut text = serde_json::to_string_pretty(&document()).expect("document serializes");
    text.push('\n');
    text
}
