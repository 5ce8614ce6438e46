//! A tool's input fields as the text surfaces see them (CLI flags, REST query
//! strings, docs/tools.md), read from the registry's JSON Schema: name, shape (how
//! a text value becomes JSON), display type, whether it is required, and its
//! description.

use serde_json::{Map, Value};

use crate::envelope::ToolError;
use crate::tools::bounds::deref;
use crate::tools::{ToolDef, registry};

/// How a flag value becomes JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    String,
    Integer,
    Number,
    Boolean,
    /// An array; `--tags a,b` splits on commas, each item parsed by the inner shape.
    Array(Box<Shape>),
    /// Anything else (objects, unions): JSON when it parses, else a string.
    Other,
}

/// One input field of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct InputField {
    pub name: String,
    pub shape: Shape,
    /// May be null (an optional field).
    pub nullable: bool,
    /// How the type reads in docs, e.g. `string`, `integer`, `string[]`, `"open" | "done"`.
    pub display: String,
    /// The values an enumerated field (or each item of an enumerated list)
    /// may take, as JSON: `["low", "normal", "high", "urgent"]`.
    pub values: Option<Vec<Value>>,
    pub required: bool,
    pub description: String,
    pub default: Option<Value>,
    /// The schema's bounds, by JSON Schema keyword (`minimum`, `maxLength`, ...).
    pub bounds: Map<String, Value>,
}

/// The JSON Schema keywords that bound a value.
pub const BOUND_KEYWORDS: [&str; 6] = [
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
];

/// [`input_fields`] of a registered tool, made once per process: the REST
/// gateway types every query string by them.
pub fn registered_input_fields(name: &str) -> &'static [InputField] {
    static FIELDS: std::sync::OnceLock<Vec<(&'static str, Vec<InputField>)>> =
        std::sync::OnceLock::new();
    let fields = FIELDS.get_or_init(|| {
        registry::REGISTRY
            .iter()
            .map(|def| (def.name, input_fields(def)))
            .collect()
    });
    fields
        .iter()
        .find(|(tool, _)| *tool == name)
        .map_or(&[], |(_, fields)| fields.as_slice())
}

/// The input fields of `def`, in schema order.
pub fn input_fields(def: &ToolDef) -> Vec<InputField> {
    let schema = registry::input_schema_value(def);
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let resolved = Resolved::of(property, &defs);
            InputField {
                name: name.clone(),
                shape: resolved.shape.clone(),
                nullable: resolved.nullable,
                display: resolved.display,
                values: resolved.values,
                required: required.contains(&name.as_str()),
                description: describe(property, &defs),
                default: property.get("default").cloned(),
                bounds: bounds(property, &defs),
            }
        })
        .collect()
}

struct Resolved {
    shape: Shape,
    nullable: bool,
    display: String,
    values: Option<Vec<Value>>,
}

impl Resolved {
    fn of(schema: &Value, defs: &Map<String, Value>) -> Resolved {
        let schema = deref(schema, defs);
        // `Option<T>` comes as `anyOf: [T, {type: null}]` (or `oneOf`).
        for key in ["anyOf", "oneOf"] {
            if let Some(variants) = schema.get(key).and_then(Value::as_array) {
                let non_null: Vec<&Value> = variants
                    .iter()
                    .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
                    .collect();
                let nullable = non_null.len() < variants.len();
                if let [only] = non_null.as_slice() {
                    let mut inner = Resolved::of(only, defs);
                    inner.nullable |= nullable;
                    return inner;
                }
                // A union of constants (an enum with documented variants).
                let consts: Option<Vec<&Value>> = non_null
                    .iter()
                    .map(|v| deref(v, defs).get("const"))
                    .collect();
                if let Some(consts) = consts {
                    return Resolved::enumeration(&consts, nullable);
                }
                return Resolved::other(nullable);
            }
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            let values: Vec<&Value> = values.iter().filter(|v| !v.is_null()).collect();
            let nullable = schema
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|all| all.iter().any(Value::is_null));
            return Resolved::enumeration(&values, nullable);
        }
        let (types, nullable) = match schema.get("type") {
            Some(Value::String(t)) => (vec![t.as_str()], false),
            Some(Value::Array(ts)) => {
                let ts: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
                let nullable = ts.contains(&"null");
                (ts.into_iter().filter(|t| *t != "null").collect(), nullable)
            }
            _ => (Vec::new(), false),
        };
        let (shape, display) = match types.as_slice() {
            ["string"] => (Shape::String, "string".to_owned()),
            ["integer"] => (Shape::Integer, "integer".to_owned()),
            ["number"] => (Shape::Number, "number".to_owned()),
            ["boolean"] => (Shape::Boolean, "boolean".to_owned()),
            ["array"] => {
                let item = schema
                    .get("items")
                    .map(|i| Resolved::of(i, defs))
                    .unwrap_or(Resolved::other(false));
                let display = if item.display.contains(' ') {
                    format!("({})[]", item.display)
                } else {
                    format!("{}[]", item.display)
                };
                return Resolved {
                    shape: Shape::Array(Box::new(item.shape)),
                    nullable,
                    display,
                    values: item.values,
                };
            }
            ["object"] => (Shape::Other, "object".to_owned()),
            _ => (Shape::Other, "json".to_owned()),
        };
        Resolved {
            shape,
            nullable,
            display,
            values: None,
        }
    }

    /// Anything the text surfaces pass on as JSON.
    fn other(nullable: bool) -> Resolved {
        Resolved {
            shape: Shape::Other,
            nullable,
            display: "json".into(),
            values: None,
        }
    }

    fn enumeration(values: &[&Value], nullable: bool) -> Resolved {
        let all_strings = values.iter().all(|v| v.is_string());
        Resolved {
            shape: if all_strings {
                Shape::String
            } else {
                Shape::Other
            },
            nullable,
            display: values
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(" | "),
            values: Some(values.iter().map(|&v| v.clone()).collect()),
        }
    }
}

