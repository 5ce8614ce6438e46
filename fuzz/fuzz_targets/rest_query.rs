//! A REST query string into every tool's input, as the gateway decodes it:
//! percent-decoding into `(key, value)` pairs (what axum's `Query` does),
//! `ApiQuery::into_args` typing each value by the tool's input schema, then
//! the tool's own decoding through `Cairn::call` on a SQLite store.
//!
//! Checked: no panic; a refused query is a `validation` error naming one of
//! the parameters given; an accepted one keeps every parameter, each once,
//! unknown names as their first raw value; and what the tool answers is an
//! envelope whose code is in the registry, never `internal_error`.
#![no_main]

use cairn::envelope::{ErrorCategory, ErrorCode, Form, Tier};
use cairn::http::semantics::extract::ApiQuery;
use cairn::tools::REGISTRY;
use cairn::tools::fields::input_fields;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

#[path = "shared/cairn_fixture.rs"]
mod cairn_fixture;
use cairn_fixture::fixture;

/// The failure as a surface emits it names a registry code and that code's category.
fn assert_registered(envelope: cairn::envelope::Envelope) {
    let text = cairn::envelope::render(envelope, Tier::Agent, Form::Envelope);
    let wire: Value = serde_json::from_str(&text).expect("the envelope is JSON");
    let code = ErrorCode::ALL
        .iter()
        .find(|c| serde_json::to_value(c).ok().as_ref() == Some(&wire["error"]["code"]))
        .unwrap_or_else(|| panic!("{} is not a registry code", wire["error"]["code"]));
    assert_eq!(
        wire["error"]["category"],
        serde_json::to_value(code.category()).unwrap()
    );
}

fuzz_target!(|input: &[u8]| {
    let Some((&pick, query)) = input.split_first() else {
        return;
    };
    let Ok(pairs) = serde_urlencoded::from_bytes::<Vec<(String, String)>>(query) else {
        return;
    };
    let tool = &REGISTRY[usize::from(pick) % REGISTRY.len()];
    let fields = input_fields(tool);
    let args = match ApiQuery(pairs.clone()).into_args(tool.name) {
        Ok(args) => args,
        Err(error) => {
            assert_eq!(
                error.category(),
                ErrorCategory::Validation,
                "{}: {pairs:?} refused as {:?}",
                tool.name,
                error.code
            );
            let field = error.details.get("field").and_then(Value::as_str);
            assert!(
                field.is_some_and(|f| pairs.iter().any(|(k, _)| k == f)),
                "{}: {pairs:?} refused naming {field:?}",
                tool.name
            );
            return;
        }
    };
    for (key, _) in &pairs {
        assert!(args.contains_key(key), "{}: {key} dropped", tool.name);
    }
    for (key, value) in &args {
        let first = pairs.iter().find(|(k, _)| k == key);
        let (_, raw) = first.unwrap_or_else(|| panic!("{}: {key} made up", tool.name));
        if !fields.iter().any(|f| &f.name == key) {
            assert_eq!(value, &Value::String(raw.clone()), "{}: {key}", tool.name);
        }
    }
    let f = fixture();
    let envelope = f
        .runtime
        .block_on(f.cairn.call(tool.name, Value::Object(args.clone()), "fuzz"));
    if let Err(error) = &envelope.outcome {
        assert_ne!(
            error.code,
            ErrorCode::InternalError,
            "{}({args:?}) failed internally",
            tool.name
        );
        assert_registered(envelope);
    }
});
