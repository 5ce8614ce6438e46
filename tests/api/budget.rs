//! The budget trimmer (docs/contract.md, "Budgets") on the payloads that bit earlier
//! trimmers, and `check_answer`, the one oracle every budget test reads an answer
//! with.

use std::collections::{HashMap, HashSet};

use cairn::envelope::budget::{
    GRAPH_END_KEYS, GRAPH_NODE_KEYS, STRING_MARKER, render_with_limit, size_of,
};
use cairn::envelope::{
    Envelope, ErrorCode, Form, Meta, Tier, ToolError, Trim, TrimKind, estimate_tokens, render,
};
use serde_json::{Value, json};

pub const AGENT: usize = 32_000;

pub fn envelope(data: Value) -> Envelope {
    Envelope::success(data, Meta::new("t", "tests", "req-1"))
}

/// One emitted answer, parsed.
pub struct Answer {
    pub text: String,
    pub json: Value,
}

impl Answer {
    pub fn parse(text: String) -> Self {
        let json = serde_json::from_str(&text).expect("the trimmer emits valid JSON");
        Self { text, json }
    }

    pub fn data(&self) -> &Value {
        &self.json["data"]
    }

    pub fn meta(&self) -> &Value {
        &self.json["meta"]
    }

    pub fn trims(&self) -> Vec<Trim> {
        serde_json::from_value(self.meta()["trimmed"].clone()).expect("trimmed entries parse")
    }

    pub fn unshrinkable(&self) -> bool {
        self.meta().get("envelope_unshrinkable") == Some(&json!(true))
    }

    pub fn size(&self) -> u64 {
        size_of(&self.text)
    }
}

pub fn render_at(data: Value, limit: usize) -> Answer {
    Answer::parse(render_with_limit(
        envelope(data),
        Some(limit),
        Form::Envelope,
    ))
}

pub fn render_agent(data: Value) -> Answer {
    Answer::parse(render(envelope(data), Tier::Agent, Form::Envelope))
}

/// Units of a value's compact JSON: ascii bytes + 4 per non-ASCII char.
pub fn units_of(text: &str) -> u64 {
    text.chars().map(|c| if c.is_ascii() { 1 } else { 4 }).sum()
}

/// Units of an array's content (its items joined by commas, no brackets).
pub fn content_units(items: &[Value]) -> u64 {
    let items_units: u64 = items.iter().map(|v| units_of(&v.to_string())).sum();
    items_units + items.len().saturating_sub(1) as u64
}

/// Units a trim entry for an array at `path` of `n` items can take (comma included).
pub fn entry_units(path: &str, n: usize) -> u64 {
    let entry = Trim {
        path: path.to_owned(),
        kind: TrimKind::List,
        from: n,
        to: n,
    };
    units_of(&serde_json::to_string(&entry).unwrap()) + 1
}

pub fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Checks every guarantee of docs/contract.md, "Budgets" that one answer shows,
/// against the tool's `input`: budget (or honest unshrinkable), the entries describe
/// exactly the cuts (kept items a prefix, subgraphs coherent, strings a prefix plus
/// the marker), nothing else changed, no array emptied while another keeps more than
/// one item, and `tokens_estimated` is the estimate of the text itself.
pub fn check_answer(input: &Value, answer: &Answer, limit: usize) {
    let meta = answer.meta();
    assert_eq!(
        meta["tokens_estimated"].as_u64(),
        Some(estimate_tokens(&answer.text)),
        "tokens_estimated is the estimate of the emitted text"
    );

    let trims = answer.trims();
    assert_eq!(
        meta["truncated"].as_bool(),
        Some(!trims.is_empty()),
        "truncated iff something was cut"
    );
    let mut by_path: HashMap<&str, &Trim> = HashMap::new();
    for trim in &trims {
        assert!(
            by_path.insert(&trim.path, trim).is_none(),
            "one entry per cut: {} twice",
            trim.path
        );
        if trim.kind != TrimKind::String {
            assert!(trim.to < trim.from, "an entry is a real cut: {trim:?}");
        }
        assert!(
            answer.data().pointer(&trim.path).is_some(),
            "an entry's path points into the emitted data: {trim:?}"
        );
    }
    let mut used = 0;
    compare(input, answer.data(), "", &by_path, &mut used);
    assert_eq!(used, trims.len(), "every entry names a cut that was made");

    // A graph's edges follow its nodes (only edges between kept nodes stay), so
    // they are not an array the rule can keep from emptying.
    let emptied = trims.iter().any(|t| {
        t.to == 0
            && match t.kind {
                TrimKind::List => true,
                TrimKind::Subgraph => !t.path.ends_with("/edges"),
                TrimKind::String => false,
            }
    });
    if emptied {
        for_each_array(answer.data(), &mut |items| {
            assert!(
                items.len() <= 1,
                "an array was emptied while another keeps {} items: {:?}",
                items.len(),
                trims
            );
        });
    }

    if answer.unshrinkable() {
        assert!(
            answer.size() > limit as u64,
            "unshrinkable only when over the limit"
        );
        // Over without the flag too (its `tokens_estimated` is that of the
        // flagged text, at least the unflagged one's): an answer that fits
        // unflagged is sent so.
        let unflagged = answer.text.replace(",\"envelope_unshrinkable\":true", "");
        assert!(
            size_of(&unflagged) > limit as u64,
            "flagged unshrinkable, yet it fits at {limit} without the flag"
        );
        for_each_array(answer.data(), &mut |items| {
            assert!(
                items.is_empty(),
                "unshrinkable only once every array is emptied"
            );
        });
        for trim in trims.iter().filter(|t| t.kind == TrimKind::String) {
            assert_eq!(
                trim.to,
                STRING_MARKER.chars().count(),
                "strings at their minimum"
            );
        }
    } else {
        assert!(
            answer.size() <= limit as u64,
            "size {} over the limit {limit}",
            answer.size()
        );
    }
}

