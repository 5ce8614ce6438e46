//! Tool latency through `Cairn::call` (decode, blocking pool, store, encode)
//! against a store of 100,000 tasks and 20,000 notes, built once per run in a
//! temp dir through the bulk path. Figures go in BENCHMARKS.md.

use std::hint::black_box;
use std::time::Instant;

use cairn::store::{
    NewTask, NoteDraft, Priority, StoreOptions, Transition, open, open_sqlite_with,
};
use cairn::tools::notes::slugify;
use cairn::tools::{Cairn, Config};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

/// Fixture size under `cargo bench` (`CAIRN_BENCH_TASKS` overrides the task
/// count, notes are a fifth of it); test runs (`cargo nextest run --all-targets`
/// runs each benchmark once) use a small one, so they only check the code works.
fn fixture_size() -> (usize, usize) {
    if std::env::args().any(|a| a == "--bench") {
        let tasks = std::env::var("CAIRN_BENCH_TASKS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(100_000);
        (tasks, tasks / 5)
    } else {
        (1_000, 200)
    }
}

const WORDS: &[&str] = &[
    "agent", "board", "claim", "deploy", "index", "latency", "merge", "note", "parser", "query",
    "release", "schema", "search", "review", "token", "budget", "graph", "link", "cache", "retry",
    "timeout", "lock", "writer", "reader", "pool", "cursor", "page", "envelope", "error", "trace",
    "metric", "config", "module", "surface", "client", "server",
];

/// Deterministic text: a small LCG picks words, and 1 document in 100 mentions "migration".
struct Text(u64);

impl Text {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn words(&mut self, n: usize) -> String {
        let mut out = Vec::with_capacity(n + 1);
        for _ in 0..n {
            out.push(WORDS[self.next() as usize % WORDS.len()]);
        }
        if self.next().is_multiple_of(100) {
            out.push("migration");
        }
        out.join(" ")
    }
}

fn id(kind: u64, i: usize) -> String {
    // Random-looking but reproducible ids (as random as uuid v4 for prefix purposes).
    let mut t = Text(kind * 1_000_003 + i as u64);
    format!(
        "{:016x}{:016x}",
        t.next() ^ (t.next() << 31),
        t.next() ^ (t.next() << 31)
    )
}

/// The store under test: a fresh SQLite file, or the PostgreSQL database
/// named by `CAIRN_BENCH_PG` (empty, or filled by an earlier run).
fn fixture() -> (tempfile::TempDir, Cairn, Vec<String>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = match std::env::var("CAIRN_BENCH_PG") {
        Ok(url) => open(&url, &StoreOptions::default()).expect("store"),
        Err(_) => {
            open_sqlite_with(&dir.path().join("bench.db"), &StoreOptions::default()).expect("store")
        }
    };
    let mut text = Text(42);
    let started = Instant::now();
    let (task_count, note_count) = fixture_size();
    let tasks: Vec<NewTask> = (0..task_count)
        .map(|i| NewTask {
            id: id(1, i),
            title: format!("{} {i}", text.words(5)),
            description: text.words(40),
            tags: vec![WORDS[i % 7].to_owned()],
            priority: Priority::Normal,
        })
        .collect();
    let notes: Vec<NoteDraft> = (0..note_count)
        .map(|i| {
            let title = format!("{} note {i}", text.words(4));
            NoteDraft {
                id: id(2, i),
                slug: slugify(&title),
                title,
                content: text.words(120),
                tags: None,
                source_url: None,
                wiki_links: Vec::new(),
            }
        })
        .collect();
    // A PostgreSQL database this fixture filled before is measured as it is
    // (e.g. after `VACUUM ANALYZE`, or to compare two builds on one database).
    if store.counts().expect("counts").tasks >= task_count as u64 {
        eprintln!("fixture: reusing the {task_count} tasks already in the database");
        let ids = tasks.iter().step_by(97).map(|t| t.id.clone()).collect();
        return (dir, Cairn::new(store, Config::default()), ids);
    }
    store
        .bulk_load(
            &tasks,
            &notes,
            &cairn::store::Timestamp::parse("2026-11-30T00:00:00.000000Z").unwrap(),
        )
        .expect("bulk load");
    // All four board columns populated: 20% done, 10% cancelled, 2% claimed
    // (until 2099), the rest open; each a write of its own, as in use.
    let later = &cairn::store::Timestamp::parse("2026-11-30T01:00:00.000000Z").unwrap();
    for (i, task) in tasks.iter().enumerate() {
        match i % 50 {
            0..10 => store
                .task_transition(&task.id, Transition::Complete, None, None, later)
                .map(drop),
            10..15 => store
                .task_transition(&task.id, Transition::Cancel, None, None, later)
                .map(drop),
            15 => store
                .task_claim(
                    &task.id,
                    "bench-agent",
                    &cairn::store::Timestamp::parse("2099-01-01T00:00:00.000000Z").unwrap(),
                    None,
                    later,
                )
                .map(drop),
            _ => Ok(()),
        }
        .expect("column fixture");
    }
    eprintln!(
        "fixture: {task_count} tasks (done, cancelled, claimed, open) and {note_count} notes loaded in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let ids = tasks.iter().step_by(97).map(|t| t.id.clone()).collect();
    (dir, Cairn::new(store, Config::default()), ids)
}

fn tools(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (_dir, cairn, ids) = fixture();
    let call = |tool: &str, args: serde_json::Value| {
        let envelope = runtime.block_on(cairn.call(tool, args, "bench"));
        assert!(envelope.is_ok(), "{tool} failed: {:?}", envelope.outcome);
        envelope
    };

    let mut i = 0;
    c.bench_function("task_get (full id)", |b| {
        b.iter(|| {
            i = (i + 1) % ids.len();
            black_box(call("task_get", json!({"id": ids[i]})))
        })
    });
    c.bench_function("task_get (8-char prefix)", |b| {
        b.iter(|| {
            i = (i + 1) % ids.len();
            black_box(call("task_get", json!({"id": &ids[i][..8]})))
        })
    });
    c.bench_function("task_create", |b| {
        b.iter(|| black_box(call("task_create", json!({"title": "bench task", "description": "created by the benchmark", "tags": ["bench"]}))))
    });
    c.bench_function("task_update (title)", |b| {
        b.iter(|| {
            i = (i + 1) % ids.len();
            black_box(call(
                "task_update",
                json!({"id": ids[i], "title": format!("renamed {i}")}),
            ))
        })
    });
    // A note rewritten with two wiki-links to other notes: its references
    // and `links_to` edges are rewritten with it.
    let title_of = |i: usize| match call("note_read", json!({"id": id(2, i)})).outcome {
        Ok(note) => note["title"].as_str().unwrap_or_default().to_owned(),
        Err(e) => panic!("note_read failed: {e:?}"),
    };
    let (first, second) = (title_of(150), title_of(151));
    let mut j = 0;
    c.bench_function("note_write (rewrite, two wiki-links)", |b| {
        b.iter(|| {
            j = (j + 1) % 100;
            black_box(call(
                "note_write",
                json!({
                    "id": id(2, j),
                    "title": format!("bench note {j}"),
                    "content": format!("see [[{first}]] and [[{second}]], round {i}"),
                }),
            ))
        })
    });
    c.bench_function("search (rare word, ~1% of docs, limit 20)", |b| {
        b.iter(|| black_box(call("search", json!({"q": "migration", "limit": 20}))))
    });
    c.bench_function("search (two common words, limit 20)", |b| {
        b.iter(|| black_box(call("search", json!({"q": "parser schema", "limit": 20}))))
    });
    c.bench_function("task_list (open, first page of 50)", |b| {
        b.iter(|| black_box(call("task_list", json!({"status": "open"}))))
    });
    c.bench_function("task_board (4 columns of 50)", |b| {
        b.iter(|| black_box(call("task_board", json!({}))))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).measurement_time(std::time::Duration::from_secs(5));
    targets = tools
}
criterion_main!(benches);
