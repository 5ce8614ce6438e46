//! `cairn dump` and `cairn restore`: everything a store holds as JSON Lines
//! (see `store::transfer`), so a team moves stores with one pipe:
//! `cairn dump --db cairn.db | cairn restore --db postgres://...`. Both
//! work in the project `--project` names (`default` without it).
//!
//! When the dump goes to stdout its envelope goes to stderr (stdout carries
//! only the dump); with `--output FILE` the envelope is on stdout as usual.

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

/// `cairn restore [FILE] [--merge]` (no file, or `-`: stdin).
pub fn restore_command(
    global: &GlobalArgs,
    input: Option<&Path>,
    merge: bool,
    layout: Layout,
) -> ExitCode {
    let meta = Meta::new("restore", "", &envelope::new_request_id());
    let outcome = global.refuse_url(DUMP_AND_RESTORE).and_then(|()| {
        let snapshot = read_input(input)?;
        let cairn = global.open_cairn()?;
        cairn.projects().check_writable(cairn.project())?;
        cairn
            .store()
            .restore(&snapshot, merge)
            .map_err(ToolError::from)
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
