//! Answers cost what they return: the board, the first list page and a
//! search in one project of a hub holding 100 projects of 1,000 tasks each,
//! beside the same calls on a store that holds only that project's tasks
//! (the baseline, in the same run). Figures go in BENCHMARKS.md.

use std::hint::black_box;

use cairn::store::{NewTask, Priority, StoreOptions, Timestamp, open_sqlite_with};
use cairn::tools::projects::{self, ProjectNew};
use cairn::tools::{Cairn, Config};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

/// Projects and tasks per project under `cargo bench`; a run of the tests
/// (`cargo nextest run --all-targets` runs each benchmark once) uses a few,
/// so it only checks the code works.
fn fixture_size() -> (usize, usize) {
    if std::env::args().any(|a| a == "--bench") {
        (100, 1_000)
    } else {
        (3, 50)
    }
}

const WORDS: &[&str] = &[
    "agent", "board", "claim", "deploy", "index", "latency", "merge", "note", "parser", "query",
    "release", "schema", "search", "review", "token", "budget", "graph", "link", "cache", "retry",
];

/// The same `count` tasks for every project (ids differ by project): one
/// in 100 mentions "migration", the word searched for.
fn tasks(project: usize, count: usize) -> Vec<NewTask> {
    (0..count)
        .map(|i| {
            let words: Vec<&str> = (0..6)
                .map(|w| WORDS[(i * 7 + w * 3) % WORDS.len()])
                .collect();
            let rare = if i % 100 == 0 { " migration" } else { "" };
            NewTask {
                id: format!("{project:08x}{i:024x}"),
                title: format!("{}{rare} {i}", words.join(" ")),
                description: words.join(" "),
                tags: vec![WORDS[i % 7].to_owned()],
                priority: Priority::Normal,
            }
        })
        .collect()
}

fn load(cairn: &Cairn, tasks: &[NewTask]) {
    let at = Timestamp::parse("2026-12-01T00:00:00.000000Z").unwrap();
    cairn.store().bulk_load(tasks, &[], &at).expect("bulk load");
}

/// A hub of `projects` projects (the measured one is `p0`), and a store
/// holding only `p0`'s tasks.
fn fixture(dir: &std::path::Path) -> (Cairn, Cairn) {
    let (projects, per_project) = fixture_size();
    let options = StoreOptions::default();
    let hub = Cairn::new(
        open_sqlite_with(&dir.join("hub.db"), &options).expect("hub"),
        Config::default(),
    );
    let now = Timestamp::parse("2026-12-01T00:00:00.000000Z").unwrap();
    let mut measured = None;
    for p in 0..projects {
        let key = format!("p{p}");
        let new = ProjectNew {
            key: key.clone(),
            name: None,
        };
        projects::create(hub.projects(), new, &now).expect("project");
        let project = hub.in_project_blocking(&key).expect("project opens");
        load(&project, &tasks(p, per_project));
        if p == 0 {
            measured = Some(project);
        }
    }
    let alone = Cairn::new(
        open_sqlite_with(&dir.join("alone.db"), &options).expect("alone"),
        Config::default(),
    );
    load(&alone, &tasks(0, per_project));
    (measured.expect("p0"), alone)
}

fn projects(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let (in_hub, alone) = fixture(dir.path());
    let (projects, per_project) = fixture_size();
    let calls = [
        ("task_board", json!({})),
        ("task_list", json!({"limit": 50})),
        ("search", json!({"q": "migration", "limit": 20})),
    ];
    for (tool, args) in calls {
        let mut group = c.benchmark_group(format!("projects/{tool}"));
        for (name, cairn) in [
            (
                format!("1 of {projects} projects of {per_project} tasks"),
                &in_hub,
            ),
            (format!("a store of {per_project} tasks alone"), &alone),
        ] {
            group.bench_function(name, |b| {
                b.iter(|| {
                    let envelope = runtime.block_on(cairn.call(tool, args.clone(), "bench"));
                    assert!(envelope.is_ok(), "{tool}: {:?}", envelope.outcome);
                    black_box(envelope)
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, projects);
criterion_main!(benches);
