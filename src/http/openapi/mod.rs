//! The OpenAPI document, generated from the routers. After the routes are
//! collected, one walk over every operation attaches the shared `ErrorEnvelope`
//! responses, so no route can forget them and none repeats them.

pub mod schemas;

use std::hash::{Hash, Hasher};
use std::sync::LazyLock;

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use utoipa::PartialSchema;
use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, Required, Schema};
use utoipa_swagger_ui::SwaggerUi;

use serde_json::{Map, Value, json};

use crate::tools::registry;

use crate::envelope::{ErrorBody, ErrorCategory, ErrorCode, Meta, Trim, TrimKind};
use crate::http::AppState;
use crate::http::semantics::revalidation;
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
        crate::http::semantics::conditional::IF_MATCH_OPERATIONS.contains(&id)
            || crate::http::semantics::conditional::IF_NONE_MATCH_OPERATIONS.contains(&id)
    }) {
        statuses.push("412");
    }
    if op.request_body.is_some() {
        statuses.extend(["413", "415"]);
    }
    statuses
}

/// The finished document, as served at `/openapi.json` and committed: the
/// routes with their shared errors, then what utoipa cannot say by itself
/// (see [`tell_the_whole_truth`]).
pub fn document() -> Value {
    let mut doc = serde_json::to_value(routes_document()).expect("document serializes");
    tell_the_whole_truth(&mut doc);
    crate::http::semantics::idempotency::declare(&mut doc);
    crate::http::middleware::rate_limit::declare_in(&mut doc);
    crate::http::semantics::conditional::declare(&mut doc);
    // Last: every error response declared above offers problem details too.
    crate::http::semantics::problem::declare(&mut doc);
    doc
}

/// The document as utoipa builds it from the routes, with the shared error
/// responses, named enums and `XBody` request schemas.
fn routes_document() -> OpenApi {
    let (_, mut doc) = crate::http::routes::api_router().split_for_parts();
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
    let body = serde_json::to_vec(&document()).expect("document serializes");
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
    let json = HeaderValue::from_static(crate::http::semantics::response::JSON);
    let etag = served.etag.clone();
    (
        [(header::CONTENT_TYPE, json), (header::ETAG, etag)],
        served.body.clone(),
    )
        .into_response()
}

/// The committed document's text (pretty JSON with a trailing newline).
pub fn document_json() -> String {
    let mut text = serde_json::to_string_pretty(&document()).expect("document serializes");
    text.push('\n');
    text
}

/// The bound keywords copied from a tool's input JSON Schema into the
/// document, so that the limits the tools enforce are stated once (on the
/// input types) and every surface's schema shows the same ones.
const BOUND_KEYWORDS: [&str; 8] = [
    "minLength",
    "maxLength",
    "pattern",
    "not",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
];

/// Operations that are not named after the tool they call.
fn tool_of(operation_id: &str) -> &str {
    match operation_id {
        "note_create" => "note_write",
        "health_ready" => "health",
        other => other,
    }
}

/// What the routes alone do not say, added to the serialized document:
/// - the bearer scheme (optional at the root: a server without `--token`
///   takes anonymous calls) and public health probes, which never answer 401;
/// - a relative `servers` entry (the gateway is wherever it was started);
/// - every bound of every input, copied from the tool's input schema into
///   its query, path and body schemas;
/// - a request body is required only when it has a required field;
/// - note create and replace are different bodies (only a replace takes
///   `expected_version`); an update names at least one field to change.
fn tell_the_whole_truth(doc: &mut Value) {
    doc["servers"] = json!([{
        "url": "/",
        "description": "The cairn that serves this document, wherever it runs (local by default, or a production gateway).",
        "x-internal": true,
    }]);
    doc["components"]["securitySchemes"] = json!({
        "bearer": {
            "type": "http",
            "scheme": "bearer",
            "description": "A token a server started with `--token` (`CAIRN_TOKEN`), `--tokens-file` or `CAIRN_TOKENS` accepts, required on every route but the health probes. A `read` token may only read (GET), a `write` token also write, an `admin` token everything. Without one configured, calls need no token.",
        }
    });
    doc["security"] = json!([{}, {"bearer": []}]);
    let components = doc["components"]["schemas"].take();
    let mut schemas = match components {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    split_note_bodies(doc, &mut schemas);
    require_a_change(&mut schemas);
    let mut bodies = std::collections::BTreeSet::new();
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for item in paths.values_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for op in item.values_mut() {
            let Some(op_id) = op["operationId"].as_str().map(str::to_owned) else {
                continue;
            };
            let Some(def) = registry::find(tool_of(&op_id)) else {
                continue;
            };
            let input = registry::input_schema_value(def);
            // `get_mut`, never `op[key]` on a `&mut Value`: that inserts null.
            if def.name == "health" {
                op["security"] = json!([{}]);
                if let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) {
                    responses.remove("401");
                }
            }
            if let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) {
                for param in params {
                    let name = param["name"].as_str().unwrap_or_default().to_owned();
                    if let Some(source) = input_property(input, &name) {
                        copy_bounds(&source, &mut param["schema"], input);
                    }
                }
            }
            let body_ref = op
                .pointer("/requestBody/content/application~1json/schema/$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/components/schemas/"))
                .map(str::to_owned);
            if let Some(name) = &body_ref {
                bodies.insert(name.clone());
            }
            if let Some(name) = body_ref
                && let Some(body) = schemas.get_mut(&name)
            {
                // The body's properties, and those of each `anyOf` branch.
                if let Some(branches) = body.get_mut("anyOf").and_then(Value::as_array_mut) {
                    for branch in branches {
                        copy_property_bounds(branch, input);
                    }
                }
                copy_property_bounds(body, input);
                // Required when some field is, or when it must name one (`anyOf`).
                let required = body.get("anyOf").is_some()
                    || body
                        .get("required")
                        .and_then(Value::as_array)
                        .is_some_and(|r| !r.is_empty());
                op["requestBody"]["required"] = Value::Bool(required);
            }
        }
    }
    for (name, schema) in schemas.iter_mut() {
        if !bodies.contains(name) {
            bound_answer(name, schema);
        }
    }
    doc["components"]["schemas"] = Value::Object(schemas);
}

