//! `cairn dump` and `cairn restore`: everything a store holds, as JSON Lines,
//! moved between SQLite and PostgreSQL without losing an id, a version, a
//! timestamp, a claim or a wiki-link; two dumps of the same data are
//! byte-identical; a restore never lands on data it would mix with.

use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cairn::store::transfer::{Record, Snapshot};
use cairn::store::{NewTask, NoteDraft, Store};
use serde_json::Value;

use crate::cli::{Cli, Run};
use crate::pg_helpers::{TestSchema, scalar};
use crate::process_helpers::cairn_command;

fn cairn(db: &str, args: &[&str]) -> Output {
    cairn_command()
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("cairn runs")
}

/// `cairn dump` of `db` to stdout: the dump, with its envelope on stderr.
fn dump(db: &str) -> String {
    let output = cairn(db, &["dump"]);
    let envelope: Value = serde_json::from_slice(&output.stderr).expect("the envelope on stderr");
    assert_eq!(envelope["ok"], true, "{envelope}");
    assert_eq!(output.status.code(), Some(0));
    String::from_utf8(output.stdout).expect("UTF-8 dump")
}

/// `cairn restore` of `file` into `db`.
fn restore(db: &str, file: &std::path::Path, extra: &[&str]) -> Run {
    let mut args = vec!["restore", file.to_str().unwrap()];
    args.extend(extra);
    Run(cairn(db, &args))
}

/// A store with every kind of record: live, expired and no claims, each
/// status, notes with resolved and unresolved wiki-links, a source, tags,
/// non-ASCII text, and links of several kinds.
fn seed(cli: &Cli) {
    let id = |data: Value| data["id"].as_str().unwrap().to_owned();
    let a = id(cli.ok(&[
        "task_create",
        "--title",
        "Ship the release",
        "--tags",
        "ops,rel",
    ]));
    let b = id(cli.ok(&[
        "task_create",
        "--title",
        "Écrire les notes — 漢字",
        "--priority",
        "high",
    ]));
    let c = id(cli.ok(&["task_create", "--title", "Cancelled work"]));
    cli.ok(&["task_claim", &a, "--agent", "ann", "--ttl_minutes", "120"]);
    cli.ok(&[
        "task_update",
        &b,
        "--description",
        "Twice\nedited",
        "--expected_version",
        "1",
    ]);
    cli.ok(&["task_complete", &b]);
    cli.ok(&["task_cancel", &c]);
    let runbook = id(cli.ok(&[
        "note_write",
        "--title",
        "Runbook",
        "--content",
        "See [[Release Plan]] and [[Nowhere]].",
        "--tags",
        "ops",
        "--source_url",
        "https://example.com/runbook",
    ]));
    let plan = id(cli.ok(&[
        "note_write",
        "--title",
        "Release Plan",
        "--content",
        "Back to [[Runbook]].",
    ]));
    cli.ok(&[
        "link_add",
        "--source",
        &a,
        "--target",
        &plan,
        "--kind",
        "depends_on",
    ]);
    cli.ok(&[
        "link_add",
        "--source",
        &runbook,
        "--target",
        &c,
        "--kind",
        "relates_to",
    ]);
    // An expired claim stays in the dump as stored.
    let store = cairn::store::open_sqlite(&cli.db()).unwrap();
    store
        .task_claim(
            &c,
            "old",
            &cairn::store::Timestamp::parse("2020-01-01T00:00:00.000000Z").unwrap(),
            None,
            &cairn::store::Timestamp::parse("2019-12-31T00:00:00.000000Z").unwrap(),
        )
        .ok();
}

