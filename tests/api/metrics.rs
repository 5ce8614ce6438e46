//! `GET /metrics` after a scripted session on a real socket (REST, MCP over
//! streamable HTTP, the change feed), read by a strict parser of the
//! Prometheus text format (0.0.4). Counters are process-wide, so each check
//! compares two scrapes.
//!
//! Not the `prometheus-parse` crate: its sample regex (`[^}]+`) ends a label
//! set at the first `}`, so it misreads route templates such as
//! `/api/v1/tasks/{id}`, which the format allows in a quoted value.

use std::net::SocketAddr;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};

use crate::socket_helpers::{Options, SocketServer, socket_server, socket_server_on};

async fn server(token: Option<&str>) -> SocketServer {
    socket_server(Options {
        token,
        ..Options::default()
    })
    .await
}

/// One sample line: its metric name (with any `_bucket`/`_sum`/`_count`
/// suffix), labels and value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// A parsed exposition: every sample, and each family's declared type.
struct Scrape {
    samples: Vec<Sample>,
    types: HashMap<String, String>,
}

/// Parses the text format strictly: every line is a comment, blank, or
/// `name{label="value",...} number`; a malformed line fails the test.
fn parse(text: &str) -> Scrape {
    let mut samples = Vec::new();
    let mut types = HashMap::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with("# HELP ") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("# TYPE name kind");
            assert!(
                ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                "{line}"
            );
            types.insert(name.to_owned(), kind.to_owned());
            continue;
        }
        assert!(!line.starts_with('#'), "unknown comment: {line}");
        let name_end = line.find(['{', ' ']).expect("a sample line");
        let name = &line[..name_end];
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "metric name in {line}"
        );
        let mut rest = &line[name_end..];
        let mut labels = BTreeMap::new();
        if let Some(body) = rest.strip_prefix('{') {
            let mut chars = body.char_indices();
            let mut key = String::new();
            loop {
                let (_, c) = chars.next().expect("unterminated label set");
                match c {
                    '}' if key.is_empty() => break,
                    ',' if key.is_empty() => {}
                    '=' => {
                        assert_eq!(chars.next().map(|(_, c)| c), Some('"'), "{line}");
                        let mut value = String::new();
                        loop {
                            match chars.next().expect("unterminated label value").1 {
                                '"' => break,
                                '\\' => match chars.next().expect("an escape").1 {
                                    'n' => value.push('\n'),
                                    c @ ('\\' | '"') => value.push(c),
                                    other => panic!("bad escape \\{other} in {line}"),
                                },
                                c => value.push(c),
                            }
                        }
                        labels.insert(std::mem::take(&mut key), value);
                    }
                    c if c.is_ascii_alphanumeric() || c == '_' => key.push(c),
                    other => panic!("unexpected {other:?} in the labels of {line}"),
                }
            }
            let consumed = chars.next().map_or(body.len(), |(i, _)| i);
            rest = &body[consumed..];
        }
        let value = rest.trim();
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("value of {line}")),
        };
        samples.push(Sample {
            name: name.to_owned(),
            labels,
            value,
        });
    }
    for sample in &samples {
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| sample.name.strip_suffix(s))
            .filter(|f| types.contains_key(*f))
            .unwrap_or(&sample.name);
        assert!(types.contains_key(family), "{} has no # TYPE", sample.name);
    }
    Scrape { samples, types }
}

async fn scrape(addr: SocketAddr) -> Scrape {
    let res = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    parse(&res.text().await.unwrap())
}

/// The sum of the samples `name` whose labels include `labels` (0 when absent).
fn value(scrape: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    scrape
        .samples
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| {
            labels
                .iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.value)
        .sum()
}

