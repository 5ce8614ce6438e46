//! `cairn import DIR` and `cairn export --markdown DIR` through the binary:
//! a vault of Markdown notes goes in with its links, comes out with ids in
//! front matter, and goes into a fresh store as the same notes, links and
//! ids; importing again changes nothing; broken files are reported one by
//! one while the rest go in. Also `cairn completions`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::Value;

use crate::cli::Run;
use crate::pg_helpers::TestSchema;
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

/// `cairn import DIR` (piped): exactly one envelope on stdout, nothing on
/// stderr (no progress bar off a terminal); returns `data.report`.
fn import(db: &str, dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["import", dir.to_str().unwrap()];
    args.extend(extra);
    let output = cairn(db, &args);
    assert!(
        output.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let run = Run(output);
    let envelope = run.envelope();
    assert_eq!(run.code(), 0, "{envelope}");
    assert_eq!(envelope["ok"], true);
    envelope["data"]["report"].clone()
}

fn export(db: &str, dir: &Path) -> Value {
    let run = Run(cairn(db, &["export", "--markdown", dir.to_str().unwrap()]));
    assert_eq!(run.code(), 0, "{}", run.stdout());
    run.envelope()["data"]["exported"].clone()
}

/// The notes (id, title, content, tags, source) and the edges (source,
/// target, kind) a store holds, from its dump.
fn contents(db: &str) -> (BTreeSet<String>, BTreeSet<(String, String, String)>) {
    let output = cairn(db, &["dump"]);
    assert_eq!(output.status.code(), Some(0));
    let mut notes = BTreeSet::new();
    let mut links = BTreeSet::new();
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let text = |key: &str| record[key].as_str().unwrap_or_default().to_owned();
        match record["type"].as_str() {
            Some("note") => {
                let kept = serde_json::json!([
                    record["id"],
                    record["title"],
                    record["content"],
                    record["tags"],
                    record["source_url"],
                    record["wiki_links"],
                ]);
                notes.insert(kept.to_string());
            }
            Some("link") => {
                links.insert((text("source"), text("target"), text("kind")));
            }
            _ => {}
        }
    }
    (notes, links)
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// `n` notes in 10 nested folders, Obsidian style: every third with front
/// matter (title, tags, a source), the others titled by a `# heading` or by
/// their file name; each links to the next two by plain, aliased and
/// heading links, and some to a note nobody wrote.
fn generated_vault(dir: &Path, n: usize) {
    for i in 0..n {
        let next = (i + 1) % n;
        let after = (i + 2) % n;
        let body = format!(
            "Body of note {i}, ünïcode ✓.\n\nSee [[Note {next}]], [[Note {after}|the one after]] \
             and [[Note {next}#Details]].\n{}\n## Details\n\nText.\n",
            if i % 7 == 0 {
                "Also [[Nobody Wrote This]]."
            } else {
                ""
            }
        );
        let folder = format!("area {}/sub {}", i % 10, i % 3);
        let text = match i % 3 {
            0 => format!(
                "---\ntitle: Note {i}\ntags: [gen, \"bucket-{}\"]\nsource_url: https://example.com/n/{i}\naliases: [n{i}]\n---\n{body}",
                i % 5
            ),
            1 => format!("# Note {i}\n\n{body}"),
            _ => body,
        };
        write(&dir.join(folder).join(format!("Note {i}.md")), text);
    }
}

/// Four imports of 5,000 notes, an export and three dumps. Each import costs
/// about 2.5 s of CPU in a debug build (measured: 1.7 s user, 0.7 s system);
/// the rest of the wall time is waiting for the CPU on a loaded machine and
/// the disk: one transaction per note writes ~65 WAL pages (about 150 KB), so
/// 5,000 notes write ~750 MB (BENCHMARKS.md has the figures).
#[test]
fn a_5000_note_vault_round_trips_through_export_with_the_same_notes_links_and_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    generated_vault(&vault, 5000);
    let first = tmp.path().join("first.db");
    let first = first.to_str().unwrap();

    let report = import(first, &vault, &[]);
    assert_eq!(
        (&report["files"], &report["created"], &report["failed"]),
        (&Value::from(5000), &Value::from(5000), &Value::from(0)),
        "{report}"
    );
    let (notes, links) = contents(first);
    assert_eq!(notes.len(), 5000);
    // Every note links to the next two; `[[Note n#Details]]` is the same edge.
    assert_eq!(links.len(), 10_000);
    assert!(links.iter().all(|(_, _, kind)| kind == "links_to"));

    let again = import(first, &vault, &[]);
    assert_eq!(again["unchanged"], 5000, "{again}");
    assert_eq!(
        again["created"].as_u64().unwrap() + again["updated"].as_u64().unwrap(),
        0
    );
    assert_eq!(contents(first), (notes.clone(), links.clone()));

    let exported = tmp.path().join("export");
    let written = export(first, &exported);
    assert_eq!(
        (&written["notes"], &written["files"]),
        (&Value::from(5000), &Value::from(5004))
    );

    let second = tmp.path().join("second.db");
    let second = second.to_str().unwrap();
    let report = import(second, &exported, &[]);
    assert_eq!(
        (&report["created"], &report["skipped"], &report["failed"]),
        (&Value::from(5000), &Value::from(4), &Value::from(0)),
        "{report}"
    );
    assert_eq!(
        contents(second),
        (notes, links),
        "same notes, same links, same ids"
    );

    let again = import(second, &exported, &[]);
    assert_eq!(again["unchanged"], 5000, "{again}");
}