#[test]
fn a_dump_from_sqlite_restored_into_postgres_dumps_the_same_bytes() {
    let cli = Cli::new();
    seed(&cli);
    let sqlite = cli.db().display().to_string();
    let first = dump(&sqlite);
    assert_eq!(
        first,
        dump(&sqlite),
        "two dumps of the same data are identical"
    );
    let lines: Vec<Value> = first
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0],
        serde_json::json!({"type": "cairn_dump", "format": 1})
    );
    assert_eq!(
        lines.last().unwrap(),
        &serde_json::json!({"type": "end", "tasks": 3, "notes": 2, "links": 4})
    );
    let file = cli.dir.path().join("cairn.jsonl");
    std::fs::write(&file, &first).unwrap();

    let schema = TestSchema::create();
    let run = restore(schema.url(), &file, &[]);
    assert_eq!(run.code(), 0, "{}", run.stdout());
    assert_eq!(
        run.envelope()["data"]["report"]["loaded"],
        serde_json::json!({"tasks": 3, "notes": 2, "links": 4})
    );
    assert_eq!(
        dump(schema.url()),
        first,
        "PostgreSQL dumps what SQLite did"
    );
    // The restored tables are vacuumed and analyzed at once, not whenever
    // autovacuum comes by: the planner counts their rows (a table never
    // analyzed counts -1), and every page is marked all-visible.
    let of_tasks =
        |column: &str| format!("SELECT {column} FROM pg_class WHERE oid = 'tasks'::regclass");
    let tuples: f32 = scalar(schema.url(), &of_tasks("reltuples"));
    let pages: i32 = scalar(schema.url(), &of_tasks("relpages"));
    let visible: i32 = scalar(schema.url(), &of_tasks("relallvisible"));
    assert_eq!(tuples, 3.0, "the planner counts the restored tasks");
    assert!(
        pages > 0 && visible == pages,
        "{visible} of {pages} pages all-visible"
    );

    // And back into a fresh SQLite file: the same bytes again, and the tools
    // read the same answers (search included: the index is rebuilt).
    let copy = Cli::new();
    let run = restore(&copy.db().display().to_string(), &file, &[]);
    assert_eq!(run.code(), 0, "{}", run.stdout());
    assert_eq!(dump(&copy.db().display().to_string()), first);
    for args in [
        &["task_list"][..],
        &["note_read", "runbook"][..],
        &["graph_export"][..],
        &["search", "release"][..],
    ] {
        assert_eq!(copy.ok(args), cli.ok(args), "{args:?}");
    }
}

#[test]
fn dump_pipes_into_restore_with_one_envelope_each() {
    let cli = Cli::new();
    seed(&cli);
    let target = Cli::new();
    let line = format!(
        "{bin} dump --db {from} | {bin} restore --db {to}",
        bin = env!("CARGO_BIN_EXE_cairn"),
        from = cli.db().display(),
        to = target.db().display(),
    );
    let output = Command::new("sh")
        .args(["-c", &line])
        .env_remove("CAIRN_LOG")
        .output()
        .unwrap();
    let run = Run(output);
    assert_eq!(run.code(), 0, "{}", run.stdout());
    assert_eq!(run.envelope()["meta"]["tool"], "restore");
    let stderr: Value = serde_json::from_slice(&run.0.stderr).expect("dump's envelope on stderr");
    assert_eq!(stderr["meta"]["tool"], "dump");
    assert_eq!(stderr["data"]["dumped"]["tasks"], 3);
    // With --output the dump goes to the file and the envelope to stdout.
    let file = cli.dir.path().join("out.jsonl");
    let run = Run(cairn(
        &cli.db().display().to_string(),
        &["dump", "--output", file.to_str().unwrap()],
    ));
    assert_eq!(run.code(), 0);
    assert_eq!(run.envelope()["data"]["dumped"]["links"], 4);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        dump(&target.db().display().to_string())
    );
}

#[test]
fn restore_into_a_store_with_data_is_refused_unless_merging() {
    let cli = Cli::new();
    seed(&cli);
    let db = cli.db().display().to_string();
    let before = dump(&db);
    let file = cli.dir.path().join("d.jsonl");
    std::fs::write(&file, &before).unwrap();

    let run = restore(&db, &file, &[]);
    assert_eq!(run.code(), 2);
    assert_eq!(run.error_code(), "store_not_empty");
    assert_eq!(run.envelope()["error"]["details"]["tasks"], 3);
    assert_eq!(dump(&db), before, "nothing changed");

    // Merging adds what the store lacks and skips what it holds.
    let other = Cli::new();
    other.ok(&["task_create", "--title", "Only here"]);
    let run = restore(&other.db().display().to_string(), &file, &["--merge"]);
    assert_eq!(run.code(), 0, "{}", run.stdout());
    let report = &run.envelope()["data"]["report"];
    assert_eq!(report["loaded"]["tasks"], 3);
    let run = restore(&other.db().display().to_string(), &file, &["--merge"]);
    let report = &run.envelope()["data"]["report"];
    assert_eq!(
        report["loaded"],
        serde_json::json!({"tasks": 0, "notes": 0, "links": 0})
    );
    assert_eq!(
        report["skipped"],
        serde_json::json!({"tasks": 3, "notes": 2, "links": 4})
    );
}

