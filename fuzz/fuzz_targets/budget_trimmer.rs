//! The budget trimmer on any JSON payload and limit: the emitted envelope
//! fits the limit or says `envelope_unshrinkable`, `truncated` iff a cut was
//! recorded, `tokens_estimated` is the estimate of the emitted text, and the
//! same input gives the same bytes, and a graph cut as a subgraph keeps only
//! edges between kept nodes, however it names them (docs/contract.md,
//! "Budgets", guarantees 1, 2, 5, 6, 7).
#![no_main]

use cairn::envelope::budget::{GRAPH_END_KEYS, GRAPH_NODE_KEYS, render_with_limit, size_of};
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
    let subgraph = trimmed
        .iter()
        .any(|t| t["path"] == "/nodes" && t["kind"] == "subgraph");
    if let (true, Some((node_key, from, to))) = (subgraph, naming(&data)) {
        let ids = |graph: &Value| -> Vec<Value> {
            graph["nodes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|n| n.get(node_key).cloned())
                .collect()
        };
        let kept = ids(&emitted["data"]);
        for edge in emitted["data"]["edges"].as_array().into_iter().flatten() {
            assert!(
                edge.get(from).is_some_and(|id| kept.contains(id))
                    && edge.get(to).is_some_and(|id| kept.contains(id)),
                "a kept edge joins two kept nodes: {edge}"
            );
        }
    }
});

/// How a top-level `{nodes, edges}` names its nodes and its edges' ends: of
/// the keys its first node and first edge hold, the pair that joins the
/// most edges to nodes (ties to the earlier).
fn naming(data: &Value) -> Option<(&'static str, &'static str, &'static str)> {
    let nodes = data.get("nodes")?.as_array()?;
    let edges = data.get("edges")?.as_array()?;
    let mut best = None;
    let mut most = 0;
    for node_key in GRAPH_NODE_KEYS {
        if nodes.first()?.get(node_key).is_none() {
            continue;
        }
        let ids: Vec<&Value> = nodes
            .iter()
            .filter_map(|n| n.get(node_key))
            .filter(|id| id.is_string() || id.is_number())
            .collect();
        for (from, to) in GRAPH_END_KEYS {
            let first = edges.first()?;
            if first.get(from).is_none() || first.get(to).is_none() {
                continue;
            }
            let joined = edges
                .iter()
                .filter(|e| {
                    e.get(from).is_some_and(|id| ids.contains(&id))
                        && e.get(to).is_some_and(|id| ids.contains(&id))
                })
                .count();
            if joined > most {
                (best, most) = (Some((node_key, from, to)), joined);
            }
        }
    }
    best
}