#[test]
fn a_vault_with_broken_files_reports_each_and_imports_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    let id = "0123456789abcdef0123456789abcdef";
    write(&vault.join("good.md"), "# Good\n\nLinks to [[Also Good]].");
    write(&vault.join("nested/deeper/Also Good.md"), "fine");
    write(&vault.join("bad utf8.md"), b"# Title\n\xff\xfe\n");
    write(
        &vault.join("bad yaml.md"),
        "---\ntitle: [unclosed\n---\nbody",
    );
    write(&vault.join("not a map.md"), "---\n- a\n- b\n---\nbody");
    write(
        &vault.join("foreign id.md"),
        "---\nid: 202301011200\n---\nbody",
    );
    write(
        &vault.join("with id.md"),
        format!("---\nid: {id}\ntitle: With id\n---\nx"),
    );
    write(
        &vault.join("with id again.md"),
        format!("---\nid: {id}\ntitle: Other\n---\ny"),
    );
    write(
        &vault.join("long title.md"),
        format!("---\ntitle: {}\n---\nbody", "t".repeat(301)),
    );
    let tags: Vec<String> = (0..21).map(|i| format!("t{i}")).collect();
    write(
        &vault.join("many tags.md"),
        format!("---\ntags: [{}]\n---\nbody", tags.join(", ")),
    );
    write(&vault.join("nul in body.md"), "# Nul\n\na\u{0}b");
    write(&vault.join("zz/good.md"), "# GOOD!\n\nsame slug as good.md");
    write(&vault.join(".obsidian/workspace.md"), "\u{0}not a note");
    write(&vault.join("picture.png"), b"\x89PNG");

    let db = tmp.path().join("cairn.db");
    let db = db.to_str().unwrap();
    let report = import(db, &vault, &[]);
    assert_eq!(report["files"], 12, "{report}");
    assert_eq!(report["created"], 3, "{report}");
    let failures: Vec<(String, String, String)> = report["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let field = f["details"]["field"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (
                f["file"].as_str().unwrap().to_owned(),
                f["code"].as_str().unwrap().to_owned(),
                field,
            )
        })
        .collect();
    let expected = [
        ("bad utf8.md", "invalid_input", "file"),
        ("bad yaml.md", "invalid_input", "front_matter"),
        ("foreign id.md", "invalid_input", "front_matter"),
        ("long title.md", "invalid_input", "title"),
        ("many tags.md", "invalid_input", "tags"),
        ("not a map.md", "invalid_input", "front_matter"),
        ("nul in body.md", "invalid_input", "content"),
        ("with id.md", "duplicate", ""),
        ("zz/good.md", "slug_collision", ""),
    ]
    .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c.to_owned()));
    assert_eq!(failures, expected);
    assert_eq!(report["failed"], 9);
    let collision = &report["failures"][8]["details"];
    assert_eq!(collision["file"], "good.md");

    let (notes, links) = contents(db);
    assert_eq!(notes.len(), 3);
    assert_eq!(links.len(), 1, "good.md links to Also Good");
    assert!(
        notes.iter().any(|n| n.contains(id)),
        "the front matter id is kept"
    );

    let again = import(db, &vault, &[]);
    assert_eq!(
        (&again["unchanged"], &again["failed"]),
        (&Value::from(3), &Value::from(9))
    );
}

