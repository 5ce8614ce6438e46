//! The tool list as lean as it can be without losing what a client
//! validates: every tool's schemas, made from the registry's, pass through
//! here, so a new tool is lean by construction (the budget test in
//! `tests/api/mcp_tool_sets.rs` counts the result with the o200k tokenizer).
//!
//! - Both schemas lose what only documents the Rust type: `$schema`,
//!   `title`, `"default": null`; a `$defs` entry used once is written in
//!   place.
//! - An input schema states an optional field by leaving it out of
//!   `required`, not also by a `null` type; its strings do not repeat in
//!   patterns what their descriptions say (see [`bounds::stated_in_words`]);
//!   descriptions are one paragraph.
//! - An output schema keeps types, enumerations, `required` and nullability
//!   (clients validate `structuredContent` against it) and drops
//!   descriptions and bounds: the tool manual (docs/tools.md) and the OpenAPI
//!   document have them. Its `meta` is [`meta_shape`], the
//!   same small shape for every tool.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::tools::bounds;
use crate::tools::fields::BOUND_KEYWORDS;

/// A tool's input schema for `tools/list`.
pub fn input(schema: Value) -> Map<String, Value> {
    let mut schema = inline_single_use(schema);
    walk(&mut schema, Side::Input);
    into_object(schema)
}

/// The schema of a tool's success envelope `{ok: true, data, meta}`.
pub fn output(data: Value) -> Map<String, Value> {
    let mut data = inline_single_use(data);
    walk(&mut data, Side::Output);
    let defs = match &mut data {
        Value::Object(map) => map.remove("$defs"),
        _ => None,
    };
    let mut schema = json!({
        "type": "object",
        "properties": {
            "ok": {"const": true},
            "data": data,
            "meta": meta_shape(),
        },
        "required": ["ok", "data", "meta"],
    });
    if let Some(defs) = defs {
        schema["$defs"] = defs;
    }
    into_object(schema)
}