#[test]
fn a_dump_cut_short_or_garbled_is_refused_and_nothing_is_written() {
    let cli = Cli::new();
    seed(&cli);
    let full = dump(&cli.db().display().to_string());
    let target = Cli::new();
    let target_db = target.db().display().to_string();
    let cut: String = full.lines().take(4).map(|l| format!("{l}\n")).collect();
    for (name, text) in [
        ("cut short", cut),
        (
            "garbled",
            full.replacen("\"type\":\"task\"", "\"type\":\"tusk\"", 1),
        ),
        (
            "no header",
            full.lines().skip(1).collect::<Vec<_>>().join("\n"),
        ),
    ] {
        let file = cli.dir.path().join("bad.jsonl");
        std::fs::write(&file, text).unwrap();
        let run = restore(&target_db, &file, &[]);
        assert_eq!(run.code(), 2, "{name}: {}", run.stdout());
        assert_eq!(run.error_code(), "invalid_input", "{name}");
    }
    assert!(
        dump(&target_db).lines().count() == 2,
        "the target is still empty"
    );
}

/// Every write adds one task and one note in one transaction, so a
/// consistent snapshot always holds as many tasks as notes.
fn dumps_are_snapshots(store: Arc<dyn Store>) {
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (store, stop) = (store.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0;
            // Bounded, so a stalled reader cannot let the file grow without
            // end; far above what ten dumps take, so it writes through them.
            while !stop.load(Ordering::Relaxed) && n < 50_000 {
                let task = NewTask {
                    id: cairn::store::new_id(),
                    title: format!("pair {n}"),
                    description: String::new(),
                    tags: Vec::new(),
                    priority: Default::default(),
                };
                let note = NoteDraft {
                    id: cairn::store::new_id(),
                    title: format!("pair {n}"),
                    slug: format!("pair-{n}"),
                    content: "x".into(),
                    tags: None,
                    source_url: None,
                    wiki_links: Vec::new(),
                };
                store
                    .bulk_load(
                        &[task],
                        &[note],
                        &cairn::store::Timestamp::parse("2026-01-01T00:00:00.000000Z").unwrap(),
                    )
                    .expect("the writer writes");
                n += 1;
            }
            n
        })
    };
    while store.counts().expect("counts").tasks < 20 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let (mut smallest, mut largest) = (usize::MAX, 0);
    for _ in 0..10 {
        let mut snapshot = Snapshot::default();
        store
            .dump(&mut |record| {
                // A pause as each kind starts, so writes land between the reads.
                let first = match record {
                    Record::Task(t) => {
                        snapshot.tasks.push(t);
                        snapshot.tasks.len() == 1
                    }
                    Record::Note(n) => {
                        snapshot.notes.push(n);
                        snapshot.notes.len() == 1
                    }
                    _ => false,
                };
                if first {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Ok(())
            })
            .expect("dump");
        assert_eq!(snapshot.tasks.len(), snapshot.notes.len(), "one snapshot");
        smallest = smallest.min(snapshot.tasks.len());
        largest = largest.max(snapshot.tasks.len());
    }
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    assert!(
        smallest > 0 && smallest < largest && written >= largest,
        "writes landed between the dumps: {smallest}..{largest} of {written}"
    );
}

#[test]
fn a_dump_on_sqlite_is_one_snapshot_while_others_write() {
    let cli = Cli::new();
    dumps_are_snapshots(cairn::store::open_sqlite(&cli.db()).unwrap());
}

#[test]
fn a_dump_on_postgres_is_one_snapshot_while_others_write() {
    let schema = TestSchema::create();
    let store = cairn::store::open(schema.url(), &Default::default()).unwrap();
    dumps_are_snapshots(store);
}
