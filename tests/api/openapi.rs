//! The OpenAPI document: committed, complete, and typed on every error.

use serde_json::Value;

const COMMITTED: &str = include_str!("../../openapi/openapi.json");
const SHARED_ERROR_STATUSES: [&str; 4] = ["400", "404", "500", "503"];
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "patch", "head", "options", "trace",
];

fn document() -> Value {
    serde_json::from_str(&cairn::http::openapi::document_json()).unwrap()
}

#[test]
fn the_committed_document_matches_the_code() {
    let generated = cairn::http::openapi::document_json();
    assert!(
        generated == COMMITTED,
        "openapi/openapi.json is out of date with the code; regenerate it and the \
         TypeScript types with `cargo run -- openapi > openapi/openapi.json && \
         (cd web-client && npm run gen:api)` and commit both"
    );
}

/// Follows a local `$ref` (`#/components/...`).
fn resolve<'a>(doc: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(pointer) => doc
            .pointer(pointer.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("dangling $ref {pointer}")),
        None => node,
    }
}

fn operations(doc: &Value) -> Vec<(String, &Value)> {
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in METHODS {
            if let Some(op) = item.get(method) {
                ops.push((format!("{} {path}", method.to_uppercase()), op));
            }
        }
    }
    ops
}

#[test]
fn every_operation_declares_the_shared_error_envelope() {
    let doc = document();
    let ops = operations(&doc);
    assert!(!ops.is_empty());
    for (name, op) in ops {
        for status in SHARED_ERROR_STATUSES {
            let response = op["responses"]
                .get(status)
                .unwrap_or_else(|| panic!("{name} lacks the {status} error response"));
            let schema = &resolve(&doc, response)["content"]["application/json"]["schema"];
            assert_eq!(
                schema["$ref"], "#/components/schemas/ErrorEnvelope",
                "{name} {status} is not the shared ErrorEnvelope"
            );
        }
    }
}

#[test]
fn every_response_has_a_description() {
    let doc = document();
    for (name, op) in operations(&doc) {
        for (status, response) in op["responses"].as_object().unwrap() {
            let description = resolve(&doc, response)["description"].as_str();
            assert!(
                description.is_some_and(|d| !d.trim().is_empty()),
                "{name} {status} has no description"
            );
        }
    }
}

#[test]
fn every_operation_has_a_summary_a_tag_and_an_id() {
    let doc = document();
    for (name, op) in operations(&doc) {
        assert!(op["summary"].as_str().is_some(), "{name} has no summary");
        assert!(op["tags"][0].as_str().is_some(), "{name} has no tag");
        assert!(
            op["operationId"].as_str().is_some(),
            "{name} has no operationId"
        );
    }
}

#[test]
fn error_category_and_code_are_named_enums() {
    let doc = document();
    let schemas = &doc["components"]["schemas"];
    let codes: Vec<&str> = schemas["ErrorCode"]["enum"]
        .as_array()
        .expect("ErrorCode is an enum")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for code in cairn::envelope::ErrorCode::ALL {
        assert!(codes.contains(&code.as_str()), "ErrorCode lacks {code}");
    }
    assert!(schemas["ErrorCategory"]["enum"].as_array().is_some());
    let body = &schemas["ErrorBody"]["properties"];
    assert_eq!(body["code"]["$ref"], "#/components/schemas/ErrorCode");
    assert_eq!(
        body["category"]["$ref"],
        "#/components/schemas/ErrorCategory"
    );
}

/// The validation keywords a bound may be stated with.
const BOUNDS: [&str; 8] = [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
];

fn bounds_of(schema: &Value) -> serde_json::Map<String, Value> {
    BOUNDS
        .iter()
        .filter_map(|k| Some(((*k).to_owned(), schema.get(*k)?.clone())))
        .collect()
}

/// The query parameters of an operation, by name.
fn query_params<'a>(doc: &'a Value, method: &str, path: &str) -> Vec<(&'a str, &'a Value)> {
    doc["paths"][path][method]["parameters"]
        .as_array()
        .unwrap_or_else(|| panic!("{method} {path} has parameters"))
        .iter()
        .filter(|p| p["in"] == "query")
        .map(|p| (p["name"].as_str().unwrap(), &p["schema"]))
        .collect()
}

#[test]
fn list_routes_state_the_page_size_bounds_the_tools_enforce() {
    use cairn::tools::common::{MAX_LIMIT, MIN_LIMIT};
    let doc = document();
    for path in [
        "/api/v1/tasks",
        "/api/v1/notes",
        "/api/v1/search",
        "/api/v1/board",
    ] {
        let params = query_params(&doc, "get", path);
        let (_, limit) = params
            .iter()
            .find(|(name, _)| *name == "limit")
            .unwrap_or_else(|| panic!("GET {path} takes a limit"));
        assert_eq!(limit["minimum"], MIN_LIMIT, "GET {path} limit minimum");
        assert_eq!(limit["maximum"], MAX_LIMIT, "GET {path} limit maximum");
    }
}

#[test]
fn graph_routes_state_the_depth_bounds_the_tools_enforce() {
    use cairn::tools::graph::MAX_DEPTH;
    let doc = document();
    for path in ["/api/v1/graph/neighbours/{id}", "/api/v1/graph/export"] {
        let params = query_params(&doc, "get", path);
        let (_, depth) = params.iter().find(|(name, _)| *name == "depth").unwrap();
        assert_eq!(depth["minimum"], 1, "GET {path} depth minimum");
        assert_eq!(depth["maximum"], MAX_DEPTH, "GET {path} depth maximum");
    }
}