fn for_each_array(value: &Value, f: &mut dyn FnMut(&[Value])) {
    match value {
        Value::Array(items) => {
            f(items);
            items.iter().for_each(|v| for_each_array(v, f));
        }
        Value::Object(map) => map.values().for_each(|v| for_each_array(v, f)),
        _ => {}
    }
}

/// Walks the tool's value and the emitted one together.
fn compare(
    input: &Value,
    output: &Value,
    path: &str,
    trims: &HashMap<&str, &Trim>,
    used: &mut usize,
) {
    match (input, output) {
        (Value::Object(a), Value::Object(b)) => {
            assert!(a.keys().eq(b.keys()), "keys at {path:?} are kept, in order");
            let graph_cut = is_graph(input)
                .then(|| trims.get(format!("{path}/nodes").as_str()).copied())
                .flatten();
            for (key, value) in a {
                let child = format!("{path}/{}", pointer_token(key));
                if graph_cut.is_some() && (key == "nodes" || key == "edges") {
                    continue;
                }
                compare(value, &b[key], &child, trims, used);
            }
            if let Some(cut) = graph_cut {
                compare_subgraph(a, b, path, cut, trims, used);
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            match trims.get(path) {
                Some(cut) => {
                    assert_eq!(
                        cut.kind,
                        TrimKind::List,
                        "{path}: an array cut is a list entry"
                    );
                    assert_eq!(cut.from, a.len(), "{path}: from is the tool's length");
                    assert_eq!(cut.to, b.len(), "{path}: to is the emitted length");
                    *used += 1;
                }
                None => assert_eq!(a.len(), b.len(), "{path}: an array without entry is whole"),
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                compare(x, y, &format!("{path}/{i}"), trims, used);
            }
        }
        (Value::String(a), Value::String(b)) => match trims.get(path) {
            Some(cut) => {
                assert_eq!(
                    cut.kind,
                    TrimKind::String,
                    "{path}: a string cut is a string entry"
                );
                let chars = a.chars().count();
                assert!(chars >= 200, "{path}: a string under 200 chars was cut");
                assert_eq!(
                    cut.from, chars,
                    "{path}: from is the tool's length in chars"
                );
                assert_eq!(
                    cut.to,
                    b.chars().count(),
                    "{path}: to is the emitted length"
                );
                let kept = b
                    .strip_suffix(STRING_MARKER)
                    .unwrap_or_else(|| panic!("{path}: a cut string ends with the marker"));
                assert!(a.starts_with(kept), "{path}: a cut string keeps a prefix");
                assert!(kept.len() < a.len(), "{path}: a cut string lost something");
                *used += 1;
            }
            None => assert_eq!(a, b, "{path}: a string without entry is untouched"),
        },
        (a, b) => assert_eq!(a, b, "{path}: numbers, booleans and null are never altered"),
    }
}

/// The trimmer's graph shape: an object with non-empty `nodes` and an `edges`
/// array that is empty or has an edge between two of the nodes (named by one
/// of [`GRAPH_NODE_KEYS`] and [`GRAPH_END_KEYS`]: docs/contract.md,
/// "Budgets", guarantee 5); otherwise its arrays are plain lists.
pub fn is_graph(value: &Value) -> bool {
    let shaped = value
        .get("nodes")
        .and_then(Value::as_array)
        .is_some_and(|n| !n.is_empty())
        && value.get("edges").is_some_and(Value::is_array);
    shaped && {
        let (_, ends) = graph_ranks(value);
        ends.is_empty() || ends.iter().any(Option::is_some)
    }
}

/// Each edge's two node indices, `None` where an end names no node.
type Ends = Vec<Option<(usize, usize)>>;

/// Each edge's two node indices under the naming that resolves the most
/// edges, among the keys the first node and the first edge hold (ties to the
/// earlier keys).
fn graph_ends(nodes: &[Value], edges: &[Value]) -> Ends {
    let holds = |item: Option<&Value>, key: &str| item.is_some_and(|v| v.get(key).is_some());
    let mut best: Option<(usize, Ends)> = None;
    for node_key in GRAPH_NODE_KEYS.iter().filter(|k| holds(nodes.first(), k)) {
        let mut index = HashMap::new();
        for (i, node) in nodes.iter().enumerate() {
            if let Some(id) = node
                .get(node_key)
                .filter(|id| id.is_string() || id.is_number())
            {
                index.entry(id.to_string()).or_insert(i);
            }
        }
        let end = |e: &Value, key: &str| {
            e.get(key)
                .and_then(|id| index.get(&id.to_string()).copied())
        };
        for (from, to) in GRAPH_END_KEYS {
            if !(holds(edges.first(), from) && holds(edges.first(), to)) {
                continue;
            }
            let ends: Vec<_> = edges
                .iter()
                .map(|e| Some((end(e, from)?, end(e, to)?)))
                .collect();
            let resolved = ends.iter().flatten().count();
            if resolved > best.as_ref().map_or(0, |(most, _)| *most) {
                best = Some((resolved, ends));
            }
        }
    }
    best.map_or_else(|| vec![None; edges.len()], |(_, ends)| ends)
}

/// Node ranks by degree, ties by original order (edges count when both ends are
/// nodes of the graph); and each edge's two node indices when known.
pub fn graph_ranks(graph: &Value) -> (Vec<usize>, Vec<Option<(usize, usize)>>) {
    let nodes = graph["nodes"].as_array().unwrap();
    let edges = graph["edges"].as_array().unwrap();
    let ends = graph_ends(nodes, edges);
    let mut degree = vec![0usize; nodes.len()];
    for &(s, t) in ends.iter().flatten() {
        degree[s] += 1;
        degree[t] += 1;
    }
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&a, &b| degree[b].cmp(&degree[a]).then(a.cmp(&b)));
    let mut rank = vec![0; nodes.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r;
    }
    (rank, ends)
}

