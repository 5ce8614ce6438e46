//! The budget trimmer against a plain round trip of the same payload
//! (docs/contract.md, "Budgets", guarantee 8: trimming costs at most 1.5x parse +
//! serialize).
//!
//! Each group holds one payload and measures, from the JSON text:
//! - `parse+serialize`: `serde_json::from_str` then `serde_json::to_vec` (no budget);
//! - `parse+render_agent`: the same parse, then `render` with the agent tier;
//! - `parse+render_none`: the same parse, then `render` with no budget;
//!
//! and, from an already parsed value (cloned outside the timing):
//! - `serialize`: `serde_json::to_vec` alone;
//! - `render_agent`: the trimmer alone.
//!
//! Run: `cargo bench --bench budget` (figures in BENCHMARKS.md).

use std::hint::black_box;
use std::time::{Duration, Instant};

use cairn::envelope::{Envelope, Form, Meta, Tier, render};
use criterion::{BatchSize, Criterion, Throughput, criterion_group};
use serde_json::{Value, json};

fn text(len: usize, seed: usize) -> String {
    let words = [
        "claim", "task", "note", "graph", "agent", "budget", "édition", "search", "link", "hub",
    ];
    let mut out = String::with_capacity(len + 16);
    let mut i = seed;
    while out.len() < len {
        out.push_str(words[i % words.len()]);
        out.push(' ');
        i = i.wrapping_mul(31).wrapping_add(7);
    }
    out
}

/// A search-like answer of rows about 1 KB each, totalling about `bytes`.
fn list_payload(bytes: usize) -> String {
    let rows: Vec<Value> = (0..bytes / 1_000)
        .map(|i| {
            json!({
                "id": format!("{:016x}", i * 2_654_435_761usize),
                "title": text(60, i),
                "status": "open",
                "score": (i % 97) as f64 / 7.0,
                "tags": ["search", "budget", format!("t{}", i % 13)],
                "snippet": text(800, i + 1),
            })
        })
        .collect();
    json!({"results": rows, "total": bytes / 1_000, "next_cursor": null}).to_string()
}

/// A `{nodes, edges}` answer of about `bytes`.
fn graph_payload(bytes: usize) -> String {
    let n = bytes / 600;
    let nodes: Vec<Value> = (0..n)
        .map(|i| json!({"id": format!("n{i}"), "kind": "note", "title": text(40, i), "body": text(300, i + 3)}))
        .collect();
    let edges: Vec<Value> = (0..n * 2)
        .map(|j| {
            json!({
                "id": format!("e{j}"),
                "source": format!("n{}", j / 2),
                "target": format!("n{}", (j * 7919) % n),
                "kind": "links_to",
            })
        })
        .collect();
    json!({"nodes": nodes, "edges": edges}).to_string()
}

fn envelope(data: Value) -> Envelope {
    Envelope::success(data, Meta::new("bench", "search", "req-bench"))
}

fn bench_payload(c: &mut Criterion, name: &str, payload: &str) {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Bytes(payload.len() as u64));

    group.bench_function("parse+serialize", |b| {
        b.iter(|| {
            let value: Value = serde_json::from_str(black_box(payload)).unwrap();
            serde_json::to_vec(&value).unwrap()
        })
    });
    group.bench_function("parse+render_agent", |b| {
        b.iter(|| {
            let value: Value = serde_json::from_str(black_box(payload)).unwrap();
            render(envelope(value), Tier::Agent, Form::Envelope)
        })
    });
    group.bench_function("parse+render_none", |b| {
        b.iter(|| {
            let value: Value = serde_json::from_str(black_box(payload)).unwrap();
            render(envelope(value), Tier::None, Form::Envelope)
        })
    });

    let value: Value = serde_json::from_str(payload).unwrap();
    group.bench_function("serialize", |b| {
        b.iter_batched(
            || value.clone(),
            |v| serde_json::to_vec(&v).unwrap(),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("render_agent", |b| {
        b.iter_batched(
            || value.clone(),
            |v| render(envelope(v), Tier::Agent, Form::Envelope),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn budget(c: &mut Criterion) {
    bench_payload(c, "list_100KB", &list_payload(100_000));
    bench_payload(c, "list_1MB", &list_payload(1_000_000));
    bench_payload(c, "list_10MB", &list_payload(10_000_000));
    bench_payload(c, "graph_2MB", &graph_payload(2_000_000));
}

/// Interleaved rounds of the three round trips, reporting the minimum and median
/// of each: on a machine shared with other work the minimum of interleaved runs
/// is the figure least disturbed by it.
fn paired_ratios() {
    let payloads = [
        ("list_100KB", list_payload(100_000), 200),
        ("list_1MB", list_payload(1_000_000), 60),
        ("list_10MB", list_payload(10_000_000), 15),
        ("graph_2MB", graph_payload(2_000_000), 40),
    ];
    println!(
        "\npaired rounds (min / median per round trip, ratio of minimums to parse+serialize):"
    );
    for (name, payload, rounds) in &payloads {
        let mut times: [Vec<Duration>; 3] = Default::default();
        for _ in 0..*rounds {
            let start = Instant::now();
            let value: Value = serde_json::from_str(black_box(payload)).unwrap();
            black_box(serde_json::to_vec(&value).unwrap());
            drop(value);
            times[0].push(start.elapsed());

            let start = Instant::now();
            let value: Value = serde_json::from_str(black_box(payload)).unwrap();
            black_box(render(envelope(value), Tier::Agent, Form::Envelope));
            times[1].push(start.elapsed());

            let start = Instant::now();
            let value: Value = serde_json::from_str(black_box(payload)).unwrap();
            black_box(render(envelope(value), Tier::None, Form::Envelope));
            times[2].push(start.elapsed());
        }
        let stats: Vec<(Duration, Duration)> = times
            .iter_mut()
            .map(|t| {
                t.sort();
                (t[0], t[t.len() / 2])
            })
            .collect();
        let ratio = |i: usize| stats[i].0.as_secs_f64() / stats[0].0.as_secs_f64();
        println!(
            "{name:<11} parse+serialize {:>9.3?} / {:>9.3?} | parse+render_agent {:>9.3?} / {:>9.3?} ({:.2}x) | parse+render_none {:>9.3?} / {:>9.3?} ({:.2}x)",
            stats[0].0,
            stats[0].1,
            stats[1].0,
            stats[1].1,
            ratio(1),
            stats[2].0,
            stats[2].1,
            ratio(2),
        );
    }
}

criterion_group!(benches, budget);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // Only under `cargo bench` (which passes --bench), not when `cargo test` or
    // nextest runs this target to check that it works.
    if std::env::args().any(|a| a == "--bench") {
        paired_ratios();
    }
}
