//! Any JSON as the arguments of any tool, through `Cairn::call` on a SQLite
//! store: every answer is an envelope, and none is `internal_error` (a bad
//! argument is a validation error naming it; a panic would fail here too).
#![no_main]

use cairn::tools::REGISTRY;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

#[path = "shared/cairn_fixture.rs"]
mod cairn_fixture;
use cairn_fixture::fixture;

fuzz_target!(|input: &[u8]| {
    let Some((&pick, json)) = input.split_first() else {
        return;
    };
    let Ok(args) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let tool = &REGISTRY[usize::from(pick) % REGISTRY.len()];
    let f = fixture();
    let envelope = f
        .runtime
        .block_on(f.cairn.call(tool.name, args.clone(), "fuzz"));
    if let Err(error) = &envelope.outcome {
        assert_ne!(
            error.code,
            cairn::envelope::ErrorCode::InternalError,
            "{}({args}) failed internally",
            tool.name
        );
    }
});
