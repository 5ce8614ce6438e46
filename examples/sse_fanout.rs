//! Change-feed fan-out benchmark: N server-sent-event clients on one `cairn
//! serve`, W task writes, and how long each write takes to reach each client
//! (from the moment its POST was sent to the moment a client parsed its
//! event), with the server's resident memory. The same writes are first made
//! with no stream open, as the same-run baseline for write throughput.
//!
//!     cargo build --release --bin cairn --example sse_fanout
//!     target/release/examples/sse_fanout target/release/cairn 500 1000
//!
//! Prints a Markdown table for BENCHMARKS.md.

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Server {
    child: Child,
    base: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(cairn: &str, port: u16) -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let child = Command::new(cairn)
        .args(["serve", "--db"])
        .arg(dir.path().join("bench.db"))
        .args(["--bind", &format!("127.0.0.1:{port}"), "--web-dir"])
        .arg(dir.path().join("no-spa"))
        .env("CAIRN_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .expect("cairn serve starts");
    Server {
        child,
        base: format!("http://127.0.0.1:{port}"),
        _dir: dir,
    }
}

/// A `/proc/PID/status` field in KiB.
fn proc_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

async fn wait_ready(client: &reqwest::Client, base: &str) {
    for _ in 0..200 {
        if client
            .get(format!("{base}/api/v1/health"))
            .send()
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("cairn did not start");
}

/// Makes `writes` tasks one after another; the send time of each, by title.
async fn write_all(
    client: &reqwest::Client,
    base: &str,
    writes: usize,
    sent: &Mutex<HashMap<String, Instant>>,
) -> Duration {
    let started = Instant::now();
    for i in 0..writes {
        let title = format!("w{i}");
        sent.lock().unwrap().insert(title.clone(), Instant::now());
        let res = client
            .post(format!("{base}/api/v1/tasks"))
            .json(&json!({"title": title}))
            .send()
            .await
            .expect("write");
        assert_eq!(res.status(), 201);
    }
    started.elapsed()
}

/// Reads one stream until `writes` task events arrived; the latency of each.
async fn listen(
    mut response: reqwest::Response,
    writes: usize,
    sent: Arc<Mutex<HashMap<String, Instant>>>,
) -> Vec<Duration> {
    let mut buffer = String::new();
    let mut latencies = Vec::with_capacity(writes);
    while latencies.len() < writes {
        let Ok(Some(chunk)) = response.chunk().await else {
            break;
        };
        let arrived = Instant::now();
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let Some(data) = block.lines().find_map(|l| l.strip_prefix("data:")) else {
                continue;
            };
            let event: Value = serde_json::from_str(data.trim()).unwrap_or(Value::Null);
            if let Some(title) = event["entity"]["title"].as_str()
                && let Some(at) = sent.lock().unwrap().get(title)
            {
                latencies.push(arrived.duration_since(*at));
            }
        }
    }
    latencies
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at].as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cairn = args
        .get(1)
        .expect("usage: sse_fanout CAIRN_BINARY [CLIENTS] [WRITES]");
    let clients: usize = args.get(2).map_or(500, |a| a.parse().expect("clients"));
    let writes: usize = args.get(3).map_or(1_000, |a| a.parse().expect("writes"));
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(clients + 8)
        .build()
        .expect("client");

    // Baseline: the same writes with no stream open.
    let baseline = start(cairn, 8831);
    wait_ready(&http, &baseline.base).await;
    let idle_rss = proc_kib(baseline.child.id(), "VmRSS:");
    let unused = Mutex::new(HashMap::new());
    let quiet = write_all(&http, &baseline.base, writes, &unused).await;
    drop(baseline);

    let server = start(cairn, 8832);
    wait_ready(&http, &server.base).await;
    let sent = Arc::new(Mutex::new(HashMap::new()));
    let mut readers = Vec::with_capacity(clients);
    for _ in 0..clients {
        let response = http
            .get(format!("{}/api/v1/events", server.base))
            .header("accept", "text/event-stream")
            .send()
            .await
            .expect("stream opens");
        readers.push(tokio::spawn(listen(response, writes, sent.clone())));
    }
    let connected_rss = proc_kib(server.child.id(), "VmRSS:");
    let loud = write_all(&http, &server.base, writes, &sent).await;
    let mut latencies = Vec::with_capacity(clients * writes);
    for reader in readers {
        latencies.extend(reader.await.expect("reader"));
    }
    let peak_rss = proc_kib(server.child.id(), "VmHWM:");
    latencies.sort();

    println!("| measurement | value |");
    println!("|---|---|");
    println!(
        "| {writes} writes, no stream open (baseline) | {:.0} writes/s |",
        writes as f64 / quiet.as_secs_f64()
    );
    println!(
        "| {writes} writes, {clients} streams open | {:.0} writes/s |",
        writes as f64 / loud.as_secs_f64()
    );
    println!(
        "| events delivered | {} of {} |",
        latencies.len(),
        clients * writes
    );
    println!(
        "| delivery latency p50 / p99 / max | {:.1} ms / {:.1} ms / {:.1} ms |",
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        percentile(&latencies, 1.0)
    );
    println!(
        "| server RSS: idle / {clients} streams connected / peak | {:.1} / {:.1} / {:.1} MiB |",
        idle_rss as f64 / 1024.0,
        connected_rss as f64 / 1024.0,
        peak_rss as f64 / 1024.0
    );
}