#[test]
fn an_edited_file_updates_its_note_and_a_stale_version_is_refused_unless_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("cairn.db");
    let db = db.to_str().unwrap();
    let vault = tmp.path().join("vault");
    write(&vault.join("Plan.md"), "first");
    import(db, &vault, &[]);
    let exported = tmp.path().join("export");
    export(db, &exported);
    let file = exported.join("notes/Plan.md");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("---\nid: ") && text.ends_with("---\nfirst"),
        "{text}"
    );

    std::fs::write(&file, text.replace("---\nfirst", "---\nsecond")).unwrap();
    let report = import(db, &exported, &[]);
    assert_eq!(
        (&report["updated"], &report["skipped"]),
        (&Value::from(1), &Value::from(4))
    );

    // The file still says version 1; the note is at 2 now.
    std::fs::write(&file, text.replace("---\nfirst", "---\nthird")).unwrap();
    let report = import(db, &exported, &[]);
    assert_eq!(
        report["failures"][0]["code"], "version_conflict",
        "{report}"
    );
    assert_eq!(report["failures"][0]["details"]["current_version"], 2);

    let report = import(db, &exported, &["--overwrite"]);
    assert_eq!(report["updated"], 1, "{report}");
    let note = Run(cairn(db, &["note_read", "plan"])).envelope();
    assert_eq!(note["data"]["content"], "third");
    assert_eq!(note["data"]["version"], 3);
}

#[test]
fn export_writes_tasks_by_status_and_refuses_a_folder_that_holds_files() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("cairn.db");
    let db = db.to_str().unwrap();
    let id = |out: Output| {
        Run(out).envelope()["data"]["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let done = id(cairn(
        db,
        &["task_create", "--title", "Ship it", "--tags", "rel"],
    ));
    id(cairn(
        db,
        &[
            "task_create",
            "--title",
            "Still open",
            "--description",
            "two\nlines",
        ],
    ));
    let claimed = id(cairn(db, &["task_create", "--title", "Held"]));
    assert_eq!(cairn(db, &["task_complete", &done]).status.code(), Some(0));
    assert_eq!(
        cairn(db, &["task_claim", &claimed, "--agent", "ann"])
            .status
            .code(),
        Some(0)
    );

    let dir = tmp.path().join("out");
    let written = export(db, &dir);
    assert_eq!(
        (&written["tasks"], &written["notes"]),
        (&Value::from(3), &Value::from(0))
    );
    let read =
        |status: &str| std::fs::read_to_string(dir.join(format!("tasks/{status}.md"))).unwrap();
    assert!(read("done").contains(&format!("- [x] Ship it\n  id `{done}`")));
    assert!(
        read("open").contains("- [ ] Still open\n")
            && read("open").contains("  > two\n  > lines\n")
    );
    assert!(read("claimed").contains("claimed by ann until"));
    assert!(read("cancelled").contains("count: 0"));

    let again = Run(cairn(db, &["export", "--markdown", dir.to_str().unwrap()]));
    assert_eq!(again.code(), 2);
    assert_eq!(again.error_code(), "invalid_input");
    assert_eq!(again.envelope()["error"]["details"]["field"], "markdown");
}

