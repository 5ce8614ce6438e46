//! The limits the document states. A tool's input schema (the one MCP
//! serves) states the bounds the tool enforces; [`InputBounds`] copies them
//! onto the query, path and body schemas of the routes that call it, so
//! they are stated once and every surface shows the same ones.
//! [`AnswerBounds`] states what every answer keeps to: each string, integer
//! and known list has a maximum.

use std::collections::BTreeSet;

use serde_json::Value;
use utoipa::Modify;
use utoipa::openapi::schema::{
    AdditionalProperties, ArrayItems, KnownFormat, SchemaFormat, SchemaType, Type,
};
use utoipa::openapi::{OpenApi, RefOr, Required, Schema};

use super::{body_ref, keyword, operations, schema_name};
use crate::tools::registry;

/// Operations that are not named after the tool they call.
fn tool_of(operation_id: &str) -> &str {
    match operation_id {
        "note_create" => "note_write",
        "health_ready" => "health",
        other => other,
    }
}

/// Every bound of every input, copied from the tool's input schema into its
/// query, path and body schemas; a request body is required only when it has
/// a required field.
pub(super) struct InputBounds;

impl Modify for InputBounds {
    fn modify(&self, doc: &mut OpenApi) {
        let schemas = &mut doc.components.get_or_insert_with(Default::default).schemas;
        for (_, _, op) in operations(&mut doc.paths) {
            let Some(def) = op
                .operation_id
                .as_deref()
                .and_then(|id| registry::find(tool_of(id)))
            else {
                continue;
            };
            let input = registry::input_schema_value(def);
            for param in op.parameters.iter_mut().flatten() {
                if let RefOr::T(param) = param
                    && let Some(source) = input_property(input, &param.name)
                    && let Some(schema) = &mut param.schema
                {
                    copy_bounds(&source, schema, input);
                }
            }
            let Some(name) = body_ref(op).and_then(|r| schema_name(r).map(str::to_owned)) else {
                continue;
            };
            let Some(RefOr::T(Schema::Object(body))) = schemas.get_mut(&name) else {
                continue;
            };
            for (field, schema) in body.properties.iter_mut() {
                if let Some(source) = input_property(input, field) {
                    copy_bounds(&source, schema, input);
                }
            }
            let required = !body.required.is_empty();
            if let Some(RefOr::T(request)) = &mut op.request_body {
                request.required = Some(if required {
                    Required::True
                } else {
                    Required::False
                });
            }
        }
    }
}

/// Copies the bounds of `source` (a tool input field) onto `target` (its
/// document schema), and those of array items onto its items. A target that
/// is only a `$ref`, a union or untyped has no bounds.
fn copy_bounds(source: &Value, target: &mut RefOr<Schema>, root: &Value) {
    let Some(source) = non_null(source, root) else {
        return;
    };
    let size = |keyword: &str| {
        source
            .get(keyword)
            .and_then(Value::as_u64)
            .map(|n| n as usize)
    };
    match target {
        RefOr::T(Schema::Object(object)) if object.schema_type != SchemaType::AnyValue => {
            object.min_length = size("minLength").or(object.min_length);
            object.max_length = size("maxLength").or(object.max_length);
            if let Some(pattern) = source.get("pattern").and_then(Value::as_str) {
                object.pattern = Some(pattern.to_owned());
            }
            if let Some(minimum) = source.get("minimum").and_then(number) {
                object.minimum = Some(minimum);
            }
            if let Some(maximum) = source.get("maximum").and_then(number) {
                object.maximum = Some(maximum);
            }
            if let Some(not) = source.get("not") {
                keyword(&mut object.extensions, "not", not.clone());
            }
        }
        RefOr::T(Schema::Array(array)) => {
            array.min_items = size("minItems").or(array.min_items);
            array.max_items = size("maxItems").or(array.max_items);
            if let (Some(items), ArrayItems::RefOrSchema(target_items)) =
                (source.get("items"), &mut array.items)
            {
                copy_bounds(items, target_items, root);
            }
        }
        _ => {}
    }
}

/// A JSON Schema number as the document model's.
fn number(value: &Value) -> Option<utoipa::Number> {
    if let Some(n) = value.as_i64() {
        return Some(utoipa::Number::Int(n as isize));
    }
    value.as_f64().map(utoipa::Number::Float)
}

/// Every string and integer (at least 0) of every answer schema (the
/// schemas no request body names) has a maximum, and so do the lists
/// [`answer_list_max`] knows. Integers without a format get `int64`.
pub(super) struct AnswerBounds;

impl Modify for AnswerBounds {
    fn modify(&self, doc: &mut OpenApi) {
        let bodies: BTreeSet<String> = operations(&mut doc.paths)
            .into_iter()
            .filter_map(|(_, _, op)| body_ref(op).and_then(|r| schema_name(r).map(str::to_owned)))
            .collect();
        let schemas = &mut doc.components.get_or_insert_with(Default::default).schemas;
        for (name, schema) in schemas.iter_mut() {
            if !bodies.contains(name) {
                bound_answer(name, None, schema);
            }
        }
    }
}

fn bound_answer(name: &str, property: Option<&str>, schema: &mut RefOr<Schema>) {
    let RefOr::T(schema) = schema else {
        return;
    };
    bound_schema(name, property, schema);
}