fn compare_subgraph(
    a: &serde_json::Map<String, Value>,
    b: &serde_json::Map<String, Value>,
    path: &str,
    cut: &Trim,
    trims: &HashMap<&str, &Trim>,
    used: &mut usize,
) {
    let input = Value::Object(a.clone());
    let (rank, ends) = graph_ranks(&input);
    let nodes_in = a["nodes"].as_array().unwrap();
    let nodes_out = b["nodes"].as_array().unwrap();
    assert_eq!(
        cut.kind,
        TrimKind::Subgraph,
        "{path}: a graph cut is a subgraph entry"
    );
    assert_eq!(
        cut.from,
        nodes_in.len(),
        "{path}: from counts the tool's nodes"
    );
    assert_eq!(
        cut.to,
        nodes_out.len(),
        "{path}: to counts the emitted nodes"
    );
    *used += 1;
    let k = cut.to;
    let kept: Vec<usize> = (0..nodes_in.len()).filter(|&i| rank[i] < k).collect();
    // Paths point into the emitted data: a kept node is named by its new index.
    for (at, (&i, node)) in kept.iter().zip(nodes_out).enumerate() {
        let node_path = format!("{path}/nodes/{at}");
        compare(&nodes_in[i], node, &node_path, trims, used);
    }
    let kept_set: HashSet<usize> = kept.into_iter().collect();
    let edges_in = a["edges"].as_array().unwrap();
    let expected: Vec<&Value> = edges_in
        .iter()
        .zip(&ends)
        .filter(|(_, e)| e.is_some_and(|(s, t)| kept_set.contains(&s) && kept_set.contains(&t)))
        .map(|(e, _)| e)
        .collect();
    let edges_out: Vec<&Value> = b["edges"].as_array().unwrap().iter().collect();
    assert_eq!(
        edges_out, expected,
        "{path}: edges kept are exactly those between kept nodes"
    );
    let edges_path = format!("{path}/edges");
    if expected.len() < edges_in.len() {
        let entry = trims
            .get(edges_path.as_str())
            .expect("dropped edges have an entry");
        assert_eq!(entry.kind, TrimKind::Subgraph);
        assert_eq!((entry.from, entry.to), (edges_in.len(), expected.len()));
        *used += 1;
    } else {
        assert!(
            !trims.contains_key(edges_path.as_str()),
            "no edge entry without a cut"
        );
    }
}

