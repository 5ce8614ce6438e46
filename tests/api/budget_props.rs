//! The trimmer's guarantees (docs/contract.md, "Budgets") for every payload:
//! generated JSON of every shape (nested objects and arrays, long and short strings,
//! CJK, graphs, top-level arrays) rendered under small limits, read with
//! `check_answer`.

use cairn::envelope::budget::{render_laid_out, render_with_limit};
use cairn::envelope::{Envelope, Form, Layout, Meta, TrimKind};
use proptest::prelude::*;
use serde_json::{Map, Number, Value, json};

use crate::budget::{
    Answer, check_answer, content_units, entry_units, envelope, is_graph, pointer_token, render_at,
    units_of,
};

const PALETTE: [char; 14] = [
    'a', 'b', 'e', ' ', 'o', '.', '"', '\\', '\n', '\u{1}', 'é', '漢', '字', '😀',
];

/// A string of `len` chars drawn from a palette that exercises escapes and
/// non-ASCII; `cjk` biases it towards one-token-per-char text.
fn text(len: usize, seed: u64, cjk: bool) -> String {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pick = (x >> 33) as usize;
            if cjk && !pick.is_multiple_of(3) {
                ['漢', '字', 'か', 'な'][pick % 4]
            } else {
                PALETTE[pick % PALETTE.len()]
            }
        })
        .collect()
}

fn long_text() -> impl Strategy<Value = String> {
    (200usize..3_000, any::<u64>(), any::<bool>()).prop_map(|(len, seed, cjk)| text(len, seed, cjk))
}

fn short_text() -> impl Strategy<Value = String> {
    (0usize..40, any::<u64>(), any::<bool>()).prop_map(|(len, seed, cjk)| text(len, seed, cjk))
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z]{1,6}",
        1 => Just("a/b".to_owned()),
        1 => Just("t~x".to_owned()),
        1 => Just("ключ".to_owned()),
        1 => Just(String::new()),
        1 => "[a-z]{100,160}",
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        2 => any::<i64>().prop_map(Value::from),
        1 => float(),
        4 => short_text().prop_map(Value::String),
        2 => long_text().prop_map(Value::String),
    ]
}

/// A float that reads back exactly with serde_json's default (fast, not always
/// correctly rounded) parser, so the oracle can compare what it reads.
fn float() -> impl Strategy<Value = Value> {
    (-1e9f64..1e9).prop_filter_map("reads back exactly", |f| {
        let value = Value::Number(Number::from_f64(f)?);
        let read: Value = serde_json::from_str(&value.to_string()).ok()?;
        (read == value).then_some(value)
    })
}

/// Any JSON value: nested objects and arrays over every kind of leaf.
fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 160, 16, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..16).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

fn record() -> impl Strategy<Value = Value> {
    (
        any::<u32>(),
        short_text(),
        0usize..600,
        any::<u64>(),
        prop::collection::vec(short_text(), 0..4),
    )
        .prop_map(|(id, title, len, seed, tags)| {
            json!({
                "id": format!("r{id}"),
                "title": title,
                "body": text(len, seed, seed.is_multiple_of(2)),
                "tags": tags,
                "score": id % 100,
            })
        })
}

/// An object of record lists, some nested in objects (a board, a bucket map).
fn lists() -> impl Strategy<Value = Value> {
    prop::collection::vec(
        (key(), any::<bool>(), prop::collection::vec(record(), 0..60)),
        1..5,
    )
    .prop_map(|lists| {
        let mut root = Map::new();
        root.insert("total".to_owned(), json!(7));
        for (name, nested, items) in lists {
            if nested {
                root.insert(
                    format!("{name}_group"),
                    json!({"column": items, "label": "high"}),
                );
            } else {
                root.insert(name, Value::Array(items));
            }
        }
        Value::Object(root)
    })
}

/// `{nodes, edges}` with ids as strings or numbers, self-loops, dangling edges;
/// about one in three names ids as other tools do (`uid` and `source_uid` /
/// `target_uid`, `from` / `to`, `key` and `src` / `dst`), which the trimmer
/// resolves too, or with keys it does not know (`ref`, `left` / `right`), so
/// its edges resolve to no node and fair list rules apply.
fn graph() -> impl Strategy<Value = Value> {
    (
        1usize..50,
        prop::collection::vec((0usize..60, 0usize..60), 0..120),
        any::<bool>(),
        any::<u64>(),
        prop_oneof![
            9 => Just(["id", "source", "target"]),
            1 => Just(["uid", "source_uid", "target_uid"]),
            1 => Just(["id", "from", "to"]),
            1 => Just(["key", "src", "dst"]),
            1 => Just(["ref", "left", "right"]),
        ],
    )
        .prop_map(|(n, pairs, numeric, seed, keys)| {
            let [id_key, source_key, target_key] = keys;
            let id = |i: usize| if numeric { json!(i) } else { json!(format!("n{i}")) };
            let nodes: Vec<Value> = (0..n)
                .map(|i| {
                    json!({
                        id_key: id(i),
                        "kind": "note",
                        "title": format!("Node {i}"),
                        "body": text(50 + (i * 37) % 400, seed + i as u64, i % 3 == 0),
                    })
                })
                .collect();
            let edges: Vec<Value> = pairs
                .iter()
                .enumerate()
                .map(|(j, &(s, t))| {
                    json!({"id": format!("e{j}"), source_key: id(s), target_key: id(t), "kind": "links_to"})
                })
                .collect();
            json!({"stats": {"depth": 2}, "nodes": nodes, "edges": edges})
        })
}

/// Every shape the trimmer meets, a top-level array included.
fn payload() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => value(),
        3 => lists(),
        2 => graph(),
        1 => prop::collection::vec(record(), 0..80).prop_map(Value::Array),
        1 => (graph(), lists()).prop_map(|(g, l)| json!({"graph": g, "lists": l})),
    ]
}

