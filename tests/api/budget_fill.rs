//! How fully the trimmer uses the budget (docs/contract.md, "Budgets"): the upper
//! bound is every other budget test's; these are the lower bounds. An answer that had
//! to be cut uses nearly all of the limit, whichever rung of the ladder cut it:
//! prefixes of lists, lists at one item with strings shortened, or arrays emptied
//! with the strings left sharing the rest.

use serde_json::{Value, json};

use crate::budget::{Answer, check_answer, render_at, units_of};

fn text(len: usize, seed: usize) -> String {
    let palette = ['a', 'b', 'c', ' ', 'e', 'o', 'n', 't', '.'];
    (0..len)
        .map(|i| palette[(i * 7 + seed * 13) % palette.len()])
        .collect()
}

/// Cuts `input` at `limit`, checks the contract, and returns the answer with
/// the share of the limit it uses.
fn fill(input: &Value, limit: usize) -> (Answer, f64) {
    let answer = render_at(input.clone(), limit);
    check_answer(input, &answer, limit);
    assert!(!answer.unshrinkable(), "fits at {limit}");
    assert_eq!(answer.meta()["truncated"], true, "cut at {limit}");
    let share = answer.size() as f64 / limit as f64;
    (answer, share)
}

/// An answer whose strings were shortened leaves unused only the room held
/// for `tokens_estimated`'s widest number (19 digits) and, per shortened
/// string, the water level's last step and its trim entry's digits: the
/// strings share all of what the rest leaves.
fn assert_strings_fill(answer: &Answer, limit: usize) {
    let shortened = answer
        .trims()
        .iter()
        .filter(|t| t.kind == cairn::envelope::TrimKind::String)
        .count() as u64;
    assert!(shortened > 0, "strings are shortened at {limit}");
    let unused = limit as u64 - answer.size();
    assert!(
        unused <= 19 + 4 * shortened + 8,
        "{unused} units unused at {limit} with {shortened} strings shortened"
    );
}

#[test]
fn a_shortened_string_takes_what_the_rest_leaves() {
    let input = json!({"id": "n1", "count": 3, "body": text(200_000, 1)});
    for limit in [1_000, 4_000, 32_000, 100_000] {
        let (answer, share) = fill(&input, limit);
        assert!(share >= 0.97, "{share:.3} of {limit}");
        assert_strings_fill(&answer, limit);
        assert_eq!(answer.trims()[0].path, "/body");
    }
}

#[test]
fn prefixes_of_lists_leave_less_than_one_item_unused() {
    let rows: Vec<Value> = (0..200)
        .map(|i| json!({"id": format!("row-{i:04}"), "text": text(900, i)}))
        .collect();
    let item = units_of(&rows[0].to_string());
    let input = json!({"results": rows, "total": 200});
    for limit in [3_000, 10_000, 32_000, 120_000] {
        let (answer, _) = fill(&input, limit);
        let unused = limit as u64 - answer.size();
        // One item, its comma, and the room the trim entry's digits may take.
        assert!(
            unused <= item + 8,
            "{unused} units unused at {limit} (item {item})"
        );
    }
}

#[test]
fn fair_prefixes_of_several_lists_leave_less_than_one_item_each_unused() {
    let list = |n: usize, len: usize| -> Vec<Value> {
        (0..n).map(|i| json!({"t": text(len, i)})).collect()
    };
    let input = json!({"a": list(100, 400), "b": list(60, 700), "c": list(5, 100)});
    for limit in [8_000, 20_000, 40_000] {
        let (answer, _) = fill(&input, limit);
        let unused = limit as u64 - answer.size();
        assert!(unused <= 2 * 710 + 16, "{unused} units unused at {limit}");
        assert_eq!(
            answer.data()["c"].as_array().unwrap().len(),
            5,
            "the small list stays"
        );
    }
}