fn text_of(len: usize, seed: u64) -> String {
    let palette = ['a', 'b', 'c', ' ', 'e', 'o', 'n', 't', '.'];
    (0..len as u64)
        .map(|i| palette[((i * 7 + seed * 13) % palette.len() as u64) as usize])
        .collect()
}

fn rows(n: usize, text_len: usize) -> Vec<Value> {
    (0..n)
        .map(|i| json!({"id": format!("row-{i:04}"), "score": i, "text": text_of(text_len, i as u64)}))
        .collect()
}

/// A graph of `n` nodes with `text_len` chars each, node `i` linked to its
/// `links` successors (so degree grows with the number of in-links).
pub fn graph(n: usize, text_len: usize, links: usize) -> Value {
    let nodes: Vec<Value> = (0..n)
        .map(|i| {
            json!({
                "id": format!("n{i}"),
                "kind": "note",
                "title": format!("Node {i}"),
                "body": text_of(text_len, i as u64),
            })
        })
        .collect();
    let mut edges = Vec::new();
    for i in 0..n {
        for d in 1..=links {
            let j = (i * 31 + d * 17) % n;
            let id = format!("e{}", edges.len());
            edges.push(json!({
                "id": id,
                "source": format!("n{i}"),
                "target": format!("n{j}"),
                "kind": "links_to",
            }));
        }
    }
    json!({"root": "n0", "nodes": nodes, "edges": edges})
}

#[test]
fn hundred_rows_of_2kb_keep_a_prefix_within_the_agent_budget() {
    let input = json!({"results": rows(100, 2000), "total": 100});
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    let trims = answer.trims();
    assert_eq!(trims.len(), 1);
    assert_eq!((trims[0].path.as_str(), trims[0].from), ("/results", 100));
    assert!(
        trims[0].to >= 12,
        "the budget is used, not wasted: kept {}",
        trims[0].to
    );
    assert_eq!(answer.data()["total"], 100);
}

#[test]
fn two_hundred_neighbours_of_500_chars_are_cut_to_a_prefix() {
    let neighbours: Vec<Value> = (0..200)
        .map(|i| json!({"id": format!("n{i}"), "snippet": text_of(500, i)}))
        .collect();
    let input = json!({"node": {"id": "root", "title": "Root"}, "neighbours": neighbours});
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    let kept = answer.data()["neighbours"].as_array().unwrap().len();
    assert!((50..200).contains(&kept), "kept {kept} neighbours");
    assert!(
        answer.size() > (AGENT - 600) as u64,
        "close to the limit: {}",
        answer.size()
    );
}

#[test]
fn a_small_list_is_not_drained_to_pay_for_a_large_one() {
    let small: Vec<Value> = (0..5).map(|i| json!({"tag": format!("t{i}")})).collect();
    let input = json!({"results": rows(300, 1000), "tags": small});
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    assert_eq!(
        answer.data()["tags"],
        input["tags"],
        "the small list stays whole"
    );
    let trims = answer.trims();
    assert_eq!(trims.len(), 1);
    assert_eq!(trims[0].path, "/results");
}

#[test]
fn a_boards_columns_in_a_nested_object_share_the_budget_fairly() {
    let cards = |column: &str| -> Vec<Value> {
        (0..400)
            .map(|i| json!({"id": format!("{column}-{i}"), "title": text_of(120, i), "priority": "high"}))
            .collect()
    };
    let input = json!({"board": {"columns": {"todo": cards("todo"), "doing": cards("doing"), "done": cards("done")}}});
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    let kept: Vec<usize> = ["todo", "doing", "done"]
        .iter()
        .map(|c| {
            answer.data()["board"]["columns"][c]
                .as_array()
                .unwrap()
                .len()
        })
        .collect();
    let (min, max) = (kept.iter().min().unwrap(), kept.iter().max().unwrap());
    assert!(*min >= 20, "every column keeps cards: {kept:?}");
    assert!(
        max - min <= 1,
        "equal columns keep about as many cards: {kept:?}"
    );
    let paths: Vec<String> = answer.trims().into_iter().map(|t| t.path).collect();
    assert_eq!(
        paths,
        [
            "/board/columns/todo",
            "/board/columns/doing",
            "/board/columns/done"
        ]
    );
}

