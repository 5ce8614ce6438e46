//! Graph tools: links across tasks and notes, walks, export and the doctor.

use serde_json::{Value, json};

use crate::tool_helpers::*;

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn link_add_joins_a_task_and_a_note_and_echoes_titles() {
    let t = cairn();
    let task = t.task("Build").await;
    let note = t.note("Design", "").await;
    let link = t
        .ok(
            "link_add",
            json!({"source": task["id"], "target": "design", "kind": "derived_from"}),
        )
        .await;
    assert_eq!(link["source"], task["id"]);
    assert_eq!(link["target"], note["id"]);
    assert_eq!(link["kind"], "derived_from");
    assert_eq!(link["source_title"], "Build");
    assert_eq!(link["target_title"], "Design");
    assert_eq!(link["created"], true);
    assert_eq!(link["id"].as_str().unwrap().len(), 32);
    let again = t
        .ok(
            "link_add",
            json!({"source": task["id"], "target": note["id"], "kind": "derived_from"}),
        )
        .await;
    assert_eq!(again["id"], link["id"]);
    assert_eq!(again["created"], false);
}

#[tokio::test]
async fn link_add_refuses_links_to_self_loops_and_unknown_ends() {
    let t = cairn();
    let task = t.task("A").await;
    let e = t
        .err(
            "link_add",
            json!({"source": task["id"], "target": task["id"], "kind": "blocks"}),
        )
        .await;
    assert_error(&e, "validation", "invalid_input", false);
    assert_eq!(e["details"]["field"], "target");
    let e = t
        .err(
            "link_add",
            json!({"source": task["id"], "target": task["id"], "kind": "links_to"}),
        )
        .await;
    assert_error(&e, "validation", "invalid_input", false);
    assert_eq!(e["details"]["field"], "kind");
    let e = t
        .err(
            "link_add",
            json!({"source": task["id"], "target": "0000000000", "kind": "blocks"}),
        )
        .await;
    assert_error(&e, "not_found", "node_not_found", false);
    assert_eq!(e["details"]["field"], "target");
    let e = t
        .err(
            "link_add",
            json!({"source": "abc", "target": task["id"], "kind": "blocks"}),
        )
        .await;
    assert_error(&e, "validation", "id_prefix_too_short", false);
}

#[tokio::test]
async fn a_depends_on_or_blocks_edge_closing_a_cycle_is_dependency_cycle_and_writes_nothing() {
    let t = cairn();
    let [a, b, c] = [t.task("A").await, t.task("B").await, t.task("C").await];
    let id = |task: &Value| task["id"].as_str().unwrap().to_owned();
    let link = |source: &Value, target: &Value, kind: &str| json!({"source": source["id"], "target": target["id"], "kind": kind});
    // A waits for B; C blocks B, so B waits for C.
    t.ok("link_add", link(&a, &b, "depends_on")).await;
    t.ok("link_add", link(&c, &b, "blocks")).await;
    let links_before = t.ok("graph_export", json!({})).await["edges"].clone();

    // C depending on A would make C wait for A, A for B, B for C.
    let e = t.err("link_add", link(&c, &a, "depends_on")).await;
    assert_error(&e, "conflict", "dependency_cycle", false);
    assert_eq!(e["details"]["cycle"], json!([id(&c), id(&a), id(&b)]));
    // The same wait written as `A blocks C`.
    let e = t.err("link_add", link(&a, &c, "blocks")).await;
    assert_eq!(e["code"], "dependency_cycle");
    assert_eq!(e["details"]["cycle"], json!([id(&c), id(&a), id(&b)]));
    assert_eq!(
        t.ok("graph_export", json!({})).await["edges"],
        links_before,
        "nothing was written"
    );

    // Other kinds order nothing, and the same wait again is the edge there.
    t.ok("link_add", link(&c, &a, "relates_to")).await;
    let again = t.ok("link_add", link(&a, &b, "depends_on")).await;
    assert_eq!(again["created"], false);
    // A second way to the same prerequisite is no cycle.
    t.ok("link_add", link(&a, &c, "depends_on")).await;
}