fn limit() -> impl Strategy<Value = usize> {
    300usize..8_000
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Guarantees 1, 2, 4, 5, 6: within the limit or honestly unshrinkable; an
    /// entry for every cut and a cut for every entry, with true from/to; kept items
    /// a prefix in order; coherent subgraphs; small scalars and keys untouched;
    /// tokens_estimated the estimate of the text itself.
    #[test]
    fn every_answer_keeps_the_contract(input in payload(), limit in limit()) {
        let answer = render_at(input.clone(), limit);
        check_answer(&input, &answer, limit);
    }

    /// Guarantee 7: same input, same bytes.
    #[test]
    fn the_same_input_gives_the_same_bytes(input in payload(), limit in limit()) {
        let first = render_with_limit(envelope(input.clone()), Some(limit), Form::Envelope);
        let second = render_with_limit(envelope(input), Some(limit), Form::Envelope);
        prop_assert_eq!(first, second);
    }

    /// Guarantee 3: an array stays whole only if it weighs no more than what a cut
    /// sibling array was allowed (its kept items plus the next one, with its entry),
    /// or if cutting it could not save anything (its first item is all of it).
    #[test]
    fn large_arrays_are_cut_before_small_ones(input in lists(), limit in 1_000usize..12_000) {
        let answer = render_at(input.clone(), limit);
        check_answer(&input, &answer, limit);
        let trims = answer.trims();
        let arrays = sibling_arrays(&input);
        for (x_path, x) in &arrays {
            let Some(cut) = trims.iter().find(|t| &t.path == x_path && t.kind == TrimKind::List) else { continue };
            if cut.to == 0 { continue }
            let allowed = content_units(&x[..cut.to + 1]) + entry_units(x_path, x.len());
            for (y_path, y) in &arrays {
                if y.len() < 2 || trims.iter().any(|t| &t.path == y_path) { continue }
                let whole = content_units(y);
                prop_assert!(
                    whole < allowed || whole <= content_units(&y[..1]) + entry_units(y_path, y.len()),
                    "{} ({} units) whole while {} was cut to {} (allowed {})",
                    y_path, whole, x_path, cut.to, allowed
                );
            }
        }
    }

    /// Guarantee 7: reserved meta keys a tool sets are ignored; its own keys stay.
    #[test]
    fn reserved_meta_keys_from_a_tool_are_ignored(
        input in payload(),
        limit in limit(),
        spoof in prop::collection::vec((prop::sample::select(SPOOFABLE.to_vec()), leaf()), 1..8),
    ) {
        let mut meta = Meta::new("t", "tests", "req-1");
        for (key, value) in spoof {
            meta.extra.insert(key.to_owned(), value);
        }
        meta.extra.insert("hint".to_owned(), json!("kept"));
        let text = render_with_limit(Envelope::success(input.clone(), meta), Some(limit), Form::Envelope);
        let answer = Answer::parse(text);
        check_answer(&input, &answer, limit);
        let m = answer.meta();
        prop_assert_eq!(&m["api_version"], &json!("1"));
        prop_assert_eq!(&m["tool"], &json!("t"));
        prop_assert_eq!(&m["layer"], &json!("tests"));
        prop_assert_eq!(&m["request_id"], &json!("req-1"));
        prop_assert_eq!(&m["runtime_ms"], &json!(0.0));
        prop_assert_eq!(&m["warnings"], &json!([]));
        prop_assert_eq!(&m["hint"], &json!("kept"));
        prop_assert_eq!(m.as_object().unwrap().len(), 10 + usize::from(answer.unshrinkable()));
    }

    /// Guarantees 1, 2 and 6 hold for the printed text in every layout: the
    /// indented text a terminal shows, and the dense text without nulls.
    #[test]
    fn every_printed_layout_keeps_the_contract(input in payload(), limit in limit()) {
        let pretty = render_laid_out(envelope(input.clone()), Some(limit), Form::Envelope, Layout::Pretty);
        prop_assert!(pretty.contains('\n'));
        check_answer(&input, &Answer::parse(pretty), limit);
        let dense = render_laid_out(envelope(input.clone()), Some(limit), Form::Envelope, Layout::Dense);
        check_answer(&without_nulls(input), &Answer::parse(dense), limit);
    }

    /// Guarantee 1 in the REST form too, and the budget never grows a payload.
    #[test]
    fn the_rest_form_keeps_the_budget(input in payload(), limit in limit()) {
        let text = render_with_limit(envelope(input.clone()), Some(limit), Form::Rest);
        let answer = Answer::parse(text);
        prop_assert!(answer.json.get("ok").is_none());
        check_answer(&input, &answer, limit);
        prop_assert!(units_of(&answer.data().to_string()) <= units_of(&input.to_string()));
    }
}

/// What `--dense` prints of a payload: null members dropped (a null `data` stays).
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

const SPOOFABLE: [&str; 10] = [
    "tokens_estimated",
    "truncated",
    "trimmed",
    "envelope_unshrinkable",
    "api_version",
    "request_id",
    "runtime_ms",
    "tool",
    "layer",
    "warnings",
];

/// The arrays that share the root's budget: reachable through objects only
/// (graph shapes excluded: they are one participant).
fn sibling_arrays(root: &Value) -> Vec<(String, Vec<Value>)> {
    fn walk(value: &Value, path: String, out: &mut Vec<(String, Vec<Value>)>) {
        match value {
            Value::Array(items) => out.push((path, items.clone())),
            Value::Object(map) if !is_graph(value) => {
                for (k, v) in map {
                    walk(v, format!("{path}/{}", pointer_token(k)), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(root, String::new(), &mut out);
    out
}