#[test]
fn a_60kb_string_is_shortened_while_small_scalars_stay_intact() {
    let input = json!({"risk": "high", "count": 42, "ratio": 0.25, "done": false, "summary": text_of(60_000, 1)});
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    let data = answer.data();
    assert_eq!(
        (&data["risk"], &data["count"], &data["ratio"], &data["done"]),
        (&json!("high"), &json!(42), &json!(0.25), &json!(false))
    );
    let trims = answer.trims();
    assert_eq!(trims.len(), 1);
    assert_eq!(
        (trims[0].kind, trims[0].path.as_str(), trims[0].from),
        (TrimKind::String, "/summary", 60_000)
    );
    assert!(
        trims[0].to > 30_000,
        "the string uses the budget: {}",
        trims[0].to
    );
}

#[test]
fn one_item_too_big_on_its_own_is_kept_with_its_long_string_shortened() {
    let input = json!({"results": [{"id": "only", "status": "open", "body": text_of(100_000, 3)}]});
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    assert_eq!(answer.data()["results"][0]["id"], "only");
    assert_eq!(answer.trims()[0].path, "/results/0/body");
}

#[test]
fn lists_are_cut_to_their_first_item_before_a_string_is_shortened() {
    let input = json!({"note": text_of(40_000, 2), "results": rows(50, 300)});
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    assert_eq!(answer.data()["results"].as_array().unwrap().len(), 1);
    let kinds: Vec<TrimKind> = answer.trims().iter().map(|t| t.kind).collect();
    assert_eq!(kinds, [TrimKind::List, TrimKind::String]);
}

#[test]
fn a_2mb_graph_is_cut_to_a_coherent_subgraph_of_its_best_connected_nodes() {
    let input = graph(4_000, 420, 3);
    assert!(input.to_string().len() > 2_000_000);
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    let trims = answer.trims();
    assert_eq!(trims[0].kind, TrimKind::Subgraph);
    assert_eq!((trims[0].path.as_str(), trims[0].from), ("/nodes", 4_000));
    assert_eq!(trims[1].path, "/edges");
    assert!(
        !answer.data()["edges"].as_array().unwrap().is_empty(),
        "edges survive"
    );
    assert_eq!(answer.data()["root"], "n0");
}

/// [`graph`] with its nodes named by `node_key` and its edges' ends by
/// `from` and `to`, as other tools write graphs.
fn renamed_graph(n: usize, text_len: usize, links: usize, keys: [&str; 3]) -> Value {
    let [node_key, from, to] = keys;
    let mut input = graph(n, text_len, links);
    for node in input["nodes"].as_array_mut().unwrap() {
        let id = node.as_object_mut().unwrap().remove("id").unwrap();
        node[node_key] = id;
    }
    for edge in input["edges"].as_array_mut().unwrap() {
        let edge = edge.as_object_mut().unwrap();
        let source = edge.remove("source").unwrap();
        let target = edge.remove("target").unwrap();
        edge.insert(from.into(), source);
        edge.insert(to.into(), target);
    }
    input
}

