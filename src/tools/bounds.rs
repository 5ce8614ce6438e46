//! What every tool input may hold at most. The limits are stated once, on the
//! input types (schemars attributes read these consts; utoipa's need literals
//! and a test holds the two together), and enforced here from the input's own
//! JSON Schema, so MCP, REST and the CLI refuse the same values with
//! `invalid_input`.
//!
//! Also here: JSON Schema's notion of an integer (`5.0` is one), and the
//! schema transform that keeps only standard `format` values.

use serde_json::{Map, Number, Value};

use crate::envelope::ToolError;

/// A task or note title, in characters.
pub const TITLE_MAX: u32 = 300;
/// A task description, in characters.
pub const DESCRIPTION_MAX: u32 = 50_000;
/// Tags on one task or note.
pub const TAGS_MAX: u32 = 20;
/// One tag, in characters.
pub const TAG_MAX: u32 = 50;
/// An agent name, in characters.
pub const AGENT_MAX: u32 = 100;
/// Free text to filter or search by, in characters.
pub const QUERY_MAX: u32 = 1_000;
/// An id, id prefix or slug given to find an entity, in characters (a slug
/// is made from a title, so it is never longer than a title's lowercase form).
pub const KEY_MAX: u32 = 400;
/// An opaque cursor, in characters (the server's are well under it).
pub const CURSOR_MAX: u32 = 256;
/// A note's `source_url`, in characters.
pub const URL_MAX: u32 = 2_048;
/// Note content, in characters. The deployment's byte limit
/// (`content_too_large`) applies too and is normally the tighter one.
pub const CONTENT_MAX: u32 = 1_048_576;
/// "At least one letter or digit" (a note title, a search), as a pattern
/// that reads the same in every regex dialect a client may validate with:
/// one character that is no ASCII punctuation, space or control character.
/// JSON Schema's patterns are ECMA-262, where `\w` means ASCII only (so
/// `[^\W_]` refused titles such as `日本語` in clients that validate, and
/// schemathesis' validator), while `\p{L}` is unknown to others (Python's
/// `re`). The tools accept any Unicode letter or digit (`char::is_alphanumeric`),
/// so a value whose only characters beyond ASCII are no letters (`€`, `…`)
/// matches this and is still refused with `invalid_input`.
pub const LETTER_OR_DIGIT: &str = r"[^\u0000-\u002F\u003A-\u0040\u005B-\u0060\u007B-\u009F]";
/// "Not blank" (a task title, an agent name): one character that is neither
/// NUL nor white space as Rust's `trim` reads it (Unicode's White_Space,
/// spelled out: `\s` is another set in each regex dialect).
pub const NOT_BLANK: &str =
    r"[^\u0000\u0009-\u000D\u0020\u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]";
/// Largest `expected_version` (and any version): 2^53 - 1, the largest
/// integer every JSON client (JavaScript included) represents exactly.
pub const VERSION_MAX: i64 = 9_007_199_254_740_991;
/// Change kinds one `changes_since` call may filter by.
pub const KINDS_MAX: u32 = 32;

/// Turns every number with no fractional part into an integer, as JSON
/// Schema counts `5.0` as the integer 5. A whole number outside the 64-bit
/// range stays as it is (and is refused as out of range by its field).
pub fn integral_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9.2e18
            {
                // In range by the check above, so the cast is exact.
                let whole = f as i64;
                *value = Value::Number(Number::from(whole));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_numbers),
        Value::Object(map) => map.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

/// Checks `args` against the bounds its JSON Schema states (`maxLength`,
/// `maxItems`, `minItems`, `maximum`, `minimum`), field by field. Types are
/// serde's to check; this only looks at values of the right type.
/// `minLength` is left to the tools, which refuse a short value with its own
/// code (`id_prefix_too_short` for a short id prefix, `invalid_cursor` for an
/// empty cursor, `invalid_input` for a blank title).
pub fn check(args: &Value, schema: &Value) -> Result<(), ToolError> {
    // Borrowed, not cloned: this runs on every call's arguments.
    static NO_DEFS: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .unwrap_or(&NO_DEFS);
    check_value(args, schema, defs, "")
}

