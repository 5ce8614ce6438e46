//! How an envelope is laid out when printed, and the budget measured on that very
//! text (docs/contract.md, "Budgets", guarantees 1 and 6, hold for the bytes
//! written).
//!
//! The trimmer plans on compact JSON. Indented output weighs more (newlines and
//! indentation), so a pretty answer is trimmed against a lower compact limit,
//! found by measuring the indented text and scaling, until the indented text
//! itself fits; `tokens_estimated` is then solved on the indented text.

use serde_json::{Map, Value};

use super::{Envelope, Form, render_with_limit, size_of};
use crate::envelope::estimate_tokens;

/// The shape of the printed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// Compact JSON, as MCP and REST send it.
    #[default]
    Compact,
    /// Compact JSON without null members (the top-level `data` excepted): the
    /// fewest tokens.
    Dense,
    /// Indented two spaces, for people reading a terminal.
    Pretty,
}

/// Renders `envelope` in `layout` within `limit` (`None`: no budget), with the
/// budget fields of `meta` describing the text returned.
pub fn render_laid_out(
    envelope: Envelope,
    limit: Option<usize>,
    form: Form,
    layout: Layout,
) -> String {
    match layout {
        Layout::Compact => render_with_limit(envelope, limit, form),
        Layout::Dense => render_with_limit(without_nulls(envelope), limit, form),
        Layout::Pretty => render_pretty(envelope, limit, form),
    }
}

/// Tries compact limits until the indented text fits `limit`: each round scales
/// the compact limit by how much the indented text overshot. A round that
/// cannot shrink further (nothing left to cut) ends with `envelope_unshrinkable`.
fn render_pretty(envelope: Envelope, limit: Option<usize>, form: Form) -> String {
    let Some(limit) = limit else {
        return indent(&render_with_limit(envelope, None, form), false);
    };
    let mut compact_limit = limit;
    loop {
        let compact = render_with_limit(envelope.clone(), Some(compact_limit), form);
        let (text, flagged) = indent_flagged(&compact);
        let size = size_of(&text) as usize;
        if size <= limit {
            // A compact limit below the real one may have flagged what fits.
            return if flagged {
                indent(&compact, true)
            } else {
                text
            };
        }
        // Scale by the overshoot, and always by at least 1%, so rounds are few.
        let scaled = (compact_limit as u128 * limit as u128 / size as u128) as usize;
        let next = scaled.min(compact_limit - compact_limit.div_ceil(100));
        if flagged || next == 0 {
            return text;
        }
        compact_limit = next;
    }
}

/// [`indent`], and whether the compact text was flagged `envelope_unshrinkable`.
fn indent_flagged(compact: &str) -> (String, bool) {
    let flagged = serde_json::from_str::<Value>(compact)
        .ok()
        .and_then(|v| v.pointer("/meta/envelope_unshrinkable").cloned())
        == Some(Value::Bool(true));
    (indent(compact, false), flagged)
}

/// Indents a compact envelope and solves `tokens_estimated` on the indented
/// text (the number's own digits count: a climb to the fixpoint, as in `frame`).
/// `clear_unshrinkable` drops a flag that the indented text does not deserve.
fn indent(compact: &str, clear_unshrinkable: bool) -> String {
    let Ok(mut value) = serde_json::from_str::<Value>(compact) else {
        return compact.to_owned();
    };
    if clear_unshrinkable && let Some(Value::Object(meta)) = value.get_mut("meta") {
        meta.remove("envelope_unshrinkable");
    }
    let pretty = |v: &Value| serde_json::to_string_pretty(v).expect("a JSON value serializes");
    if value.pointer("/meta/tokens_estimated").is_none() {
        return pretty(&value);
    }
    let mut tokens = 0u64;
    let mut text = String::new();
    for _ in 0..32 {
        if let Some(slot) = value.pointer_mut("/meta/tokens_estimated") {
            *slot = Value::from(tokens);
        }
        text = pretty(&value);
        let estimate = estimate_tokens(&text);
        if estimate == tokens {
            break;
        }
        tokens = estimate;
    }
    text
}

/// The envelope without null members in `data` (a null `data` itself stays),
/// in the error's `details` and in the tool's extra meta.
fn without_nulls(mut envelope: Envelope) -> Envelope {
    match &mut envelope.outcome {
        Ok(data) => drop_nulls(data),
        Err(error) => drop_nulls_in(&mut error.details),
    }
    drop_nulls_in(&mut envelope.meta.extra);
    envelope
}

fn drop_nulls_in(map: &mut Map<String, Value>) {
    map.retain(|_, v| !v.is_null());
    map.values_mut().for_each(drop_nulls);
}

fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => drop_nulls_in(map),
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}
