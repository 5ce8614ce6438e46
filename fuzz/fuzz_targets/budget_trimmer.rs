//! The budget trimmer on any JSON payload and limit: the emitted envelope
//! fits the limit or says `envelope_unshrinkable`, `truncated` iff a cut was
//! recorded, `tokens_estimated` is the estimate of the emitted text, and the
//! same input gives the same bytes (docs/contract.md, "Budgets", guarantees 1, 2, 6, 7).
#![no_main]

use cairn::envelope::budget::{render_with_limit, size_of};
use cairn::envelope::{Envelope, Form, Meta, estimate_tokens};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|input: &[u8]| {
    let Some((&pick, json)) = input.split_first() else {
        return;
    };
    let Ok(data) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let limit = 200 + usize::from(pick) * 40;
    let envelope = || Envelope::success(data.clone(), Meta::new("fuzz", "tasks", "fuzz-request"));
    let text = render_with_limit(envelope(), Some(limit), Form::Envelope);
    assert_eq!(
        text,
        render_with_limit(envelope(), Some(limit), Form::Envelope),
        "deterministic"
    );
    let emitted: Value = serde_json::from_str(&text).expect("the trimmer emits JSON");
    let meta = &emitted["meta"];
    let unshrinkable = meta.get("envelope_unshrinkable") == Some(&Value::Bool(true));
    assert!(
        unshrinkable || size_of(&text) <= limit as u64,
        "over the limit: {text}"
    );
    assert_eq!(
        meta["tokens_estimated"].as_u64(),
        Some(estimate_tokens(&text))
    );
    let trimmed = meta["trimmed"].as_array().expect("trimmed is a list");
    assert_eq!(meta["truncated"].as_bool(), Some(!trimmed.is_empty()));
    if trimmed.is_empty() {
        assert_eq!(emitted["data"], data, "nothing cut, nothing changed");
    }
});