/// The longest string an answer carries: nothing this server stores is
/// longer than the longest input (note content), and failure messages are cut.
const ANSWER_STRING_MAX: u64 = crate::tools::bounds::CONTENT_MAX as u64;
/// The largest integer in an answer (counts, versions, sizes): 2^53 - 1.
const ANSWER_INTEGER_MAX: i64 = crate::tools::bounds::VERSION_MAX;

/// How many items an answer's list holds at most, and why that holds.
/// Lists not named here have no bound (see tests/contract/spectral.yaml).
fn answer_list_max(schema: &str, property: &str) -> Option<u64> {
    use crate::tools::bounds::{CONTENT_MAX, TAGS_MAX};
    use crate::tools::common::MAX_LIMIT;
    // A `[[x]]` link is 5 characters or more of the content.
    let links = u64::from(CONTENT_MAX) / 5;
    // The REST graph budget (docs/contract.md, "Budgets") bounds the emitted size,
    // and every node, edge or cut entry takes more than one unit of it.
    let graph = 5_000_000;
    Some(match (schema, property) {
        ("BoardColumn" | "TaskPage" | "NotePage" | "SearchResults", "items") => MAX_LIMIT as u64,
        ("ChangesPage", "events") => MAX_LIMIT as u64,
        ("TaskBoard", "columns") => 4,
        ("Task" | "Note" | "NoteSummary", "tags") => u64::from(TAGS_MAX),
        ("Note", "links" | "unresolved_links") | ("NoteWritten", "linked" | "unresolved_links") => {
            links
        }
        ("DoctorReport", "orphans") => 100,
        ("Subgraph" | "GraphPath", "nodes" | "edges") | ("Meta", "trimmed") => graph,
        // Suggestions are the nearest few names or a next step or two.
        ("ErrorBody" | "ProblemDetails", "suggestions") => 10,
        // Three checks today; room for a few more.
        ("HealthReport", "checks") => 10,
        // No tool adds warnings today; room for a few.
        ("Meta", "warnings") => 10,
        _ => return None,
    })
}

/// States the bounds of an answer schema: every string and integer (at
/// least 0), and the lists [`answer_list_max`] knows. Integers without a
/// format get `int64`.
fn bound_answer(name: &str, schema: &mut Value) {
    fn walk(name: &str, property: Option<&str>, schema: &mut Value) {
        let Some(object) = schema.as_object_mut() else {
            return;
        };
        let types: Vec<String> = match object.get("type") {
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        let has = |t: &str| types.iter().any(|x| x == t);
        let enumerated = object.contains_key("enum") || object.contains_key("const");
        if has("string") && !enumerated && !object.contains_key("maxLength") {
            object.insert("maxLength".into(), json!(ANSWER_STRING_MAX));
        }
        if has("integer") {
            // Counts, versions, sequence numbers, sizes: none is negative.
            object.entry("minimum").or_insert(json!(0));
            object.entry("maximum").or_insert(json!(ANSWER_INTEGER_MAX));
            object.entry("format").or_insert(json!("int64"));
        }
        if has("array")
            && !object.contains_key("maxItems")
            && let Some(max) = property.and_then(|p| answer_list_max(name, p))
        {
            object.insert("maxItems".into(), json!(max));
        }
        for key in ["items", "propertyNames", "additionalProperties"] {
            if let Some(inner) = object.get_mut(key) {
                walk(name, None, inner);
            }
        }
        if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
            for (key, value) in properties.iter_mut() {
                walk(name, Some(key), value);
            }
        }
        for key in ["oneOf", "anyOf", "allOf"] {
            if let Some(branches) = object.get_mut(key).and_then(Value::as_array_mut) {
                for branch in branches {
                    walk(name, property, branch);
                }
            }
        }
    }
    walk(name, None, schema);
}

