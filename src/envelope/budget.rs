//! The budget trimmer: fits an envelope into its tier's size limit (CONTRACT §4).

use serde_json::Value;

use super::Envelope;

/// Which size limit applies; chosen by the surface, never by the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// MCP and CLI answers: 32,000 size units.
    Agent,
    /// Safety net for REST answers shaped `{nodes, edges}`: 5,000,000.
    Graph,
    /// Browser answers: no limit (lists are paginated instead).
    None,
}

impl Tier {
    pub const fn limit(self) -> Option<usize> {
        match self {
            Tier::Agent => Some(32_000),
            Tier::Graph => Some(5_000_000),
            Tier::None => None,
        }
    }

    /// The tier of a REST answer: the graph safety net for graph shapes, else none.
    pub fn browser_for(data: &Value) -> Tier {
        let is_graph = data.get("nodes").is_some_and(Value::is_array)
            && data.get("edges").is_some_and(Value::is_array);
        if is_graph { Tier::Graph } else { Tier::None }
    }
}

/// The outer shape of the emitted text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `{"ok":..,"data"|"error":..,"meta":..}`: MCP and CLI.
    Envelope,
    /// `{"data":..,"meta":..}` on success, `{"error":..}` on failure: REST bodies.
    Rest,
}

/// ceil(ascii_chars / 4) + non_ascii_chars.
pub fn estimate_tokens(text: &str) -> u64 {
    let (ascii, other) = text.chars().fold((0u64, 0u64), |(a, o), c| {
        if c.is_ascii() { (a + 1, o) } else { (a, o + 1) }
    });
    ascii.div_ceil(4) + other
}

/// Renders the envelope as compact JSON within the tier's limit.
pub fn render(envelope: Envelope, tier: Tier, form: Form) -> String {
    // Placeholder until the trimmer lands: no cuts, exact token count.
    let _ = tier;
    let mut meta = envelope.meta;
    let mut last = String::new();
    for _ in 0..4 {
        let text = frame(&envelope.outcome, &meta, form);
        let tokens = estimate_tokens(&text);
        if tokens == meta.tokens_estimated {
            return text;
        }
        meta.tokens_estimated = tokens;
        last = text;
    }
    last
}

fn frame(outcome: &Result<Value, super::ErrorBody>, meta: &super::Meta, form: Form) -> String {
    let value = match (outcome, form) {
        (Ok(data), Form::Envelope) => serde_json::json!({"ok": true, "data": data, "meta": meta}),
        (Err(error), Form::Envelope) => {
            serde_json::json!({"ok": false, "error": error, "meta": meta})
        }
        (Ok(data), Form::Rest) => serde_json::json!({"data": data, "meta": meta}),
        (Err(error), Form::Rest) => serde_json::json!({"error": error}),
    };
    value.to_string()
}