fn delta(before: &Scrape, after: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    value(after, name, labels) - value(before, name, labels)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_session_shows_in_the_counters() {
    let server = server(None).await;
    let addr = server.addr;
    let base = format!("http://{addr}");
    let client = reqwest::Client::new();
    let before = scrape(addr).await;

    // REST: two creates, a read by id, a miss, an unknown route.
    let mut id = String::new();
    for title in ["one", "two"] {
        let res = client
            .post(format!("{base}/api/v1/tasks"))
            .json(&json!({"title": title, "description": "d".repeat(3_000)}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 201);
        id = res.json::<Value>().await.unwrap()["data"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
    }
    assert_eq!(
        client
            .get(format!("{base}/api/v1/tasks/{id}"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        client
            .get(format!("{base}/api/v1/tasks/ffffffffff"))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    assert_eq!(
        client
            .get(format!("{base}/api/v1/nope"))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );

    // MCP over streamable HTTP: a list long enough to be trimmed for an agent.
    for i in 0..20 {
        client
            .post(format!("{base}/api/v1/tasks"))
            .json(&json!({"title": format!("bulk {i}"), "description": "x".repeat(3_000)}))
            .send()
            .await
            .unwrap();
    }
    let mcp = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "{base}/mcp"
        )))
        .await
        .unwrap();
    let listed = mcp
        .call_tool(
            CallToolRequestParams::new("task_list")
                .with_arguments(json!({"limit": 50}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let text = &listed.content[0].as_text().unwrap().text;
    let envelope: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        envelope["meta"]["truncated"], true,
        "the agent budget cut the list"
    );

    // The change feed: one stream open while it is read.
    let stream = client
        .get(format!("{base}/api/v1/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let during = scrape(addr).await;
    assert_eq!(
        value(
            &during,
            "cairn_streams_open",
            &[("route", "/api/v1/events")]
        ),
        1.0
    );
    assert_eq!(
        delta(&before, &during, "cairn_mcp_sessions_open", &[]),
        1.0,
        "the MCP session is open while the client is connected"
    );
    drop(stream);
    mcp.cancel().await.unwrap();

    let sessions_before = value(&before, "cairn_mcp_sessions_open", &[]);
    let after = crate::process_helpers::within(Duration::from_secs(5), async || {
        let s = scrape(addr).await;
        let closed = value(&s, "cairn_streams_open", &[("route", "/api/v1/events")]) == 0.0
            && value(&s, "cairn_mcp_sessions_open", &[]) == sessions_before;
        closed.then_some(s)
    })
    .await
    .expect("the stream's and the session's gauges go back down when they close");
    assert_eq!(after.types["cairn_mcp_sessions_open"], "gauge");

    let requests = |route, method, status| {
        delta(
            &before,
            &after,
            "cairn_http_requests_total",
            &[("route", route), ("method", method), ("status", status)],
        )
    };
    assert_eq!(requests("/api/v1/tasks", "POST", "201"), 22.0);
    assert_eq!(requests("/api/v1/tasks/{id}", "GET", "200"), 1.0);
    assert_eq!(requests("/api/v1/tasks/{id}", "GET", "404"), 1.0);
    assert_eq!(requests("fallback", "GET", "404"), 1.0);
    // Route templates only: no raw path is ever a label.
    assert!(
        after
            .samples
            .iter()
            .filter_map(|s| s.labels.get("route"))
            .all(|r| !r.contains(&id) && r != "/api/v1/nope")
    );

    let tools = |tool, surface, code| {
        delta(
            &before,
            &after,
            "cairn_tool_calls_total",
            &[("tool", tool), ("surface", surface), ("code", code)],
        )
    };
    assert_eq!(tools("task_create", "rest", "ok"), 22.0);
    assert_eq!(tools("task_get", "rest", "ok"), 1.0);
    assert_eq!(tools("task_get", "rest", "task_not_found"), 1.0);
    assert_eq!(tools("task_list", "mcp", "ok"), 1.0);
    assert!(
        delta(
            &before,
            &after,
            "cairn_trimmer_cuts_total",
            &[("kind", "list")]
        ) >= 1.0
    );

    // Latency is a real histogram with buckets (not the exporter's default summary).
    assert_eq!(
        after.types["cairn_http_request_duration_seconds"],
        "histogram"
    );
    assert_eq!(after.types["cairn_tool_call_duration_seconds"], "histogram");
    let post = [("route", "/api/v1/tasks"), ("method", "POST")];
    let buckets: Vec<&Sample> = after
        .samples
        .iter()
        .filter(|s| s.name == "cairn_http_request_duration_seconds_bucket")
        .filter(|s| {
            post.iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .collect();
    assert!(buckets.len() >= 10, "{buckets:?}");
    assert!(buckets.iter().any(|b| b.labels["le"] == "+Inf"));
    assert_eq!(
        delta(
            &before,
            &after,
            "cairn_http_request_duration_seconds_count",
            &post
        ),
        22.0
    );
    assert!(
        delta(
            &before,
            &after,
            "cairn_tool_call_duration_seconds_count",
            &[("tool", "task_create")]
        ) >= 22.0
    );

    // Every store call waited for its connection: the writer for each create,
    // a reader for each read.
    assert_pool_waits(
        &before,
        &after,
        "sqlite",
        &[("writer", 22.0), ("readers", 3.0)],
    );

    // Every create was committed, alone or in a group with others.
    assert_eq!(after.types["cairn_store_commit_writes"], "histogram");
    let written = delta(&before, &after, "cairn_store_commit_writes_sum", &[]);
    let commits = delta(&before, &after, "cairn_store_commit_writes_count", &[]);
    assert!(written >= 22.0, "{written} writes committed");
    assert!(commits >= 1.0 && commits <= written, "{commits} commits");
}

/// Pool waits of `backend` are a histogram with sub-millisecond buckets, and
/// each pool named counted at least as many waits as given.
fn assert_pool_waits(before: &Scrape, after: &Scrape, backend: &str, pools: &[(&str, f64)]) {
    assert_eq!(after.types["cairn_store_pool_wait_seconds"], "histogram");
    for &(pool, at_least) in pools {
        let labels = [("backend", backend), ("pool", pool)];
        let waits = delta(
            before,
            after,
            "cairn_store_pool_wait_seconds_count",
            &labels,
        );
        assert!(waits >= at_least, "{backend} {pool}: {waits} waits");
        let les: Vec<&str> = after
            .samples
            .iter()
            .filter(|s| s.name == "cairn_store_pool_wait_seconds_bucket")
            .filter(|s| s.labels["backend"] == backend && s.labels["pool"] == pool)
            .map(|s| s.labels["le"].as_str())
            .collect();
        assert!(les.contains(&"0.00001") && les.contains(&"+Inf"), "{les:?}");
        let inf = [("backend", backend), ("pool", pool), ("le", "+Inf")];
        assert_eq!(
            delta(before, after, "cairn_store_pool_wait_seconds_bucket", &inf),
            waits
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pool_waits_on_postgres_are_measured_too() {
    let server = socket_server_on(crate::tool_helpers::postgres_cairn(), Options::default()).await;
    let base = format!("http://{}", server.addr);
    let client = reqwest::Client::new();
    let before = scrape(server.addr).await;
    for title in ["one", "two", "three"] {
        let res = client
            .post(format!("{base}/api/v1/tasks"))
            .json(&json!({"title": title}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 201);
    }
    let res = client
        .get(format!("{base}/api/v1/tasks"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let after = scrape(server.addr).await;
    assert_pool_waits(&before, &after, "postgres", &[("pool", 4.0)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_metrics_needs_it() {
    let server = server(Some("s3cret")).await;
    let client = reqwest::Client::new();
    let url = format!("http://{}/metrics", server.addr);
    let res = client.get(&url).send().await.unwrap();
    assert_eq!(res.status(), 401);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unauthorized");
    let res = client.get(&url).bearer_auth("s3cret").send().await.unwrap();
    assert_eq!(res.status(), 200);
    let text = res.text().await.unwrap();
    assert!(!text.contains("s3cret"));
    // The refusal itself was counted, before any route.
    assert!(
        text.contains("cairn_http_requests_total{route=\"refused\",method=\"GET\",status=\"401\"}"),
        "{text}"
    );
}
