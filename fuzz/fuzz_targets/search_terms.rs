//! Search text into terms: never a term without a letter or digit, never one
//! holding whitespace or a control character (what reaches FTS5 or tsquery).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Ok(q) = std::str::from_utf8(input) else {
        return;
    };
    for term in cairn::tools::search::terms(q) {
        assert!(term.word.chars().any(char::is_alphanumeric), "{term:?}");
        assert!(
            !term
                .word
                .chars()
                .any(|c| c.is_whitespace() || c.is_control()),
            "{term:?}"
        );
    }
});
