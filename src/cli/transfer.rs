//! `cairn dump` and `cairn restore`: everything a store holds as JSON Lines
//! (see `store::transfer`), so a team moves stores with one pipe:
//! `cairn dump --db cairn.db | cairn restore --db postgres://...`. Both
//! work in the project `--project` names (`default` without it).
//!
//! When the dump goes to stdout its envelope goes to stderr (stdout carries
//! only the dump); with `--output FILE` the envelope is on stdout as usual.
//! With `--all-projects` the dump is a folder: `projects.json` (the
//! registry) and one `KEY.jsonl` per project, which `restore --all-projects`
//! reads back, making the projects the store lacks.

use std::fs::File;
use std::io::{BufReader, BufWriter, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use serde_json::json;

use super::GlobalArgs;
use super::output::{Stream, print_envelope, print_envelope_to};
use crate::envelope::{self, Envelope, Layout, Meta, ToolError};
use crate::store::Counts;
use crate::store::transfer::{DumpWriter, read_dump};

/// What these commands are called in the refusal of `--url`.
const DUMP_AND_RESTORE: &str = "dump and restore";

/// `cairn dump [--output FILE]`.
pub fn dump_command(global: &GlobalArgs, output: Option<&Path>, layout: Layout) -> ExitCode {
    let meta = Meta::new("dump", "", &envelope::new_request_id());
    let outcome = global
        .refuse_url(DUMP_AND_RESTORE)
        .and_then(|()| match output {
            Some(path) => File::create(path)
                .map_err(|e| unwritable(&e))
                .and_then(|file| dump_into(global, BufWriter::new(file))),
            None => dump_into(global, BufWriter::new(std::io::stdout().lock())),
        });
    let target = output.map_or("stdout".to_owned(), |p| p.display().to_string());
    let envelope = match outcome {
        Ok(counts) => Envelope::success(json!({"dumped": counts, "output": target}), meta),
        Err(error) => Envelope::failure(error, meta),
    };
    match output {
        Some(_) => print_envelope(envelope, layout),
        None => print_envelope_to(Stream::Stderr, envelope, stderr_layout(layout)),
    }
}

fn dump_into(global: &GlobalArgs, out: impl Write) -> Result<Counts, ToolError> {
    let cairn = global.open_cairn()?;
    let store = cairn.store();
    let mut writer = DumpWriter::start(out).map_err(|e| unwritable(&e))?;
    store.dump(&mut |record| writer.write(&record).map_err(|e| unwritable(&e)))?;
    writer.finish().map_err(|e| unwritable(&e))
}

fn unwritable(error: &std::io::Error) -> ToolError {
    tracing::warn!(%error, "cannot write the dump");
    ToolError::invalid_field(
        "output",
        "The dump could not be written to its output.",
        error.kind().to_string(),
    )
}

/// On stderr, the layout follows stderr: indented on a terminal, else compact.
fn stderr_layout(layout: Layout) -> Layout {
    match layout {
        Layout::Pretty if !std::io::stderr().is_terminal() => Layout::Compact,
        other => other,
    }
}

/// `cairn restore [FILE] [--merge]` (no file, or `-`: stdin); with
/// `--all-projects`, FILE is the folder of a dump of every project.
pub fn restore_command(
    global: &GlobalArgs,
    input: Option<&Path>,
    merge: bool,
    all_projects: bool,
    layout: Layout,
) -> ExitCode {
    let meta = Meta::new("restore", "", &envelope::new_request_id());
    let outcome = global.refuse_url(DUMP_AND_RESTORE).and_then(|()| {
        if all_projects {
            let dir = input.ok_or_else(|| {
                ToolError::invalid_input(
                    "input",
                    "name the folder `cairn dump --all-projects` wrote",
                )
            })?;
            return restore_all_from(global, dir, merge).map(serde_json::Value::Object);
        }
        let snapshot = read_input(input)?;
        let cairn = global.open_cairn()?;
        cairn.projects().check_writable(cairn.project())?;
        Ok(json!(cairn.store().restore(&snapshot, merge)?))
    });
    let envelope = match outcome {
        Ok(report) => Envelope::success(json!({"merge": merge, "report": report}), meta),
        Err(error) => Envelope::failure(error, meta),
    };
    print_envelope(envelope, layout)
}

fn read_input(input: Option<&Path>) -> Result<crate::store::transfer::Snapshot, ToolError> {
    match input.filter(|p| p.as_os_str() != "-") {
        None => read_dump(std::io::stdin().lock()),
        Some(path) => {
            let file = File::open(path).map_err(|error| {
                tracing::warn!(%error, "cannot open the dump");
                ToolError::invalid_field(
                    "input",
                    "The dump file cannot be opened.",
                    error.kind().to_string(),
                )
            })?;
            read_dump(BufReader::new(file))
        }
    }
}

/// The registry of a dump of every project: `projects.json` in its folder,
/// beside one `<key>.jsonl` dump per project.
const REGISTRY_FILE: &str = "projects.json";

/// `cairn dump --all-projects --output DIR`: every project, each as the
/// dump `cairn dump --project KEY` writes, and the registry.
pub fn dump_all_command(global: &GlobalArgs, output: Option<&Path>, layout: Layout) -> ExitCode {
    let meta = Meta::new("dump", "", &envelope::new_request_id());
    let outcome = global.refuse_url(DUMP_AND_RESTORE).and_then(|()| {
        let dir = output.ok_or_else(|| {
            ToolError::invalid_input(
                "output",
                "a dump of every project is a folder: name it with --output DIR",
            )
        })?;
        dump_all_into(global, dir)
    });
    let envelope = match outcome {
        Ok(dumped) => Envelope::success(
            json!({"dumped": dumped, "output": output.map(|p| p.display().to_string())}),
            meta,
        ),
        Err(error) => Envelope::failure(error, meta),
    };
    print_envelope(envelope, layout)
}

fn dump_all_into(
    global: &GlobalArgs,
    dir: &Path,
) -> Result<serde_json::Map<String, serde_json::Value>, ToolError> {
    let empty = std::fs::read_dir(dir).map_or(true, |mut entries| entries.next().is_none());
    if !empty {
        return Err(ToolError::invalid_input(
            "output",
            "must be a new or empty folder",
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| unwritable(&e))?;
    let hub = global.open_hub()?;
    let registry = crate::tools::projects::list(hub.projects(), |_| true)?;
    let text = serde_json::to_string_pretty(&registry).map_err(|_| ToolError::internal())?;
    std::fs::write(dir.join(REGISTRY_FILE), text).map_err(|e| unwritable(&e))?;
    let mut dumped = serde_json::Map::new();
    for project in &registry.projects {
        let cairn = hub.in_project_blocking(&project.key)?;
        let file =
            File::create(dir.join(format!("{}.jsonl", project.key))).map_err(|e| unwritable(&e))?;
        let mut writer = DumpWriter::start(BufWriter::new(file)).map_err(|e| unwritable(&e))?;
        cairn
            .store()
            .dump(&mut |record| writer.write(&record).map_err(|e| unwritable(&e)))?;
        let counts = writer.finish().map_err(|e| unwritable(&e))?;
        dumped.insert(project.key.clone(), json!(counts));
    }
    Ok(dumped)
}

/// Each project of a dump of every project, made when the store lacks it,
/// then restored as `cairn restore --project KEY` does; an archived one is
/// archived after.
fn restore_all_from(
    global: &GlobalArgs,
    dir: &Path,
    merge: bool,
) -> Result<serde_json::Map<String, serde_json::Value>, ToolError> {
    use crate::tools::projects::{self, ProjectChange, ProjectNew};
    let unreadable = |error: std::io::Error| {
        tracing::warn!(%error, "cannot read the dump");
        ToolError::invalid_field(
            "input",
            "The dump folder cannot be read: it must hold projects.json and one KEY.jsonl per project.",
            error.kind().to_string(),
        )
    };
    let text = std::fs::read_to_string(dir.join(REGISTRY_FILE)).map_err(unreadable)?;
    let not_a_registry =
        |_| ToolError::invalid_input("input", "projects.json does not list projects");
    let registry: serde_json::Value = serde_json::from_str(&text).map_err(not_a_registry)?;
    let dumped: Vec<crate::store::Project> =
        serde_json::from_value(registry["projects"].clone()).map_err(not_a_registry)?;
    let hub = global.open_hub()?;
    let now = crate::store::timestamp(hub.config().clock.now());
    let have: Vec<String> = projects::list(hub.projects(), |_| true)?
        .projects
        .into_iter()
        .map(|p| p.key)
        .collect();
    let mut report = serde_json::Map::new();
    for project in &dumped {
        if !have.contains(&project.key) {
            let new = ProjectNew {
                key: project.key.clone(),
                name: Some(project.name.clone()),
            };
            projects::create(hub.projects(), new, &now)?;
        }
        let file = File::open(dir.join(format!("{}.jsonl", project.key))).map_err(unreadable)?;
        let snapshot = read_dump(BufReader::new(file))?;
        let cairn = hub.in_project_blocking(&project.key)?;
        cairn.projects().check_writable(cairn.project())?;
        let restored = cairn.store().restore(&snapshot, merge)?;
        if project.archived {
            let change = ProjectChange {
                name: None,
                archived: Some(true),
            };
            projects::update(hub.projects(), &project.key, change, &now)?;
        }
        report.insert(project.key.clone(), json!(restored));
    }
    Ok(report)
}