#[tokio::test]
async fn link_remove_deletes_by_prefix_and_unknown_is_link_not_found() {
    let t = cairn();
    let a = t.task("A").await;
    let b = t.task("B").await;
    let link = t
        .ok(
            "link_add",
            json!({"source": a["id"], "target": b["id"], "kind": "blocks"}),
        )
        .await;
    let removed = t
        .ok(
            "link_remove",
            json!({"id": &link["id"].as_str().unwrap()[..8]}),
        )
        .await;
    assert_eq!(removed["id"], link["id"]);
    assert_eq!(removed["kind"], "blocks");
    let e = t.err("link_remove", json!({"id": link["id"]})).await;
    assert_error(&e, "not_found", "link_not_found", false);
    assert_eq!(e["details"]["id"], link["id"]);
    let e = t.err("link_remove", json!({"id": "abc"})).await;
    assert_error(&e, "validation", "id_prefix_too_short", false);
}

/// a - b - c - d, a chain of tasks.
async fn chain(t: &TestCairn) -> Vec<Value> {
    let mut nodes = Vec::new();
    for name in ["a", "b", "c", "d"] {
        nodes.push(t.task(name).await);
    }
    for pair in nodes.windows(2) {
        t.ok(
            "link_add",
            json!({"source": pair[0]["id"], "target": pair[1]["id"], "kind": "depends_on"}),
        )
        .await;
    }
    nodes
}

#[tokio::test]
async fn graph_neighbours_walks_depth_hops_either_direction() {
    let t = cairn();
    let n = chain(&t).await;
    let one = t.ok("graph_neighbours", json!({"id": n[1]["id"]})).await;
    assert_eq!(one["center"]["id"], n[1]["id"]);
    assert_eq!(one["center"]["kind"], "task");
    assert_eq!(one["center"]["status"], "open");
    let mut got = ids(&one["nodes"]);
    got.sort();
    let mut want = vec![n[0]["id"].clone(), n[1]["id"].clone(), n[2]["id"].clone()]
        .into_iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect::<Vec<_>>();
    want.sort();
    assert_eq!(got, want);
    assert_eq!(one["edges"].as_array().unwrap().len(), 2);
    let three = t
        .ok("graph_neighbours", json!({"id": n[0]["id"], "depth": 3}))
        .await;
    assert_eq!(three["nodes"].as_array().unwrap().len(), 4);
    assert_eq!(three["edges"].as_array().unwrap().len(), 3);
    assert_eq!(three["nodes"][0]["id"], n[0]["id"]);
}