#[test]
fn a_2mb_graph_named_as_other_tools_name_theirs_is_cut_to_a_coherent_subgraph() {
    // The seed's shape first (nodes by `uid`, edges by `source_uid` /
    // `target_uid`): before, it came out with edges pointing at dropped nodes.
    for keys in [
        ["uid", "source_uid", "target_uid"],
        ["id", "from", "to"],
        ["key", "src", "dst"],
        ["uid", "source", "target"],
    ] {
        let input = renamed_graph(4_000, 420, 3, keys);
        assert!(input.to_string().len() > 2_000_000);
        let answer = render_agent(input.clone());
        check_answer(&input, &answer, AGENT);
        let trims = answer.trims();
        let kinds: Vec<(&str, TrimKind)> =
            trims.iter().map(|t| (t.path.as_str(), t.kind)).collect();
        assert_eq!(
            kinds,
            [
                ("/nodes", TrimKind::Subgraph),
                ("/edges", TrimKind::Subgraph)
            ],
            "{keys:?}"
        );
        let [node_key, from, to] = keys;
        let kept: std::collections::HashSet<String> = answer.data()["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n[node_key].to_string())
            .collect();
        let edges = answer.data()["edges"].as_array().unwrap();
        assert!(!edges.is_empty(), "{keys:?}: edges survive");
        for edge in edges {
            assert!(
                kept.contains(&edge[from].to_string()) && kept.contains(&edge[to].to_string()),
                "{keys:?}: every kept edge joins two kept nodes: {edge}"
            );
        }
    }
}

#[test]
fn a_graph_whose_edges_name_no_node_is_cut_as_fair_lists() {
    let input = renamed_graph(4_000, 420, 3, ["ref", "left", "right"]);
    assert!(input.to_string().len() > 2_000_000);
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    let trims = answer.trims();
    let kinds: Vec<(&str, TrimKind)> = trims.iter().map(|t| (t.path.as_str(), t.kind)).collect();
    assert_eq!(
        kinds,
        [("/nodes", TrimKind::List), ("/edges", TrimKind::List)]
    );
    let nodes = answer.data()["nodes"].as_array().unwrap().len();
    let edges = answer.data()["edges"].as_array().unwrap().len();
    // Before, this came out as 147 nodes and no edge at all.
    assert!(edges > 1 && nodes > 1, "{nodes} nodes, {edges} edges");
    assert_eq!(
        answer.data()["nodes"][0],
        input["nodes"][0],
        "a prefix, in order"
    );
}

#[test]
fn a_graph_with_some_dangling_edges_is_still_cut_as_a_subgraph() {
    let mut input = graph(4_000, 420, 3);
    input["edges"][0]["target"] = json!("elsewhere");
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    assert_eq!(answer.trims()[0].kind, TrimKind::Subgraph);
}

#[test]
fn the_graph_tier_leaves_a_2mb_graph_whole() {
    let input = graph(4_000, 420, 3);
    let answer = Answer::parse(render(envelope(input.clone()), Tier::Graph, Form::Rest));
    assert_eq!(answer.data(), &input);
    assert_eq!(answer.meta()["truncated"], false);
    assert_eq!(
        answer.meta()["tokens_estimated"].as_u64(),
        Some(estimate_tokens(&answer.text))
    );
}

#[test]
fn one_mb_of_cjk_text_counts_one_token_per_char() {
    let text: String = "漢字かな交じり文".chars().cycle().take(350_000).collect();
    let input = json!({"lang": "ja", "text": text});
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    let tokens = answer.meta()["tokens_estimated"].as_u64().unwrap();
    assert!(
        tokens <= 8_000,
        "4 units per CJK char keep it under 8,000 tokens: {tokens}"
    );
    let kept = answer.data()["text"].as_str().unwrap().chars().count();
    assert!(
        (7_000..8_000).contains(&kept),
        "about one char per token: {kept}"
    );
}

#[test]
fn a_list_of_cjk_strings_is_cut_by_tokens_not_bytes() {
    let items: Vec<Value> = (0..400)
        .map(|i| json!(format!("第{i}項：{}", "日本語".repeat(60))))
        .collect();
    let input = json!({"items": items});
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    assert!(answer.meta()["tokens_estimated"].as_u64().unwrap() <= 8_000);
}

#[test]
fn a_top_level_array_is_cut_to_a_prefix_at_the_root_pointer() {
    let input = Value::Array(rows(1_000, 200));
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    let trims = answer.trims();
    assert_eq!((trims[0].path.as_str(), trims[0].from), ("", 1_000));
}

#[test]
fn a_payload_within_budget_is_emitted_untouched() {
    let input = json!({"results": rows(3, 100), "note": "short"});
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    assert_eq!(answer.data(), &input);
    assert_eq!(answer.meta()["trimmed"], json!([]));
}

#[test]
fn tier_none_leaves_a_large_payload_untouched() {
    let input = json!({"results": rows(300, 1000)});
    let answer = Answer::parse(render(envelope(input.clone()), Tier::None, Form::Envelope));
    assert_eq!(answer.data(), &input);
    assert_eq!(answer.meta()["truncated"], false);
    assert_eq!(
        answer.meta()["tokens_estimated"].as_u64(),
        Some(estimate_tokens(&answer.text))
    );
}

#[test]
fn a_failure_cuts_what_it_echoes_on_every_tier_and_counts_its_tokens() {
    let echo = text_of(50_000, 5);
    let short: String = echo.chars().take(200).collect();
    for tier in [Tier::Agent, Tier::None] {
        let error = ToolError::new(ErrorCode::InvalidInput, format!("Bad `{echo}`."))
            .detail("echo", echo.clone())
            .detail("nested", json!([{"title": echo.clone()}, 7]));
        let envelope = Envelope::failure(error, Meta::new("t", "tests", "req-1"));
        let answer = Answer::parse(render(envelope, tier, Form::Envelope));
        assert_eq!(answer.json["ok"], false);
        let cut = format!("{short}{STRING_MARKER}");
        let error = &answer.json["error"];
        assert_eq!(error["details"]["echo"], json!(cut));
        assert_eq!(error["details"]["nested"], json!([{"title": cut}, 7]));
        assert_eq!(error["message"], json!(format!("Bad `{cut}`.")));
        assert!(answer.text.len() < 2_000, "{tier:?}: {}", answer.text.len());
    }
}

/// Near the smallest limit an answer can be cut to, the plan's conservative
/// bounds (room for the widest numbers) may call it unshrinkable while the
/// text fits: then it is sent unflagged, within the limit. Every limit of a
/// range that crosses that edge is tried.
#[test]
fn an_answer_that_fits_once_cut_to_its_least_is_not_flagged() {
    let input = json!({
        "id": "n1",
        "tasks": [{"id": "t1", "title": "a".repeat(300)}, {"id": "t2", "title": "b".repeat(300)}],
        "notes": [{"id": "n2", "body": "c".repeat(400)}],
        "summary": "d".repeat(250),
    });
    let (mut flagged, mut unflagged) = (0, 0);
    for limit in 150..600 {
        let answer = render_at(input.clone(), limit);
        check_answer(&input, &answer, limit);
        if answer.unshrinkable() {
            flagged += 1;
        } else {
            unflagged += 1;
        }
    }
    assert!(flagged > 0 && unflagged > 0, "the range crosses the edge");
}

/// A graph kept whole while something beside it is cut goes out as it came,
/// an edge naming an unknown node included: only a cut graph drops the
/// edges it no longer holds both ends of (and says so in its entries).
#[test]
fn a_graph_kept_whole_keeps_its_dangling_edge() {
    let notes: Vec<Value> = (0..200)
        .map(|i| json!({"id": format!("n{i}"), "text": "t".repeat(150)}))
        .collect();
    let input = json!({
        "nodes": [{"id": "a"}, {"id": "b"}],
        "edges": [{"source": "a", "target": "b"}, {"source": "a", "target": "gone"}],
        "notes": notes,
    });
    for limit in [4_000, 12_000] {
        let answer = render_at(input.clone(), limit);
        check_answer(&input, &answer, limit);
        assert_eq!(
            answer.meta()["truncated"],
            true,
            "the notes are cut at {limit}"
        );
        assert_eq!(answer.data()["nodes"], input["nodes"], "at {limit}");
        assert_eq!(answer.data()["edges"], input["edges"], "at {limit}");
    }
}

#[test]
fn a_failure_over_the_agent_budget_is_flagged_unshrinkable() {
    let error = ToolError::new(ErrorCode::InvalidInput, "Too many.")
        .detail("many", json!(vec!["xxxxxxxx"; 4_000]));
    let envelope = Envelope::failure(error, Meta::new("t", "tests", "req-1"));
    let answer = Answer::parse(render(envelope.clone(), Tier::Agent, Form::Envelope));
    assert!(answer.size() > AGENT as u64);
    assert!(answer.unshrinkable());
    let answer = Answer::parse(render(envelope, Tier::None, Form::Envelope));
    assert!(!answer.unshrinkable(), "no budget, no flag");
}

#[test]
fn a_failure_is_never_trimmed_and_still_counts_its_tokens() {
    let error = ToolError::new(ErrorCode::InvalidInput, "Too long.")
        .detail("echo", text_of(150, 5))
        .detail("many", json!(vec!["x"; 3_000]));
    let envelope = Envelope::failure(error, Meta::new("t", "tests", "req-1"));
    let answer = Answer::parse(render(envelope, Tier::Agent, Form::Envelope));
    assert_eq!(answer.json["ok"], false);
    assert_eq!(
        answer.json["error"]["details"]["many"]
            .as_array()
            .unwrap()
            .len(),
        3_000
    );
    assert_eq!(answer.meta()["truncated"], false);
    assert_eq!(
        answer.meta()["tokens_estimated"].as_u64(),
        Some(estimate_tokens(&answer.text))
    );
}

#[test]
fn the_rest_form_is_data_and_meta_on_success_and_error_alone_on_failure() {
    let ok = Answer::parse(render(envelope(json!({"a": 1})), Tier::None, Form::Rest));
    let keys: Vec<&String> = ok.json.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["data", "meta"]);
    let failure = Envelope::failure(
        ToolError::new(ErrorCode::InvalidInput, "Bad."),
        Meta::new("t", "tests", "req-1"),
    );
    let err = Answer::parse(render(failure, Tier::Agent, Form::Rest));
    let keys: Vec<&String> = err.json.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["error"]);
}

