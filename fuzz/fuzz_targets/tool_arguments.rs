//! Any JSON as the arguments of any tool, through `Cairn::call` on a SQLite
//! store: every answer is an envelope, and none is `internal_error` (a bad
//! argument is a validation error naming it; a panic would fail here too).
#![no_main]

use std::sync::OnceLock;

use cairn::tools::{Cairn, Config, REGISTRY};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

struct Fixture {
    runtime: tokio::runtime::Runtime,
    cairn: Cairn,
    _dir: tempfile::TempDir,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = cairn::store::open_sqlite(&dir.path().join("fuzz.db")).expect("store");
        Fixture {
            runtime: tokio::runtime::Runtime::new().expect("runtime"),
            cairn: Cairn::new(store, Config::default()),
            _dir: dir,
        }
    })
}

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
