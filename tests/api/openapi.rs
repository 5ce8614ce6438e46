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