#[test]
fn lists_at_one_item_leave_the_rest_to_long_strings() {
    let rows: Vec<Value> = (0..50)
        .map(|i| json!({"id": i, "text": text(600, i)}))
        .collect();
    let input = json!({"note": text(60_000, 2), "results": rows});
    for limit in [2_000, 8_000, 32_000] {
        let (answer, share) = fill(&input, limit);
        assert_eq!(answer.data()["results"].as_array().unwrap().len(), 1);
        assert!(share >= 0.97, "{share:.3} of {limit}");
        assert_strings_fill(&answer, limit);
    }
}

#[test]
fn a_lone_items_long_string_takes_what_its_inner_lists_leave() {
    let children: Vec<Value> = (0..300).map(|i| json!({"c": text(120, i)})).collect();
    let input = json!({"results": [{"id": "p", "body": text(50_000, 4), "children": children}]});
    for limit in [3_000, 12_000, 32_000] {
        let (answer, share) = fill(&input, limit);
        assert!(share >= 0.97, "{share:.3} of {limit}");
        assert_strings_fill(&answer, limit);
    }
}

/// Ten arrays whose level leaves each its first item only, cut inside: what
/// each is charged at that level is what its cut item weighs, so together
/// they neither overrun the limit nor leave it unused.
#[test]
fn many_arrays_at_their_first_item_share_the_limit() {
    let input: serde_json::Map<String, Value> = (0..10)
        .map(|k| {
            let items: Vec<Value> = (0..3)
                .map(|i| json!({"t": text(100 + 20 * k, i + k), "body": text(2_000, i + k)}))
                .collect();
            (format!("list_{k}"), Value::Array(items))
        })
        .collect();
    let input = Value::Object(input);
    for limit in [3_000, 4_000, 6_000, 8_000, 12_000, 16_000] {
        let (answer, _) = fill(&input, limit);
        for k in 0..10 {
            let kept = answer.data()[format!("list_{k}")].as_array().unwrap().len();
            assert_eq!(kept, 1, "list_{k} at {limit}");
        }
        assert_strings_fill(&answer, limit);
    }
}

/// Forty arrays whose one item already overflows the limit together: the
/// largest are emptied, and the long strings of the items that stay share
/// what is left, so the answer still fills the limit.
#[test]
fn after_arrays_are_emptied_the_strings_left_fill_the_budget() {
    let arrays: serde_json::Map<String, Value> = (0..40)
        .map(|i| {
            let item = json!({"id": i, "pad": "p".repeat(20 + 4 * i), "body": text(5_000, i)});
            (format!("list_{i:02}"), json!([item.clone(), item]))
        })
        .collect();
    let input = Value::Object(arrays);
    for limit in [4_000, 6_000, 9_000] {
        let (answer, share) = fill(&input, limit);
        let emptied = answer
            .trims()
            .iter()
            .filter(|t| t.to == 0 && t.kind == cairn::envelope::TrimKind::List)
            .count();
        assert!(emptied > 0, "some arrays are emptied at {limit}");
        assert!(share >= 0.95, "{share:.3} of {limit}");
        assert_strings_fill(&answer, limit);
    }
}

/// Emptying stops as soon as the rest fits: keeping one more array (the
/// smallest emptied one, at its minimum) would not have fitted.
#[test]
fn no_array_is_emptied_that_the_budget_could_have_kept() {
    let arrays: serde_json::Map<String, Value> = (0..40)
        .map(|i| {
            let fields: serde_json::Map<String, Value> = (0..=i / 4)
                .map(|f| (format!("f{f}"), json!(text(150, f))))
                .collect();
            let item = Value::Object(fields);
            (format!("list_{i:02}"), json!([item.clone(), item]))
        })
        .collect();
    let input = Value::Object(arrays);
    for limit in [3_000, 6_000, 10_000] {
        let (answer, _) = fill(&input, limit);
        let smallest_emptied = (0..40)
            .map(|i| format!("list_{i:02}"))
            .filter(|k| answer.data()[k].as_array().unwrap().is_empty())
            .map(|k| units_of(&input[&k][0].to_string()))
            .min()
            .expect("some arrays are emptied");
        let unused = limit as u64 - answer.size();
        assert!(
            unused < smallest_emptied,
            "{unused} units unused at {limit}, yet an item of {smallest_emptied} was emptied"
        );
    }
}

