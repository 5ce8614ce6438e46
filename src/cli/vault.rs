//! `cairn export --markdown DIR` and `cairn import DIR` (see `crate::vault`):
//! one envelope on stdout; the import shows a progress bar on stderr when
//! stderr is a terminal, and nothing else.

use std::path::Path;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;

use super::GlobalArgs;
use super::output::print_envelope;
use crate::envelope::{self, Envelope, Layout, Meta, ToolError};
use crate::store::timestamp;
use crate::tools::{Cairn, Ctx, Module, Signal};
use crate::vault::{self, ImportOptions};

/// Opens the store with the notes module on (its tools are what these
/// commands run); `--url` is refused.
fn open(global: &GlobalArgs) -> Result<Cairn, ToolError> {
    global.refuse_url("import and export")?;
    if global.disable.contains(&Module::Notes) {
        return Err(Module::Notes.disabled_error());
    }
    global.open_cairn()
}

/// `cairn export --markdown DIR`.
pub fn export_command(global: &GlobalArgs, dir: &Path, layout: Layout) -> ExitCode {
    let mut meta = Meta::new("export", Module::Notes.layer(), &envelope::new_request_id());
    let started = std::time::Instant::now();
    let outcome = open(global).and_then(|cairn| {
        let now = timestamp(cairn.config().clock.now());
        vault::export(cairn.store().as_ref(), dir, &now)
    });
    meta.runtime_ms = started.elapsed().as_secs_f64() * 1000.0;
    let envelope = match outcome {
        Ok(report) => Envelope::success(
            json!({"markdown": dir.display().to_string(), "exported": report}),
            meta,
        ),
        Err(error) => Envelope::failure(error, meta),
    };
    print_envelope(envelope, layout)
}

/// `cairn import DIR [--overwrite]`.
pub fn import_command(
    global: &GlobalArgs,
    dir: &Path,
    overwrite: bool,
    layout: Layout,
) -> ExitCode {
    let mut meta = Meta::new("import", Module::Notes.layer(), &envelope::new_request_id());
    let started = std::time::Instant::now();
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {bar:40} {pos}/{len} files ({per_sec}, {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let outcome = open(global).and_then(|cairn| {
        cairn.projects().check_writable(cairn.project())?;
        let signal = Signal::default();
        let ctx = Ctx {
            store: cairn.store().as_ref(),
            config: cairn.config(),
            signal: &signal,
        };
        let mut progress = |done: u64, total: u64| {
            bar.set_length(total);
            bar.set_position(done);
        };
        vault::import(&ctx, dir, ImportOptions { overwrite }, &mut progress)
    });
    bar.finish_and_clear();
    meta.runtime_ms = started.elapsed().as_secs_f64() * 1000.0;
    let envelope = match outcome {
        Ok(report) => {
            if report.failed > 0 {
                meta.warnings.push(format!(
                    "{} of the files could not be imported; `data.report.failures` says why for each",
                    report.failed
                ));
            }
            if report.created + report.updated == 0 {
                meta.warnings.push(
                    "nothing changed: the store already held every note these files hold"
                        .to_owned(),
                );
            }
            Envelope::success(
                json!({"dir": dir.display().to_string(), "overwrite": overwrite, "report": report}),
                meta,
            )
        }
        Err(error) => Envelope::failure(error, meta),
    };
    print_envelope(envelope, layout)
}