/// Bounds stated on the property or on the type it references.
fn bounds(property: &Value, defs: &Map<String, Value>) -> Map<String, Value> {
    let referenced = deref(property, defs);
    BOUND_KEYWORDS
        .iter()
        .filter_map(|&k| {
            let value = property.get(k).or_else(|| referenced.get(k))?;
            Some((k.to_owned(), value.clone()))
        })
        .collect()
}

/// The field's own description, else its referenced type's (first line of each).
fn describe(property: &Value, defs: &Map<String, Value>) -> String {
    let own = property.get("description").and_then(Value::as_str);
    let referenced = || {
        let inner = property
            .get("anyOf")
            .and_then(Value::as_array)
            .and_then(|vs| vs.iter().find(|v| v.get("$ref").is_some()))
            .unwrap_or(property);
        deref(inner, defs)
            .get("description")
            .and_then(Value::as_str)
    };
    own.or_else(referenced)
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

impl InputField {
    /// A text value (a flag, a query parameter) as JSON, by the field's schema:
    /// strings stay strings; numbers and booleans must parse; arrays take JSON
    /// or a comma-separated list.
    pub fn parse(&self, raw: &str) -> Result<Value, ToolError> {
        if self.nullable && raw == "null" {
            return Ok(Value::Null);
        }
        coerce_shape(&self.shape, raw).map_err(|expected| {
            ToolError::invalid_input(&self.name, format!("expected {expected}, got `{raw}`"))
        })
    }
}

impl InputField {
    /// A text value of a REST query parameter: typed by the field's schema
    /// like [`InputField::parse`], except that `null` is not a value (the
    /// parameter is omitted instead) and so a string field takes `null` as text.
    pub fn parse_text(&self, raw: &str) -> Result<Value, ToolError> {
        coerce_shape(&self.shape, raw).map_err(|expected| {
            ToolError::invalid_input(&self.name, format!("expected {expected}, got `{raw}`"))
        })
    }
}

fn coerce_shape(shape: &Shape, raw: &str) -> Result<Value, String> {
    match shape {
        Shape::String => Ok(Value::String(raw.to_owned())),
        Shape::Integer => match serde_json::from_str::<Value>(raw) {
            Ok(v @ Value::Number(_)) if v.is_i64() || v.is_u64() => Ok(v),
            _ => Err("an integer".into()),
        },
        Shape::Number => match serde_json::from_str::<Value>(raw) {
            Ok(v @ Value::Number(_)) => Ok(v),
            _ => Err("a number".into()),
        },
        Shape::Boolean => match raw {
            "true" | "yes" | "1" => Ok(Value::Bool(true)),
            "false" | "no" | "0" => Ok(Value::Bool(false)),
            _ => Err("true or false".into()),
        },
        Shape::Array(item) => {
            if raw.trim_start().starts_with('[')
                && let Ok(v @ Value::Array(_)) = serde_json::from_str::<Value>(raw)
            {
                return Ok(v);
            }
            raw.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| coerce_shape(item, s))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
                .map_err(|e| format!("a comma-separated list of {e}"))
        }
        Shape::Other => {
            Ok(serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned())))
        }
    }
}
