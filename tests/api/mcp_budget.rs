//! The agent budget on the MCP surface: a listing larger than 32,000 size
//! units arrives cut to fit, marked, and coherent; the same listing over REST
//! (browser tier) arrives whole.

use std::collections::HashSet;

use cairn::envelope::{Form, Tier, estimate_tokens, new_request_id, render};
use cairn::store::LinkKind;
use cairn::tools::{Cairn, Config};
use serde_json::{Value, json};

use super::mcp::{Transport, connect_to, envelope_of, fresh_cairn, text_of};

const AGENT_LIMIT: u64 = 32_000;
const STAMP: &str = "2026-01-01T00:00:00.000000Z";

/// docs/contract.md, "Budgets": max(chars, 4 * tokens_estimated) of the emitted text.
fn size(text: &str) -> u64 {
    (text.chars().count() as u64).max(4 * estimate_tokens(text))
}

fn seed_tasks(cairn: &Cairn, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let task = cairn::store::NewTask {
                id: cairn::tools::common::new_id(),
                title: format!("Budget task {i:04}: check the agent tier cuts this listing"),
                description: "Seeded by the MCP budget test.".to_owned(),
                tags: vec!["budget".to_owned()],
                priority: Default::default(),
            };
            cairn
                .store()
                .task_create(&task, &cairn::store::Timestamp::parse(STAMP).unwrap())
                .expect("seed task")
                .id
        })
        .collect()
}

/// The envelope REST would send for the same call (browser tier, `{data, meta}`).
async fn over_rest(cairn: &Cairn, tool: &str, args: Value) -> Value {
    let envelope = cairn.call(tool, args, &new_request_id()).await;
    let tier = match &envelope.outcome {
        Ok(data) => Tier::browser_for(data),
        Err(_) => Tier::None,
    };
    serde_json::from_str(&render(envelope, tier, Form::Rest)).expect("REST body is JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_task_listing_is_cut_to_the_agent_budget_over_mcp_and_whole_over_rest() {
    let (cairn, dir) = fresh_cairn(Config::default());
    seed_tasks(&cairn, 3000);
    let args = json!({"limit": 500});

    let rest = over_rest(&cairn, "task_list", args.clone()).await;
    let all = rest["data"]["items"].as_array().expect("items");
    assert_eq!(all.len(), 500, "REST answers the whole page");
    // Counting stops at TOTAL_CAP (see tool_totals.rs).
    assert_eq!(rest["data"]["total"], 1000);
    assert_eq!(rest["data"]["total_is_lower_bound"], true);
    assert_eq!(rest["meta"]["truncated"], false);
    assert_eq!(rest["meta"]["trimmed"], json!([]));

    let h = connect_to(Transport::Duplex, cairn, dir).await;
    let result = h.call("task_list", args).await;
    let text = text_of(&result);
    assert!(
        size(text) <= AGENT_LIMIT,
        "size {} over the agent tier",
        size(text)
    );
    let envelope = envelope_of(&result);
    assert_eq!(envelope["ok"], true);
    assert_eq!(result.structured_content.as_ref(), Some(&envelope));
    let meta = &envelope["meta"];
    assert_eq!(meta["tokens_estimated"], json!(estimate_tokens(text)));
    assert_eq!(meta["truncated"], true);
    let kept = envelope["data"]["items"].as_array().expect("items");
    assert!(!kept.is_empty() && kept.len() < 500);
    let cut = meta["trimmed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == "/items")
        .expect("a trimmed entry for /items");
    assert_eq!(cut["kind"], "list");
    assert_eq!(cut["from"], 500, "`from` is what the tool returned");
    assert_eq!(cut["to"], kept.len());
    assert_eq!(envelope["data"]["total"], 1000, "numbers are never altered");
    let kept_ids: Vec<&Value> = kept.iter().map(|t| &t["id"]).collect();
    let first_ids: Vec<&Value> = all[..kept.len()].iter().map(|t| &t["id"]).collect();
    assert_eq!(kept_ids, first_ids, "kept items are a prefix, in order");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graph_export_over_the_agent_budget_is_cut_coherently_over_mcp() {
    let (cairn, dir) = fresh_cairn(Config::default());
    let ids = seed_tasks(&cairn, 600);
    // A hub-and-ring graph: node i links to i+1 and every 10th node to the hub.
    for (i, id) in ids.iter().enumerate() {
        let next = &ids[(i + 1) % ids.len()];
        cairn
            .store()
            .link_add(
                id,
                next,
                LinkKind::RelatesTo,
                &cairn::store::Timestamp::parse(STAMP).unwrap(),
            )
            .expect("ring edge");
        if i % 10 == 0 && i > 0 {
            cairn
                .store()
                .link_add(
                    id,
                    &ids[0],
                    LinkKind::DependsOn,
                    &cairn::store::Timestamp::parse(STAMP).unwrap(),
                )
                .expect("hub edge");
        }
    }
    let whole = over_rest(&cairn, "graph_export", json!({})).await;
    let node_count = whole["data"]["nodes"].as_array().unwrap().len();
    let edge_count = whole["data"]["edges"].as_array().unwrap().len();
    assert_eq!(node_count, 600);
    assert_eq!(
        whole["meta"]["truncated"], false,
        "under the REST graph safety net"
    );

    let h = connect_to(Transport::Http, cairn, dir).await;
    let result = h.call("graph_export", json!({})).await;
    let text = text_of(&result);
    assert!(
        size(text) <= AGENT_LIMIT,
        "size {} over the agent tier",
        size(text)
    );
    let envelope = envelope_of(&result);
    assert_eq!(envelope["meta"]["truncated"], true);
    let nodes = envelope["data"]["nodes"].as_array().unwrap();
    let edges = envelope["data"]["edges"].as_array().unwrap();
    assert!(!nodes.is_empty() && nodes.len() < node_count);
    assert!(edges.len() < edge_count);
    let kept: HashSet<&str> = nodes.iter().map(|n| n["id"].as_str().unwrap()).collect();
    for edge in edges {
        for end in ["source", "target"] {
            let id = edge[end].as_str().unwrap();
            assert!(
                kept.contains(id),
                "edge {} points at dropped node {id}",
                edge["id"]
            );
        }
    }
    assert!(
        kept.contains(ids[0].as_str()),
        "the hub has the highest degree"
    );
    let trimmed = envelope["meta"]["trimmed"].as_array().unwrap();
    let cut = |path: &str| {
        trimmed
            .iter()
            .find(|t| t["path"] == path)
            .unwrap_or_else(|| panic!("a trimmed entry for {path}: {trimmed:?}"))
            .clone()
    };
    assert_eq!(
        cut("/nodes"),
        json!({"path": "/nodes", "kind": "subgraph", "from": node_count, "to": nodes.len()})
    );
    assert_eq!(cut("/edges")["from"], edge_count);
    assert_eq!(cut("/edges")["to"], edges.len());
}