#[test]
fn reserved_meta_keys_from_a_tool_are_ignored() {
    let mut meta = Meta::new("t", "tests", "req-1");
    for (key, value) in [
        ("tokens_estimated", json!(1)),
        ("truncated", json!(true)),
        ("trimmed", json!([{"path": "/x"}])),
        ("envelope_unshrinkable", json!(true)),
        ("api_version", json!("99")),
        ("request_id", json!("spoofed")),
        ("runtime_ms", json!(-1)),
    ] {
        meta.extra.insert(key.to_owned(), value);
    }
    meta.extra.insert("hint".to_owned(), json!("kept"));
    let answer = Answer::parse(render(
        Envelope::success(json!([1, 2]), meta),
        Tier::Agent,
        Form::Envelope,
    ));
    let m = answer.meta();
    assert_eq!(answer.text.matches("\"truncated\"").count(), 1);
    assert_eq!(
        (&m["truncated"], &m["trimmed"], &m["api_version"]),
        (&json!(false), &json!([]), &json!("1"))
    );
    assert_eq!(
        (&m["request_id"], &m["runtime_ms"]),
        (&json!("req-1"), &json!(0.0))
    );
    assert!(m.get("envelope_unshrinkable").is_none());
    assert_eq!(m["hint"], "kept");
    assert_eq!(
        m["tokens_estimated"].as_u64(),
        Some(estimate_tokens(&answer.text))
    );
}

