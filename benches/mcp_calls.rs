//! MCP tool calls per second, with the rmcp client: over stdio against the
//! release `cairn mcp` binary, and over streamable HTTP against `http_service`
//! mounted in an axum app on 127.0.0.1 (built with the same release profile).
//!
//! Calls `task_get` on a task it creates (or `health` when the registry has no
//! task tools yet). Sequential calls measure latency; a batch of concurrent
//! calls measures throughput. Bounded in count; prints a Markdown table.
//!
//! Run: `cargo bench --bench mcp_calls` (env `CAIRN_BENCH_CALLS` sets the count).
//!
//! Instructions instead of time (stable on a loaded machine): with
//! `CAIRN_BENCH_STDIO_WRAPPER` set, the stdio server runs under that command
//! and only its warm-up and sequential calls are made, e.g.
//! `CAIRN_BENCH_STDIO_WRAPPER='valgrind --tool=callgrind --callgrind-out-file=cg.out'`;
//! two runs with different `CAIRN_BENCH_CALLS` give the instructions of one
//! call as the difference of their totals over the difference of their
//! calls (1.1 times `CAIRN_BENCH_CALLS`, warm-up included).

use std::time::{Duration, Instant};

use cairn::envelope::{Form, Tier, render};
use cairn::tools::{Cairn, Config, registry};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value, json};

const CONCURRENCY: usize = 8;

type Client = RunningService<RoleClient, ()>;

fn main() {
    // `cargo bench` passes `--bench`; test runners that list or run every
    // target (`cargo test --all-targets`, `nextest --list`) do not: do nothing.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let calls: usize = std::env::var("CAIRN_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        println!("| transport | tool | mode | calls | calls/s | p50 ms | p99 ms |");
        println!("|---|---|---|---|---|---|---|");

        let stdio_db = dir.path().join("stdio.db");
        let wrapper = std::env::var("CAIRN_BENCH_STDIO_WRAPPER").ok();
        let mut words = wrapper.iter().flat_map(|w| w.split_whitespace());
        let mut command = match words.next() {
            Some(program) => {
                let mut command = tokio::process::Command::new(program);
                command.args(words).arg(env!("CARGO_BIN_EXE_cairn"));
                command
            }
            None => tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn")),
        };
        command
            .arg("--db")
            .arg(&stdio_db)
            .arg("mcp")
            .env("CAIRN_LOG", "warn");
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn cairn mcp");
        let client = ().serve(transport).await.expect("stdio client");
        if wrapper.is_some() {
            measure_sequential("stdio", &client, calls).await;
            let _ = client.cancel().await;
            return;
        }
        measure("stdio", &client, calls).await;
        let _ = client.cancel().await;

        let store = cairn::store::open_sqlite(&dir.path().join("http.db")).expect("store");
        let cairn = Cairn::new(store, Config::default());
        baseline(&cairn, calls).await;
        let app = axum::Router::new().nest_service("/mcp", cairn::mcp::http_service(cairn));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
        let client = ().serve(transport).await.expect("HTTP client");
        measure("streamable HTTP", &client, calls).await;
        let _ = client.cancel().await;
        server.abort();
    });
}

/// The same call without a protocol: `Cairn::call` and the agent-tier render.
async fn baseline(cairn: &Cairn, calls: usize) {
    let created = cairn
        .call("task_create", json!({"title": "bench"}), "bench")
        .await;
    let (tool, args) = match &created.outcome {
        Ok(task) if registry::find("task_get").is_some() => ("task_get", json!({"id": task["id"]})),
        _ => ("health", json!({})),
    };
    let mut latencies = Vec::with_capacity(calls);
    let started = Instant::now();
    for _ in 0..calls {
        let t = Instant::now();
        let envelope = cairn.call(tool, args.clone(), "bench").await;
        assert!(envelope.is_ok());
        let text = render(envelope, Tier::Agent, Form::Envelope);
        assert!(!text.is_empty());
        latencies.push(t.elapsed());
    }
    report(
        "none (baseline: `Cairn::call` + render)",
        tool,
        "sequential",
        calls,
        started.elapsed(),
        &mut latencies,
    );
}

/// The call to repeat: `task_get` of a fresh task, else `health`.
async fn target(client: &Client) -> (&'static str, Map<String, Value>) {
    if registry::find("task_get").is_some() && registry::find("task_create").is_some() {
        let created = call(client, "task_create", json!({"title": "bench"})).await;
        let id = created["data"]["id"]
            .as_str()
            .or_else(|| created["data"]["task"]["id"].as_str())
            .expect("task_create answers the id")
            .to_owned();
        let args = json!({ "id": id });
        return ("task_get", args.as_object().unwrap().clone());
    }
    ("health", Map::new())
}

async fn call(client: &Client, tool: &str, args: Value) -> Value {
    let params = CallToolRequestParams::new(tool.to_owned())
        .with_arguments(args.as_object().cloned().unwrap_or_default());
    let result = client.call_tool(params).await.expect("tools/call");
    let text = &result.content[0].as_text().expect("text").text;
    let envelope: Value = serde_json::from_str(text).expect("envelope");
    assert_eq!(envelope["ok"], true, "{tool}: {envelope}");
    envelope
}

/// Warm-up and sequential calls; returns what the concurrent calls repeat.
async fn measure_sequential(
    transport: &str,
    client: &Client,
    calls: usize,
) -> (&'static str, CallToolRequestParams) {
    let (tool, args) = target(client).await;
    let params = CallToolRequestParams::new(tool).with_arguments(args);
    for _ in 0..calls / 10 {
        client.call_tool(params.clone()).await.expect("warm-up");
    }

    let mut latencies = Vec::with_capacity(calls);
    let started = Instant::now();
    for _ in 0..calls {
        let t = Instant::now();
        let result = client.call_tool(params.clone()).await.expect("call");
        assert_eq!(result.is_error, Some(false));
        latencies.push(t.elapsed());
    }
    report(
        transport,
        tool,
        "sequential",
        calls,
        started.elapsed(),
        &mut latencies,
    );
    (tool, params)
}

async fn measure(transport: &str, client: &Client, calls: usize) {
    let (tool, params) = measure_sequential(transport, client, calls).await;
    let mut latencies = Vec::with_capacity(calls);
    let started = Instant::now();
    let per_task = calls / CONCURRENCY;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..CONCURRENCY {
        let peer = client.peer().clone();
        let params = params.clone();
        tasks.spawn(async move {
            let mut own = Vec::with_capacity(per_task);
            for _ in 0..per_task {
                let t = Instant::now();
                let result = peer.call_tool(params.clone()).await.expect("call");
                assert_eq!(result.is_error, Some(false));
                own.push(t.elapsed());
            }
            own
        });
    }
    while let Some(own) = tasks.join_next().await {
        latencies.extend(own.expect("task"));
    }
    let mode = format!("{CONCURRENCY} concurrent");
    let total = per_task * CONCURRENCY;
    report(
        transport,
        tool,
        &mode,
        total,
        started.elapsed(),
        &mut latencies,
    );
}

fn report(
    transport: &str,
    tool: &str,
    mode: &str,
    calls: usize,
    elapsed: Duration,
    latencies: &mut [Duration],
) {
    latencies.sort();
    let pct = |p: f64| {
        let i = ((latencies.len() as f64 - 1.0) * p).round() as usize;
        latencies[i].as_secs_f64() * 1000.0
    };
    println!(
        "| {transport} | `{tool}` | {mode} | {calls} | {:.0} | {:.3} | {:.3} |",
        calls as f64 / elapsed.as_secs_f64(),
        pct(0.50),
        pct(0.99)
    );
}