fn bound_schema(name: &str, property: Option<&str>, schema: &mut Schema) {
    match schema {
        Schema::Object(object) => {
            let enumerated = object.enum_values.is_some();
            if has(&object.schema_type, Type::String) && !enumerated {
                object.max_length.get_or_insert(ANSWER_STRING_MAX as usize);
            }
            if has(&object.schema_type, Type::Integer) {
                // Counts, versions, sequence numbers, sizes: none is negative.
                object.minimum.get_or_insert(utoipa::Number::Int(0));
                object
                    .maximum
                    .get_or_insert(utoipa::Number::Int(ANSWER_INTEGER_MAX as isize));
                object
                    .format
                    .get_or_insert(SchemaFormat::KnownFormat(KnownFormat::Int64));
            }
            if let Some(names) = &mut object.property_names {
                bound_schema(name, None, names);
            }
            if let Some(additional) = &mut object.additional_properties
                && let AdditionalProperties::RefOr(values) = additional.as_mut()
            {
                bound_answer(name, None, values);
            }
            for (key, value) in object.properties.iter_mut() {
                bound_answer(name, Some(key), value);
            }
        }
        Schema::Array(array) => {
            if array.max_items.is_none() {
                array.max_items = property
                    .and_then(|p| answer_list_max(name, p))
                    .map(|max| max as usize);
            }
            if let ArrayItems::RefOrSchema(items) = &mut array.items {
                // A list of lists names its inner lists `property[]`.
                let inner = property.map(|p| format!("{p}[]"));
                bound_answer(name, inner.as_deref(), items);
            }
        }
        Schema::OneOf(one_of) => {
            for branch in &mut one_of.items {
                bound_answer(name, property, branch);
            }
        }
        Schema::AnyOf(any_of) => {
            for branch in &mut any_of.items {
                bound_answer(name, property, branch);
            }
        }
        Schema::AllOf(all_of) => {
            for branch in &mut all_of.items {
                bound_answer(name, property, branch);
            }
        }
        _ => {}
    }
}

/// Whether a schema's `type` is or includes `wanted`.
fn has(schema_type: &SchemaType, wanted: Type) -> bool {
    match schema_type {
        SchemaType::Type(t) => *t == wanted,
        SchemaType::Array(types) => types.contains(&wanted),
        SchemaType::AnyValue => false,
    }
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
    // The REST graph budget (docs/contract.md, "Budgets") bounds the emitted size, and every
    // node, edge or cut entry takes more than one unit of it.
    let graph = 5_000_000;
    Some(match (schema, property) {
        ("BoardColumn" | "TaskPage" | "NotePage" | "SearchResults", "items") => MAX_LIMIT as u64,
        ("ChangesPage", "events") => MAX_LIMIT as u64,
        ("TaskBoard", "columns") => 4,
        ("Task" | "Note" | "NoteSummary", "tags") => u64::from(TAGS_MAX),
        ("Note", "links" | "unresolved_links") | ("NoteWritten", "linked" | "unresolved_links") => {
            links
        }
        ("DoctorReport", "orphans" | "dangling" | "self_loops" | "duplicates" | "cycles") => {
            crate::tools::graph::DOCTOR_SHOWN as u64
        }
        // A cycle's tasks: no more than an answer may hold.
        ("DoctorReport", "cycles[]") => graph,
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
                .filter(|b| b.get("type") != Some(&Value::from("null")));
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder};

    fn value(schema: &RefOr<Schema>) -> Value {
        serde_json::to_value(schema).unwrap()
    }

    #[test]
    fn an_inputs_bounds_reach_its_document_schema_and_its_items() {
        let source = json!({
            "type": ["array", "null"],
            "maxItems": 20,
            "items": {"type": "string", "minLength": 1, "maxLength": 50, "not": {"pattern": "x"}},
        });
        let mut target = RefOr::T(Schema::Array(
            ArrayBuilder::new()
                .items(ObjectBuilder::new().schema_type(Type::String))
                .build(),
        ));
        copy_bounds(&source, &mut target, &json!({}));
        assert_eq!(
            value(&target),
            json!({"type": "array", "items": {"type": "string", "maxLength": 50,
                "minLength": 1, "not": {"pattern": "x"}}, "maxItems": 20})
        );
    }

    #[test]
    fn an_untyped_target_gets_no_bounds() {
        let untyped = ObjectBuilder::new().schema_type(SchemaType::AnyValue);
        let mut target = RefOr::T(Schema::Object(untyped.build()));
        let before = value(&target);
        copy_bounds(&json!({"maxLength": 5}), &mut target, &json!({}));
        assert_eq!(value(&target), before);
    }

    #[test]
    fn every_answer_integer_and_free_string_is_bounded_but_an_enum_is_not() {
        let mut count = RefOr::T(Schema::Object(
            ObjectBuilder::new().schema_type(Type::Integer).build(),
        ));
        bound_answer("Task", Some("version"), &mut count);
        assert_eq!(
            value(&count),
            json!({"type": "integer", "format": "int64", "maximum": ANSWER_INTEGER_MAX, "minimum": 0})
        );
        let mut status = RefOr::T(Schema::Object(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(["open"]))
                .build(),
        ));
        bound_answer("Task", Some("status"), &mut status);
        assert_eq!(value(&status), json!({"type": "string", "enum": ["open"]}));
        let mut tags = RefOr::T(Schema::Array(
            ArrayBuilder::new()
                .items(ObjectBuilder::new().schema_type(Type::String))
                .build(),
        ));
        bound_answer("Task", Some("tags"), &mut tags);
        assert_eq!(
            value(&tags)["maxItems"],
            json!(crate::tools::bounds::TAGS_MAX)
        );
        assert_eq!(value(&tags)["items"]["maxLength"], json!(ANSWER_STRING_MAX));
    }
}
