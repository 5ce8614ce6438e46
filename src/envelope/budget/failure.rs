//! Failure envelopes stay small on every surface: a value a failure echoes back
//! (an id, a flag, a title) is cut when it is long, with the string marker, so
//! a 40,000-character id cannot make a 80,000-character answer.
//!
//! - `details` and `suggestions`: every string over [`LONG_STRING_CHARS`] is
//!   cut to that many chars followed by [`STRING_MARKER`], at any depth.
//! - `message`: every `` `quoted` `` span over the same length is cut the same
//!   way (messages quote what they echo); a message still over
//!   [`MESSAGE_CHARS`] is cut there.

use serde_json::Value;

use super::{LONG_STRING_CHARS, STRING_MARKER};
use crate::envelope::ErrorBody;

/// The longest message emitted, in chars, marker excluded.
pub const MESSAGE_CHARS: usize = 1_000;

/// Cuts the long values a failure echoes.
pub fn bound(error: &mut ErrorBody) {
    error.message = bound_message(&error.message);
    error.details.values_mut().for_each(bound_value);
    error.suggestions.iter_mut().for_each(bound_string);
}

fn bound_value(value: &mut Value) {
    match value {
        Value::String(s) => bound_string(s),
        Value::Array(items) => items.iter_mut().for_each(bound_value),
        Value::Object(map) => map.values_mut().for_each(bound_value),
        _ => {}
    }
}

fn bound_string(s: &mut String) {
    if let Some(cut) = cut(s, LONG_STRING_CHARS) {
        *s = cut;
    }
}

/// `s` cut to `chars` chars plus the marker, when it is longer.
fn cut(s: &str, chars: usize) -> Option<String> {
    let (end, _) = s.char_indices().nth(chars)?;
    Some(format!("{}{STRING_MARKER}", &s[..end]))
}

fn bound_message(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(4 * MESSAGE_CHARS));
    // Odd-numbered pieces are inside backticks (an unpaired last one is text).
    let pieces: Vec<&str> = message.split('`').collect();
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 {
            out.push('`');
        }
        let quoted = i % 2 == 1 && i + 1 < pieces.len();
        match cut(piece, LONG_STRING_CHARS).filter(|_| quoted) {
            Some(short) => out.push_str(&short),
            None => out.push_str(piece),
        }
    }
    cut(&out, MESSAGE_CHARS).unwrap_or(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_quoted_value_is_cut_and_the_rest_of_the_message_kept() {
        let id = "a".repeat(5_000);
        let message = bound_message(&format!("No task with id `{id}`."));
        assert_eq!(
            message,
            format!("No task with id `{}{STRING_MARKER}`.", "a".repeat(200))
        );
    }

    #[test]
    fn short_values_and_unquoted_text_are_untouched() {
        let message = "Cannot `complete` a task whose status is `cancelled`.";
        assert_eq!(bound_message(message), message);
        let exactly = "b".repeat(LONG_STRING_CHARS);
        assert_eq!(
            bound_message(&format!("`{exactly}`")),
            format!("`{exactly}`")
        );
    }

    #[test]
    fn a_message_over_the_cap_is_cut_at_the_cap() {
        let message = bound_message(&"word ".repeat(1_000));
        assert_eq!(
            message.chars().count(),
            MESSAGE_CHARS + STRING_MARKER.chars().count()
        );
        assert!(message.ends_with(STRING_MARKER));
    }
}
