//! The code registry is append-only: a shipped code or category never
//! disappears or changes meaning. `tests/fixtures/error-codes.json` pins what
//! has shipped; adding a code is fine, and is pinned by adding it there.

use cairn::envelope::{ErrorCategory, ErrorCode};
use serde_json::{Value, json};

const PINNED: &str = include_str!("../fixtures/error-codes.json");

fn pinned() -> Value {
    serde_json::from_str(PINNED).expect("tests/fixtures/error-codes.json is valid JSON")
}

#[test]
fn no_shipped_code_disappears_or_changes_meaning() {
    let pinned = pinned();
    for (name, spec) in pinned["codes"].as_object().unwrap() {
        let code = ErrorCode::ALL
            .iter()
            .find(|c| c.as_str() == name)
            .unwrap_or_else(|| panic!("shipped code `{name}` disappeared from the registry"));
        let s = code.spec();
        let now = json!({"category": s.category.as_str(), "http_status": s.http_status, "retryable": s.retryable});
        assert_eq!(&now, spec, "code `{name}` changed meaning");
    }
}

#[test]
fn no_shipped_category_disappears_or_changes_meaning() {
    let pinned = pinned();
    for (name, spec) in pinned["categories"].as_object().unwrap() {
        let category = ErrorCategory::ALL
            .iter()
            .find(|c| c.as_str() == name)
            .unwrap_or_else(|| panic!("shipped category `{name}` disappeared"));
        let now = json!({"http_status": category.http_status(), "retryable": category.retryable()});
        assert_eq!(&now, spec, "category `{name}` changed meaning");
    }
}

#[test]
fn every_registered_code_is_pinned() {
    let pinned = pinned();
    let missing: Vec<&str> = ErrorCode::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|name| pinned["codes"].get(name).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "new codes {missing:?}: add them to tests/fixtures/error-codes.json (append-only)"
    );
}