#[tokio::test]
async fn graph_neighbours_includes_edges_among_the_outer_ring() {
    let t = cairn();
    let a = t.task("a").await;
    let b = t.task("b").await;
    let c = t.task("c").await;
    for (s, d) in [(&a, &b), (&a, &c), (&b, &c)] {
        t.ok(
            "link_add",
            json!({"source": s["id"], "target": d["id"], "kind": "relates_to"}),
        )
        .await;
    }
    let one = t.ok("graph_neighbours", json!({"id": a["id"]})).await;
    assert_eq!(one["nodes"].as_array().unwrap().len(), 3);
    assert_eq!(one["edges"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn graph_neighbours_depth_out_of_range_is_invalid_input() {
    let t = cairn();
    let a = t.task("a").await;
    for depth in [0, 4] {
        let e = t
            .err("graph_neighbours", json!({"id": a["id"], "depth": depth}))
            .await;
        assert_error(&e, "validation", "invalid_input", false);
        assert_eq!(e["details"]["field"], "depth");
    }
    let e = t.err("graph_neighbours", json!({"id": "0000000000"})).await;
    assert_error(&e, "not_found", "node_not_found", false);
}

#[tokio::test]
async fn graph_path_finds_the_shortest_chain_in_order() {
    let t = cairn();
    let n = chain(&t).await;
    let path = t
        .ok("graph_path", json!({"from": n[3]["id"], "to": n[0]["id"]}))
        .await;
    assert_eq!(path["found"], true);
    assert_eq!(path["length"], 3);
    let want: Vec<String> = n
        .iter()
        .rev()
        .map(|v| v["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids(&path["nodes"]), want);
    assert_eq!(path["edges"].as_array().unwrap().len(), 3);
    let same = t
        .ok("graph_path", json!({"from": n[0]["id"], "to": n[0]["id"]}))
        .await;
    assert_eq!(same["length"], 0);
    assert_eq!(same["nodes"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn graph_path_between_unconnected_nodes_is_not_found_with_empty_lists() {
    let t = cairn();
    let a = t.task("a").await;
    let b = t.note("b", "").await;
    let path = t
        .ok("graph_path", json!({"from": a["id"], "to": b["id"]}))
        .await;
    assert_eq!(
        path,
        json!({"found": false, "length": 0, "nodes": [], "edges": []})
    );
    let e = t
        .err("graph_path", json!({"from": a["id"], "to": "0000000000"}))
        .await;
    assert_error(&e, "not_found", "node_not_found", false);
    assert_eq!(e["details"]["field"], "to");
}

#[tokio::test]
async fn graph_export_gives_every_node_and_edge_or_a_neighbourhood() {
    let t = cairn();
    let n = chain(&t).await;
    let note = t.note("Loose", "").await;
    let all = t.ok("graph_export", json!({})).await;
    assert_eq!(all["nodes"].as_array().unwrap().len(), 5);
    assert_eq!(all["edges"].as_array().unwrap().len(), 3);
    let loose = all["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == note["id"])
        .unwrap();
    assert_eq!(loose["kind"], "note");
    assert_eq!(loose["slug"], "loose");
    for edge in all["edges"].as_array().unwrap() {
        let keys: Vec<_> = edge.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["id", "source", "target", "kind"]);
    }
    let around = t
        .ok("graph_export", json!({"around": n[0]["id"], "depth": 1}))
        .await;
    assert_eq!(around["nodes"].as_array().unwrap().len(), 2);
    let e = t.err("graph_export", json!({"depth": 2})).await;
    assert_error(&e, "validation", "invalid_input", false);
}

#[tokio::test]
async fn graph_doctor_finds_and_fixes_broken_edges_and_reports_orphans() {
    let t = cairn();
    let a = t.task("a").await;
    let b = t.task("b").await;
    t.task("lonely").await;
    t.ok(
        "link_add",
        json!({"source": a["id"], "target": b["id"], "kind": "blocks"}),
    )
    .await;
    // Break the graph behind the tools' back: a dangling edge, a self loop, a duplicate.
    t.raw_sql(&format!(
        "INSERT INTO links (id, source, target, kind, created_at) VALUES
           ('d0000000000000000000000000000000', '{a}', 'gone0000000000000000000000000000', 'blocks', '{at}'),
           ('s0000000000000000000000000000000', '{a}', '{a}', 'blocks', '{at}'),
           ('u0000000000000000000000000000000', '{a}', '{b}', 'blocks', '{at}');",
        a = a["id"].as_str().unwrap(),
        b = b["id"].as_str().unwrap(),
        at = "2026-01-01T00:00:00.000000Z",
    ));
    let report = t.ok("graph_doctor", json!({})).await;
    assert_eq!(report["healthy"], false);
    assert_eq!(
        ids(&report["dangling"]),
        ["d0000000000000000000000000000000"]
    );
    assert_eq!(
        ids(&report["self_loops"]),
        ["s0000000000000000000000000000000"]
    );
    assert_eq!(
        ids(&report["duplicates"]),
        ["u0000000000000000000000000000000"]
    );
    assert_eq!(report["orphan_count"], 1);
    assert_eq!(report["orphans"][0]["title"], "lonely");
    assert_eq!(report["fixed"], false);
    assert_eq!(report["removed"], 0);
    let fixed = t.ok("graph_doctor", json!({"fix": true})).await;
    assert_eq!(fixed["fixed"], true);
    assert_eq!(fixed["removed"], 3);
    let after = t.ok("graph_doctor", json!({})).await;
    assert_eq!(after["healthy"], true);
    assert_eq!(after["dangling"], json!([]));
    assert_eq!(
        t.ok("graph_export", json!({})).await["edges"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn graph_doctor_reports_a_cycle_of_waits_an_older_store_holds_in_order() {
    let t = cairn();
    let [a, b, c, lead] = [
        t.task("a").await,
        t.task("b").await,
        t.task("c").await,
        t.task("waits for the cycle").await,
    ];
    let id = |task: &Value| task["id"].as_str().unwrap().to_owned();
    t.ok(
        "link_add",
        json!({"source": a["id"], "target": b["id"], "kind": "depends_on"}),
    )
    .await;
    t.ok(
        "link_add",
        json!({"source": lead["id"], "target": a["id"], "kind": "depends_on"}),
    )
    .await;
    // What link_add now refuses, written as a store made before: b waits
    // for c (c blocks b), and c for a.
    t.raw_sql(&format!(
        "INSERT INTO links (id, source, target, kind, created_at) VALUES
           ('c1000000000000000000000000000000', '{c}', '{b}', 'blocks', '{at}'),
           ('c2000000000000000000000000000000', '{c}', '{a}', 'depends_on', '{at}');",
        b = id(&b),
        c = id(&c),
        a = id(&a),
        at = "2026-01-01T00:00:00.000000Z",
    ));
    let report = t.ok("graph_doctor", json!({})).await;
    assert_eq!(report["healthy"], false);
    assert_eq!(report["cycle_count"], 1, "{report:#}");
    assert_eq!(report["cycles_capped"], false);
    let cycle: Vec<String> = serde_json::from_value(report["cycles"][0].clone()).unwrap();
    assert_eq!(
        cycle.len(),
        3,
        "the task waiting for the cycle is not on it"
    );
    // In order, each waiting for the next, from whichever task it starts.
    let start = cycle.iter().position(|x| *x == id(&a)).unwrap();
    let from_a: Vec<&String> = cycle.iter().cycle().skip(start).take(3).collect();
    assert_eq!(from_a, [&id(&a), &id(&b), &id(&c)]);
    let fixed = t.ok("graph_doctor", json!({"fix": true})).await;
    assert_eq!(fixed["removed"], 0, "a cycle is for a person to break");
    assert_eq!(fixed["cycle_count"], 1);
}

#[tokio::test]
async fn a_notes_slug_that_is_also_a_task_id_prefix_names_the_note() {
    let t = cairn();
    t.task_with_id("abcdef00000000000000000000000001", "Task")
        .await;
    let note = t.note("abcdef", "").await;
    let around = t.ok("graph_neighbours", json!({"id": "abcdef"})).await;
    assert_eq!(around["center"]["id"], note["id"]);
    assert_eq!(around["center"]["kind"], "note");
    // One more character is no slug: the prefix names the task.
    let around = t.ok("graph_neighbours", json!({"id": "abcdef0"})).await;
    assert_eq!(around["center"]["kind"], "task");
}

#[tokio::test]
async fn an_exact_task_id_wins_over_a_notes_slug() {
    let t = cairn();
    t.task_with_id("abcdef", "Task").await;
    t.note("abcdef", "").await;
    let around = t.ok("graph_neighbours", json!({"id": "abcdef"})).await;
    assert_eq!(around["center"]["id"], "abcdef");
    assert_eq!(around["center"]["kind"], "task");
}

#[tokio::test]
async fn a_prefix_shared_by_a_task_and_a_note_is_ambiguous_in_id_order() {
    let t = cairn();
    t.task_with_id("abcdef00000000000000000000000002", "The task")
        .await;
    t.note_with_id("abcdef00000000000000000000000001", "The note")
        .await;
    let e = t.err("graph_neighbours", json!({"id": "abcdef"})).await;
    assert_error(&e, "validation", "ambiguous_id_prefix", false);
    assert_eq!(
        e["details"]["candidates"],
        json!([
            {"id": "abcdef00000000000000000000000001", "title": "The note"},
            {"id": "abcdef00000000000000000000000002", "title": "The task"},
        ])
    );
}

#[tokio::test]
async fn a_short_prefix_of_a_node_is_id_prefix_too_short_and_no_match_is_node_not_found() {
    let t = cairn();
    t.task_with_id("abc00000000000000000000000000001", "Task")
        .await;
    let e = t.err("graph_neighbours", json!({"id": "abc"})).await;
    assert_error(&e, "validation", "id_prefix_too_short", false);
    let e = t.err("graph_neighbours", json!({"id": "fffffff"})).await;
    assert_error(&e, "not_found", "node_not_found", false);
    assert_eq!(e["details"]["id"], "fffffff");
}