#[test]
fn an_envelope_whose_fixed_parts_exceed_the_limit_is_flagged_unshrinkable() {
    let keys: serde_json::Map<String, Value> = (0..300)
        .map(|i| (format!("field_{i:03}"), json!(i)))
        .collect();
    let input = Value::Object(keys);
    let answer = render_at(input.clone(), 2_000);
    check_answer(&input, &answer, 2_000);
    assert!(answer.unshrinkable());
    assert_eq!(answer.data(), &input, "keys and numbers are never cut");
}

#[test]
fn markers_count_toward_the_budget_when_many_arrays_are_cut() {
    let buckets: serde_json::Map<String, Value> = (0..60)
        .map(|i| (format!("bucket_{i}"), Value::Array(rows(20, 40))))
        .collect();
    let input = Value::Object(buckets);
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    assert_eq!(answer.trims().len(), 60);
}

#[test]
fn a_lone_items_inner_arrays_share_that_items_allowance() {
    let children: Vec<Value> = (0..500)
        .map(|i| json!({"id": format!("c{i}"), "text": text_of(150, i)}))
        .collect();
    let input = json!({"results": [{"id": "parent", "children": children}], "tags": ["a", "b"]});
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    let trims = answer.trims();
    assert_eq!(trims.len(), 1);
    assert_eq!(trims[0].path, "/results/0/children");
    assert!(
        trims[0].to > 50,
        "the inner list uses the item's allowance: {}",
        trims[0].to
    );
    assert_eq!(answer.data()["results"][0]["id"], "parent");
}

#[test]
fn items_kept_beside_others_stay_whole_inner_arrays_included() {
    let items: Vec<Value> = (0..300)
        .map(|i| json!({"id": i, "notes": [text_of(100, i), text_of(100, i + 1)]}))
        .collect();
    let input = json!({"results": items});
    let answer = render_agent(input.clone());
    check_answer(&input, &answer, AGENT);
    let trims = answer.trims();
    assert_eq!(trims.len(), 1, "only the outer list is cut: {trims:?}");
    assert!(trims[0].to > 10);
}

#[test]
fn when_even_one_item_per_array_is_too_much_the_largest_arrays_are_emptied_first() {
    let arrays: serde_json::Map<String, Value> = (0..40)
        .map(|i| {
            // Short strings only: what an array weighs at its minimum grows with i.
            let item: serde_json::Map<String, Value> = (0..=i / 4)
                .map(|f| (format!("f{f}"), json!(text_of(150, f as u64))))
                .collect();
            let item = Value::Object(item);
            (format!("list_{i:02}"), json!([item.clone(), item]))
        })
        .collect();
    let input = Value::Object(arrays);
    let answer = render_at(input.clone(), 6_000);
    check_answer(&input, &answer, 6_000);
    let kept: Vec<usize> = (0..40)
        .map(|i| {
            answer.data()[format!("list_{i:02}")]
                .as_array()
                .unwrap()
                .len()
        })
        .collect();
    assert!(kept.iter().all(|&k| k <= 1), "{kept:?}");
    let weight = |i: usize| units_of(&input[format!("list_{i:02}")][0].to_string());
    let emptied: Vec<usize> = (0..40).filter(|&i| kept[i] == 0).collect();
    assert!(!emptied.is_empty(), "some arrays are emptied");
    for e in &emptied {
        for k in (0..40).filter(|&i| kept[i] == 1) {
            assert!(
                weight(k) <= weight(*e),
                "list_{k:02} kept while the smaller list_{e:02} was emptied"
            );
        }
    }
}

#[test]
fn every_limit_around_the_fixed_parts_is_kept_or_honestly_flagged() {
    let graph = json!({"stats": {"depth": 2}, "nodes": [{"id": "n0", "kind": "note", "body": text_of(60, 1)}], "edges": []});
    let list = json!({"results": rows(3, 250), "total": 3});
    for input in [graph, list] {
        for limit in 150..1_200 {
            let answer = render_at(input.clone(), limit);
            check_answer(&input, &answer, limit);
        }
    }
}