#[test]
fn import_of_a_missing_folder_is_a_failure_envelope() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("cairn.db");
    let run = Run(cairn(
        db.to_str().unwrap(),
        &["import", "/nonexistent/vault"],
    ));
    assert_eq!(run.code(), 2);
    assert_eq!(run.envelope()["error"]["details"]["field"], "dir");
    assert!(
        !run.stdout().contains("/nonexistent"),
        "no paths in messages"
    );
}

#[test]
fn import_into_postgresql_is_idempotent_too() {
    let schema = TestSchema::create();
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    generated_vault(&vault, 30);
    let report = import(schema.url(), &vault, &[]);
    assert_eq!(report["created"], 30, "{report}");
    let (notes, links) = contents(schema.url());
    assert_eq!((notes.len(), links.len()), (30, 60));
    let again = import(schema.url(), &vault, &[]);
    assert_eq!(again["unchanged"], 30, "{again}");

    let exported = tmp.path().join("export");
    export(schema.url(), &exported);
    let sqlite = tmp.path().join("cairn.db");
    let sqlite = sqlite.to_str().unwrap();
    assert_eq!(import(sqlite, &exported, &[])["created"], 30);
    assert_eq!(contents(sqlite), (notes, links));
}

#[test]
fn completions_for_each_shell_name_every_tool_command() {
    for shell in ["bash", "zsh", "fish"] {
        let output = cairn_command()
            .args(["completions", shell])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{shell}");
        let script = String::from_utf8(output.stdout).unwrap();
        for tool in cairn::tools::REGISTRY {
            assert!(
                script.contains(tool.name),
                "{shell} script lacks {}",
                tool.name
            );
        }
        for command in ["import", "export", "dump", "restore", "completions"] {
            assert!(script.contains(command), "{shell} script lacks {command}");
        }
        assert!(
            script.contains("expected_version"),
            "{shell} script lacks tool fields"
        );
    }
    let run = Run(cairn_command()
        .args(["completions", "tcsh"])
        .output()
        .unwrap());
    assert_eq!(run.code(), 2);
}

#[test]
fn commands_that_open_the_store_refuse_a_url_instead_of_using_the_local_one() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("cairn.db");
    let vault = tmp.path().join("vault");
    write(&vault.join("a.md"), "a");
    let out = tmp.path().join("out");
    let dump = tmp.path().join("dump.jsonl");
    for args in [
        vec!["import", vault.to_str().unwrap()],
        vec!["export", "--markdown", out.to_str().unwrap()],
        vec!["dump", "--output", dump.to_str().unwrap()],
        vec!["restore", vault.join("a.md").to_str().unwrap()],
    ] {
        let mut all = vec!["--url", "http://127.0.0.1:9"];
        all.extend(&args);
        let run = Run(cairn(db.to_str().unwrap(), &all));
        assert_eq!(run.code(), 2, "{args:?}");
        assert_eq!(run.envelope()["error"]["details"]["field"], "url");
    }
    assert!(
        !db.exists() && !out.exists() && !dump.exists(),
        "nothing was opened or written"
    );
}

/// On a terminal (a pseudo-terminal made by util-linux `script`) the import
/// draws a progress bar on stderr, then prints its envelope.
#[test]
fn import_on_a_terminal_shows_a_progress_bar() {
    let tmp = tempfile::tempdir().unwrap();
    let vault = tmp.path().join("vault");
    generated_vault(&vault, 40);
    let db = tmp.path().join("cairn.db");
    let command = format!(
        "'{}' --db '{}' import '{}'",
        env!("CARGO_BIN_EXE_cairn"),
        db.display(),
        vault.display()
    );
    let output = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("CAIRN_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .expect("util-linux script runs");
    let screen = String::from_utf8_lossy(&output.stdout);
    assert!(screen.contains("/40 files"), "no progress bar: {screen}");
    assert!(screen.contains("\"created\": 40"), "{screen}");
}