fn check_value(
    value: &Value,
    schema: &Value,
    defs: &Map<String, Value>,
    path: &str,
) -> Result<(), ToolError> {
    let schema = deref(schema, defs);
    if let Some(branches) = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
    {
        // The branch of the value's own type (an `Option<T>` is `T | null`).
        for branch in branches {
            let branch = deref(branch, defs);
            if type_matches(value, branch) {
                check_value(value, branch, defs, path)?;
            }
        }
        return Ok(());
    }
    if !type_matches(value, schema) {
        return Ok(());
    }
    let field = if path.is_empty() { "arguments" } else { path };
    let bound = |keyword: &str| schema.get(keyword).and_then(Value::as_f64);
    match value {
        Value::String(s) => {
            let chars = s.chars().count() as f64;
            if let Some(max) = bound("maxLength")
                && chars > max
            {
                return Err(ToolError::invalid_input(
                    field,
                    format!("must be at most {max} characters"),
                ));
            }
        }
        Value::Array(items) => {
            let len = items.len() as f64;
            if let Some(max) = bound("maxItems")
                && len > max
            {
                return Err(ToolError::invalid_input(
                    field,
                    format!("must hold at most {max} items"),
                ));
            }
            if let Some(min) = bound("minItems")
                && len < min
            {
                return Err(ToolError::invalid_input(
                    field,
                    format!("must hold at least {min} items"),
                ));
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check_value(item, item_schema, defs, &format!("{field}[{i}]"))?;
                }
            }
        }
        Value::Number(n) => {
            let n = n.as_f64().unwrap_or(0.0);
            if let Some(max) = bound("maximum")
                && n > max
            {
                return Err(ToolError::invalid_input(
                    field,
                    format!("must be at most {max}"),
                ));
            }
            if let Some(min) = bound("minimum")
                && n < min
            {
                return Err(ToolError::invalid_input(
                    field,
                    format!("must be at least {min}"),
                ));
            }
        }
        Value::Object(map) => {
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (key, value) in map {
                    if let Some(property) = properties.get(key) {
                        let path = if path.is_empty() {
                            key.clone()
                        } else {
                            format!("{path}.{key}")
                        };
                        check_value(value, property, defs, &path)?;
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Whether `value` has (one of) the schema's `type`s; a schema without
/// `type` (an enum, a `$ref` already followed) matches anything.
fn type_matches(value: &Value, schema: &Value) -> bool {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let matches = |t: &str| t == kind || (t == "number" && kind == "integer");
    match schema.get("type") {
        Some(Value::String(t)) => matches(t),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).any(matches),
        _ => true,
    }
}

/// Strings longer than this state "no NUL" as `not` a pattern instead of an
/// anchored pattern: property-based generators (schemathesis' coverage
/// phase) cannot build a string of a 1 MiB `maxLength` that matches one.
const LONG_TEXT: u64 = 65_536;

/// A schemars transform for input schemas: every free string (not an enum
/// or constant) states that it holds no NUL (U+0000), which every tool
/// input refuses (see `registry::decode`). A pattern already there, which
/// matches no NUL itself, is kept between NUL-free runs.
pub fn no_nul_strings(schema: &mut schemars::Schema) {
    schemars::transform::transform_subschemas(&mut no_nul_strings, schema);
    let is_string = match schema.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        _ => false,
    };
    if !is_string || schema.get("enum").is_some() || schema.get("const").is_some() {
        return;
    }
    let long = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .is_none_or(|max| max > LONG_TEXT);
    if long && schema.get("pattern").is_none() {
        schema.insert("not".into(), serde_json::json!({"pattern": "\\u0000"}));
        return;
    }
    let pattern = match schema.get("pattern").and_then(Value::as_str) {
        Some(p) => format!(r"^[^\u0000]*(?:{p})[^\u0000]*$"),
        None => r"^[^\u0000]*$".to_owned(),
    };
    schema.insert("pattern".into(), Value::String(pattern));
}

/// Drops from one schema the rules its field's description already states
/// in words, for a surface read by models rather than validators (MCP's
/// tool list): [`no_nul_strings`]' NUL rule, and the long character classes
/// of [`LETTER_OR_DIGIT`] and [`NOT_BLANK`]. A call that breaks one is
/// refused all the same, as `invalid_input` naming the field.
pub fn stated_in_words(schema: &mut Map<String, Value>) {
    if schema.get("not") == Some(&serde_json::json!({"pattern": "\\u0000"})) {
        schema.remove("not");
    }
    let Some(pattern) = schema.get("pattern").and_then(Value::as_str) else {
        return;
    };
    let own = pattern
        .strip_prefix(r"^[^\u0000]*(?:")
        .and_then(|p| p.strip_suffix(r")[^\u0000]*$"))
        .map(str::to_owned);
    match own {
        _ if pattern == r"^[^\u0000]*$" => {
            schema.remove("pattern");
        }
        Some(own) if own == LETTER_OR_DIGIT || own == NOT_BLANK => {
            schema.remove("pattern");
        }
        Some(own) => {
            schema.insert("pattern".into(), Value::String(own));
        }
        None if pattern == LETTER_OR_DIGIT || pattern == NOT_BLANK => {
            schema.remove("pattern");
        }
        None => {}
    }
}

/// The `format` values JSON Schema (2020-12) defines. schemars also writes
/// Rust's integer widths (`int64`, `uint64`, `uint`, `double`...), which
/// MCP clients' validators report as unknown formats.
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// A schemars transform: drops every non-standard `format`; an unsigned one
/// (`uint64`, `uint`, ...) becomes `minimum: 0` unless a minimum is stated.
pub fn standard_formats(schema: &mut schemars::Schema) {
    if let Some(Value::String(format)) = schema.get("format").cloned()
        && !STANDARD_FORMATS.contains(&format.as_str())
    {
        schema.remove("format");
        if format.starts_with("uint") && schema.get("minimum").is_none() {
            schema.insert("minimum".into(), Value::from(0));
        }
    }
    schemars::transform::transform_subschemas(&mut standard_formats, schema);
}

/// Follows a local `$ref` into `$defs`.
pub(crate) fn deref<'a>(schema: &'a Value, defs: &'a Map<String, Value>) -> &'a Value {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| defs.get(name))
        .unwrap_or(schema)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Whether `c` matches `class`, a negated class of `\uXXXX` and
    /// `\uXXXX-\uXXXX` items, the only form `LETTER_OR_DIGIT` and
    /// `NOT_BLANK` take (read here as every dialect reads it).
    fn matches(class: &str, c: char) -> bool {
        let items = class
            .strip_prefix("[^")
            .and_then(|rest| rest.strip_suffix(']'))
            .expect("a negated class");
        let code = |hex: &str| u32::from_str_radix(hex, 16).expect("four hex digits");
        let mut excluded = Vec::new();
        let mut rest = items;
        while let Some(item) = rest.strip_prefix("\\u") {
            let low = code(&item[..4]);
            rest = &item[4..];
            let high = match rest.strip_prefix("-\\u") {
                Some(range) => {
                    rest = &range[4..];
                    code(&range[..4])
                }
                None => low,
            };
            excluded.push(low..=high);
        }
        assert!(rest.is_empty(), "unread: {rest}");
        !excluded.iter().any(|r| r.contains(&u32::from(c)))
    }

    #[test]
    fn not_blank_is_what_trim_keeps() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            assert_eq!(
                matches(NOT_BLANK, c),
                c != '\0' && !c.is_whitespace(),
                "U+{:04X}",
                u32::from(c)
            );
        }
    }

    /// Every letter or digit matches (the schema never refuses what the tool
    /// takes), and within ASCII exactly those do.
    #[test]
    fn letter_or_digit_lets_every_letter_through_and_only_letters_in_ascii() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            if c.is_alphanumeric() || c.is_ascii() {
                assert_eq!(
                    matches(LETTER_OR_DIGIT, c),
                    c.is_alphanumeric(),
                    "U+{:04X}",
                    u32::from(c)
                );
            }
        }
    }

    #[test]
    fn a_whole_decimal_is_an_integer() {
        let mut v = json!({"ttl": 8685250.0, "list": [5.0, 1.5], "big": 1e300});
        integral_numbers(&mut v);
        assert_eq!(v, json!({"ttl": 8685250, "list": [5, 1.5], "big": 1e300}));
    }

    #[test]
    fn bounds_are_read_from_the_schema_through_options_and_refs() {
        let schema = json!({
            "properties": {
                "title": {"type": "string", "maxLength": 3},
                "tags": {"type": ["array", "null"], "maxItems": 2, "items": {"type": "string", "maxLength": 2}},
                "cursors": {"anyOf": [{"$ref": "#/$defs/C"}, {"type": "null"}]},
                "limit": {"type": ["integer", "null"], "minimum": 1, "maximum": 5}
            },
            "$defs": {"C": {"type": "object", "properties": {"open": {"type": "string", "maxLength": 1}}}}
        });
        let field = |args: Value| {
            check(&args, &schema)
                .err()
                .map(|e| e.details["field"].as_str().unwrap().to_owned())
        };
        assert_eq!(
            field(json!({"title": "abc", "tags": null, "limit": 5})),
            None
        );
        assert_eq!(field(json!({"title": "abcd"})).as_deref(), Some("title"));
        assert_eq!(
            field(json!({"tags": ["a", "b", "c"]})).as_deref(),
            Some("tags")
        );
        assert_eq!(
            field(json!({"tags": ["a", "bcd"]})).as_deref(),
            Some("tags[1]")
        );
        assert_eq!(
            field(json!({"cursors": {"open": "xy"}})).as_deref(),
            Some("cursors.open")
        );
        assert_eq!(field(json!({"limit": 0})).as_deref(), Some("limit"));
        // A value of the wrong type is serde's to refuse, not this check's.
        assert_eq!(field(json!({"title": 5})), None);
    }

    #[test]
    fn only_standard_formats_remain() {
        let mut schema = schemars::json_schema!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint64"},
                "i": {"type": "integer", "format": "int64", "minimum": 1},
                "at": {"type": "string", "format": "date-time"}
            }
        });
        standard_formats(&mut schema);
        assert_eq!(
            schema.to_value()["properties"],
            json!({
                "n": {"type": "integer", "minimum": 0},
                "i": {"type": "integer", "minimum": 1},
                "at": {"type": "string", "format": "date-time"}
            })
        );
    }
}