/// Every answer's `meta`, as small as it can be and the same for every
/// tool: what an agent branches on is there (whether the budget cut
/// something, and each cut: docs/contract.md, "Budgets").
pub fn meta_shape() -> Value {
    json!({
        "type": "object",
        "properties": {"truncated": {"type": "boolean"}},
        "required": ["request_id", "truncated", "trimmed"],
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Input,
    Output,
}

/// Applies the rules above to one schema and every schema inside it.
fn walk(schema: &mut Value, side: Side) {
    let Value::Object(map) = schema else {
        return;
    };
    map.remove("$schema");
    map.remove("title");
    if map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
    if side == Side::Output {
        for key in ["description", "pattern"].iter().chain(&BOUND_KEYWORDS) {
            map.remove(*key);
        }
    } else if let Some(Value::String(text)) = map.get_mut("description") {
        *text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    if side == Side::Input {
        drop_null_type(map);
        bounds::stated_in_words(map);
    }
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(children)) = map.get_mut(key) {
            children.values_mut().for_each(|child| walk(child, side));
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(child) = map.get_mut(key) {
            walk(child, side);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(children)) = map.get_mut(key) {
            children.iter_mut().for_each(|child| walk(child, side));
        }
    }
}

/// `type: ["string", "null"]` as `type: "string"`, and `anyOf: [A, {type:
/// null}]` as A itself (its keys under the field's own).
fn drop_null_type(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        let kept = match <[Value; 1]>::try_from(kept) {
            Ok([one]) => one,
            Err(many) => Value::Array(many),
        };
        map.insert("type".into(), kept);
    }
    let Some(Value::Array(variants)) = map.get("anyOf") else {
        return;
    };
    let non_null: Vec<&Value> = variants
        .iter()
        .filter(|v| v.get("type") != Some(&json!("null")))
        .collect();
    if let ([Value::Object(only)], true) = (non_null.as_slice(), non_null.len() < variants.len()) {
        let only = only.clone();
        map.remove("anyOf");
        for (key, value) in only {
            map.entry(key).or_insert(value);
        }
    }
}

/// Writes each `$defs` entry referenced once in place of its `$ref` (its
/// description giving way to the referring field's); entries referenced
/// more often stay in `$defs`.
fn inline_single_use(mut schema: Value) -> Value {
    let Some(Value::Object(defs)) = schema.as_object_mut().and_then(|m| m.remove("$defs")) else {
        return schema;
    };
    let mut uses = HashMap::new();
    count_refs(&schema, &mut uses);
    defs.values().for_each(|def| count_refs(def, &mut uses));
    let (single, mut kept): (Map<String, Value>, Map<String, Value>) = defs
        .into_iter()
        .partition(|(name, _)| uses.get(name) == Some(&1));
    replace_refs(&mut schema, &single);
    kept.values_mut().for_each(|def| replace_refs(def, &single));
    if !kept.is_empty()
        && let Value::Object(map) = &mut schema
    {
        map.insert("$defs".into(), Value::Object(kept));
    }
    schema
}

fn def_name(value: &Value) -> Option<&str> {
    value.get("$ref")?.as_str()?.strip_prefix("#/$defs/")
}

fn count_refs(value: &Value, uses: &mut HashMap<String, usize>) {
    match value {
        Value::Object(map) => {
            if let Some(name) = def_name(value) {
                *uses.entry(name.to_owned()).or_default() += 1;
            }
            map.values().for_each(|child| count_refs(child, uses));
        }
        Value::Array(items) => items.iter().for_each(|child| count_refs(child, uses)),
        _ => {}
    }
}

/// Writes `single`'s defs in place of their `$ref`s, and then those inside
/// them (a def written in place may refer to another used once).
fn replace_refs(value: &mut Value, single: &Map<String, Value>) {
    if let Some(def) = def_name(value).and_then(|name| single.get(name))
        && let (Value::Object(map), Value::Object(def)) = (&mut *value, def)
    {
        map.remove("$ref");
        let has_description = map.contains_key("description");
        for (key, child) in def {
            if key == "description" && has_description {
                continue;
            }
            map.entry(key.clone()).or_insert_with(|| child.clone());
        }
    }
    match value {
        Value::Object(map) => map.values_mut().for_each(|c| replace_refs(c, single)),
        Value::Array(items) => items.iter_mut().for_each(|c| replace_refs(c, single)),
        _ => {}
    }
}

fn into_object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        // `true` (any value) and other non-object schemas.
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_optional_input_field_is_its_type_without_null() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "In",
            "type": "object",
            "properties": {
                "tag": {"type": ["string", "null"], "default": null, "maxLength": 50, "pattern": "^[^\\u0000]*$"},
                "status": {"anyOf": [{"$ref": "#/$defs/Status"}, {"type": "null"}], "description": "Only these."},
            },
            "$defs": {"Status": {"type": "string", "enum": ["open", "done"], "description": "A status."}},
        });
        assert_eq!(
            Value::Object(input(schema)),
            json!({
                "type": "object",
                "properties": {
                    "tag": {"type": "string", "maxLength": 50},
                    "status": {"type": "string", "enum": ["open", "done"], "description": "Only these."},
                },
            })
        );
    }

    #[test]
    fn an_output_keeps_nullability_and_shared_defs() {
        let data = json!({
            "title": "Out",
            "type": "object",
            "description": "An answer.",
            "properties": {
                "a": {"$ref": "#/$defs/Item", "description": "The first."},
                "b": {"anyOf": [{"$ref": "#/$defs/Item"}, {"type": "null"}]},
                "c": {"type": ["string", "null"], "description": "Maybe."},
            },
            "required": ["a"],
            "$defs": {"Item": {"type": "object", "title": "Item", "properties": {"x": {"type": "integer", "description": "X."}}}},
        });
        let schema = Value::Object(output(data));
        let data = &schema["properties"]["data"];
        assert_eq!(data["properties"]["a"], json!({"$ref": "#/$defs/Item"}));
        assert_eq!(data["properties"]["b"]["anyOf"][1], json!({"type": "null"}));
        assert_eq!(data["properties"]["c"], json!({"type": ["string", "null"]}));
        assert_eq!(data["required"], json!(["a"]));
        assert_eq!(
            schema["$defs"]["Item"],
            json!({"type": "object", "properties": {"x": {"type": "integer"}}})
        );
        assert_eq!(schema["properties"]["meta"], meta_shape());
    }
}