/// Copies the bounds of each property of an object schema from the input.
fn copy_property_bounds(object: &mut Value, input: &Value) {
    if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
        for (field, schema) in properties {
            if let Some(source) = input_property(input, field) {
                copy_bounds(&source, schema, input);
            }
        }
    }
}

/// The input schema of a query, path or body field: a property of the
/// tool's input, or for the board's `<column>_cursor` parameters the
/// column's entry in `cursors`.
fn input_property(input: &Value, name: &str) -> Option<Value> {
    if let Some(property) = input["properties"].get(name) {
        return Some(property.clone());
    }
    let column = name.strip_suffix("_cursor")?;
    let cursors = non_null(&input["properties"]["cursors"], input)?;
    cursors["properties"].get(column).cloned()
}

/// The non-null form of a JSON Schema (`T` of an `Option<T>`), `$ref`s followed.
fn non_null(schema: &Value, root: &Value) -> Option<Value> {
    let schema = deref(schema, root);
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let mut rest = branches
                .iter()
                .map(|b| deref(b, root))
                .filter(|b| b.get("type") != Some(&json!("null")));
            return rest.next().cloned();
        }
    }
    Some(schema.clone())
}

fn deref<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| root["$defs"].get(name))
        .unwrap_or(schema)
}

/// Copies the bound keywords of `source` (a tool input field) onto `target`
/// (its document schema), and those of array items onto `items`. A target
/// that is only a `$ref` or a `null | $ref` union (an enum) has no bounds.
fn copy_bounds(source: &Value, target: &mut Value, root: &Value) {
    let Some(source) = non_null(source, root) else {
        return;
    };
    let Some(target) = target.as_object_mut() else {
        return;
    };
    if !target.contains_key("type") {
        return;
    }
    for keyword in BOUND_KEYWORDS {
        if let Some(value) = source.get(keyword) {
            target.insert(keyword.to_owned(), value.clone());
        }
    }
    if let (Some(items), Some(target_items)) = (source.get("items"), target.get_mut("items")) {
        copy_bounds(items, target_items, root);
    }
}

/// `POST /notes` creates and `PUT /notes/{id}` replaces: the create body is
/// the replace body without `expected_version`, which only a replace takes.
fn split_note_bodies(doc: &mut Value, schemas: &mut Map<String, Value>) {
    let Some(body) = doc
        .pointer_mut("/paths/~1api~1v1~1notes/post/requestBody/content/application~1json/schema")
    else {
        return;
    };
    let Some(name) = body["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
        .map(str::to_owned)
    else {
        return;
    };
    let Some(mut create) = schemas.get(&name).cloned() else {
        return;
    };
    if let Some(properties) = create.get_mut("properties").and_then(Value::as_object_mut) {
        properties.shift_remove("expected_version");
        properties.shift_remove("id");
    }
    schemas.insert("NoteCreateBody".into(), create);
    *body = json!({"$ref": "#/components/schemas/NoteCreateBody"});
}

/// `task_update` with nothing to change is `invalid_input`: the body names at
/// least one of the fields it changes, with a value (null changes nothing).
/// Each branch is the whole body with one of them required, so a generated
/// client gets one complete type per branch.
fn require_a_change(schemas: &mut Map<String, Value>) {
    let Some(update) = schemas.get_mut("TaskUpdateInputBody") else {
        return;
    };
    let fields = ["title", "description", "tags", "priority"];
    let properties = update["properties"].clone();
    let branches: Vec<Value> = fields
        .iter()
        .filter_map(|field| {
            let mut properties = properties.clone();
            let present = without_null(properties.get(*field)?);
            properties[*field] = present;
            Some(json!({
                "type": "object",
                "required": [field],
                "properties": properties,
                "additionalProperties": false,
            }))
        })
        .collect();
    update["anyOf"] = Value::Array(branches);
}

/// A property schema that refuses null: `type: [T, "null"]` loses `"null"`,
/// a `oneOf`/`anyOf` loses its null branch.
fn without_null(property: &Value) -> Value {
    let mut out = property.clone();
    if let Some(Value::Array(types)) = out.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            out["type"] = only;
        }
        return out;
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(branches) = property.get(key).and_then(Value::as_array) {
            let kept: Vec<&Value> = branches
                .iter()
                .filter(|b| b.get("type") != Some(&json!("null")))
                .collect();
            if let [only] = kept.as_slice() {
                return (*only).clone();
            }
        }
    }
    out
}