/// When every array is at its skeleton and the long strings share the rest,
/// a short array that costs no more whole than cut to its first item (with
/// the trim entry the cut writes) stays whole: cutting it would leave less
/// for the strings.
#[test]
fn a_short_array_that_costs_less_whole_than_cut_stays_whole() {
    let rows: Vec<Value> = (0..50)
        .map(|i| json!({"id": i, "text": text(600, i)}))
        .collect();
    let input = json!({
        "note": text(60_000, 3),
        "tags": ["alpha", "beta"],
        "pair": ["x".repeat(25), "y".repeat(25)],
        "rows": rows,
    });
    for limit in [2_000, 8_000] {
        let (answer, _) = fill(&input, limit);
        assert_eq!(answer.data()["tags"], input["tags"], "at {limit}");
        assert_eq!(answer.data()["pair"], input["pair"], "at {limit}");
        assert_eq!(answer.data()["rows"].as_array().unwrap().len(), 1);
        assert_strings_fill(&answer, limit);
    }
}

/// A hub with 300 short rows and two self-loops, and 30 leaves each linked
/// from it: the hub is the top node, kept alone once the graph is cut.
fn self_looped_graph() -> (Vec<Value>, Vec<Value>) {
    let rows: Vec<Value> = (0..300).map(|i| json!({"r": text(40, i)})).collect();
    let mut nodes = vec![json!({"id": "hub", "rows": rows})];
    let mut edges = vec![
        json!({"source": "hub", "target": "hub", "kind": "relates_to"}),
        json!({"source": "hub", "target": "hub", "kind": "blocks"}),
    ];
    for i in 0..30 {
        let id = format!("leaf-{i:02}");
        nodes.push(json!({"id": id, "rows": [{"r": text(300, i)}]}));
        edges.push(json!({"source": "hub", "target": id, "kind": "relates_to"}));
    }
    (nodes, edges)
}

/// A graph cut to its top node, whose self-loops stay with it: the node's
/// own list takes what the loops and the rest leave, and no more.
#[test]
fn a_graphs_top_node_with_self_loops_takes_what_they_leave() {
    let (nodes, edges) = self_looped_graph();
    let row = units_of(&nodes[0]["rows"][0].to_string());
    let input = json!({"nodes": nodes, "edges": edges});
    for limit in [1_500, 3_000, 6_000] {
        let (answer, _) = fill(&input, limit);
        assert_eq!(
            answer.data()["nodes"].as_array().unwrap().len(),
            1,
            "at {limit}"
        );
        assert_eq!(
            answer.data()["edges"].as_array().unwrap().len(),
            2,
            "at {limit}"
        );
        let unused = limit as u64 - answer.size();
        assert!(
            unused <= row + 19 + 8,
            "{unused} units unused at {limit} (row {row})"
        );
    }
}

/// Beside another array of the same object, a graph cut to its self-looped
/// top node shares the water level fairly: charged its self-loops once, its
/// kept nodes and edges weigh no more than the other array's kept items plus
/// one of them (its two trim entries weigh more than the other's one).
#[test]
fn a_self_looped_graph_shares_the_level_with_the_array_beside_it() {
    let (nodes, edges) = self_looped_graph();
    let other: Vec<Value> = (0..300).map(|i| json!({"o": text(40, i + 7)})).collect();
    let item = units_of(&other[0].to_string()) + 1;
    let input = json!({"nodes": nodes, "edges": edges, "other": other});
    for limit in [3_000, 6_000, 12_000] {
        let (answer, _) = fill(&input, limit);
        let data = answer.data();
        assert_eq!(data["nodes"].as_array().unwrap().len(), 1, "at {limit}");
        let graph = units_of(&data["nodes"].to_string()) + units_of(&data["edges"].to_string());
        let beside = units_of(&data["other"].to_string());
        assert!(
            graph <= beside + item,
            "the graph keeps {graph} units, the array beside it {beside} (item {item}) at {limit}"
        );
    }
}