#[test]
fn task_and_link_id_paths_state_the_shortest_prefix() {
    use cairn::tools::common::MIN_PREFIX;
    let doc = document();
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        if !(path.starts_with("/api/v1/tasks/{id}") || path.starts_with("/api/v1/links/{id}")) {
            continue;
        }
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let id = op["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["in"] == "path" && p["name"] == "id")
                .unwrap_or_else(|| panic!("{method} {path} has an id"));
            assert_eq!(id["schema"]["minLength"], MIN_PREFIX, "{method} {path}");
            checked += 1;
        }
    }
    // get, update, six actions, link removal.
    assert_eq!(checked, 9);
}

/// Each tool input type with its two schemas: schemars (MCP, CLI, docs/tools.md)
/// and utoipa (OpenAPI body schema, and query parameters for the types that
/// are `IntoParams`).
struct InputSchemas {
    name: &'static str,
    schemars: Value,
    utoipa: Value,
    params: Option<Vec<(String, Value)>>,
}

macro_rules! inputs {
    (body: $($body:ty),* ; query: $($query:ty),* $(,)?) => {
        vec![
            $(InputSchemas {
                name: stringify!($body),
                schemars: schemars::schema_for!($body).to_value(),
                utoipa: serde_json::to_value(<$body as utoipa::PartialSchema>::schema()).unwrap(),
                params: None,
            },)*
            $(InputSchemas {
                name: stringify!($query),
                schemars: schemars::schema_for!($query).to_value(),
                utoipa: serde_json::to_value(<$query as utoipa::PartialSchema>::schema()).unwrap(),
                params: Some(
                    <$query as utoipa::IntoParams>::into_params(|| {
                        Some(utoipa::openapi::path::ParameterIn::Query)
                    })
                    .into_iter()
                    .map(|p| {
                        let p = serde_json::to_value(p).unwrap();
                        (p["name"].as_str().unwrap().to_owned(), p["schema"].clone())
                    })
                    .collect(),
                ),
            },)*
        ]
    };
}

#[test]
fn both_schema_generators_state_the_same_bounds_for_every_tool_input() {
    use cairn::tools::{changes::*, graph::*, notes::*, search::*, system::*, tasks::*};
    let all = inputs!(
        body: TaskCreateInput, TaskIdInput, TaskUpdateInput, TaskClaimInput, TaskAgentInput,
            TaskTransitionInput, TaskBoardInput, NoteWriteInput, NoteReadInput, NoteDeleteInput,
            LinkAddInput, LinkRemoveInput, NeighboursInput, DoctorInput, HealthInput;
        query: TaskListInput, NoteListInput, SearchInput, PathInput, ExportInput, ChangesSinceInput,
    );
    // Every registered tool's input is checked here.
    for def in cairn::tools::REGISTRY {
        let title = (def.input_schema)().to_value()["title"].clone();
        assert!(
            all.iter().any(|i| title == i.name),
            "{}: add its input type {title} to this test",
            def.name
        );
    }
    let mut bounded = 0;
    for input in &all {
        let properties = input.schemars["properties"].as_object();
        for (field, schema) in properties.into_iter().flatten() {
            let expected = bounds_of(schema);
            bounded += usize::from(!expected.is_empty());
            let openapi = &input.utoipa["properties"][field];
            assert_eq!(
                bounds_of(openapi),
                expected,
                "{}.{field}: OpenAPI schema and JSON Schema disagree",
                input.name
            );
            if let Some(params) = &input.params {
                let (_, param) = params.iter().find(|(n, _)| n == field).unwrap();
                assert_eq!(
                    bounds_of(param),
                    expected,
                    "{}.{field}: query parameter and JSON Schema disagree",
                    input.name
                );
            }
        }
    }
    assert!(
        bounded >= 29,
        "only {bounded} bounded fields: the attributes went missing"
    );
}

/// Every `pattern` under `node`, with where it is.
fn patterns<'a>(node: &'a Value, at: String, out: &mut Vec<(String, &'a str)>) {
    match node {
        Value::Object(map) => {
            if let Some(Value::String(p)) = map.get("pattern") {
                out.push((at.clone(), p));
            }
            for (key, value) in map {
                patterns(value, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                patterns(value, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// JSON Schema's patterns are ECMA-262, where `\w`, `\d`, `\s` and `\b`
/// mean ASCII (or ECMA's own set of spaces) and `\p{..}` needs a flag,
/// while Python's `re` (schemathesis' generator) and Rust's `regex` read
/// them as Unicode. A pattern with any of them says one thing to a client
/// that validates and another to the server's own tests: `[^\W_]` refused
/// the title `日本語` in every ECMA-262 client. Explicit ranges read alike.
#[test]
fn every_pattern_reads_the_same_in_every_regex_dialect() {
    let mut found = Vec::new();
    let doc = document();
    patterns(&doc, "openapi.json".to_owned(), &mut found);
    let inputs: Vec<(&str, Value)> = cairn::tools::REGISTRY
        .iter()
        .map(|def| (def.name, (def.input_schema)().to_value()))
        .collect();
    for (tool, schema) in &inputs {
        patterns(schema, format!("{tool} input"), &mut found);
    }
    assert!(
        found.len() > 20,
        "only {} patterns found: the walk missed them",
        found.len()
    );
    for (at, pattern) in found {
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                let escaped = chars.next().unwrap_or('\\');
                assert!(
                    !"wWdDsSbBpP".contains(escaped),
                    "{at}: `\\{escaped}` in {pattern:?} reads differently in ECMA-262 and in Python or Rust; spell the characters out"
                );
            }
        }
    }
}
