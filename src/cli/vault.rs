//! `cairn export --markdown DIR` and `cairn import DIR` (see `crate::vault`):
//! one envelope on stdout; the import shows a progress bar on stderr when
//! stderr is a terminal, and nothing else. Both work in `--project`'s
//! project; with `--all-projects`, DIR holds one folder per project.

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

/// `cairn export --markdown DIR [--all-projects]`.
pub fn export_command(
    global: &GlobalArgs,
    dir: &Path,
    all_projects: bool,
    layout: Layout,
) -> ExitCode {
    let mut meta = Meta::new("export", Module::Notes.layer(), &envelope::new_request_id());
    let started = std::time::Instant::now();
    let outcome = open(global).and_then(|cairn| {
        let now = timestamp(cairn.config().clock.now());
        if all_projects {
            export_all(&cairn, dir, &now).map(serde_json::Value::Object)
        } else {
            Ok(json!(vault::export(cairn.store().as_ref(), dir, &now)?))
        }
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

/// Each project's vault in `DIR/KEY/`.
fn export_all(
    hub: &Cairn,
    dir: &Path,
    now: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, ToolError> {
    let empty = std::fs::read_dir(dir).map_or(true, |mut entries| entries.next().is_none());
    if !empty {
        return Err(ToolError::invalid_input(
            "markdown",
            "must be a new or empty folder",
        ));
    }
    let mut exported = serde_json::Map::new();
    for project in crate::tools::projects::list(hub.projects(), |_| true)?.projects {
        let cairn = hub.in_project_blocking(&project.key)?;
        let report = vault::export(cairn.store().as_ref(), &dir.join(&project.key), now)?;
        exported.insert(project.key, json!(report));
    }
    Ok(exported)
}

/// `cairn import DIR [--overwrite] [--all-projects]`.
pub fn import_command(
    global: &GlobalArgs,
    dir: &Path,
    overwrite: bool,
    all_projects: bool,
    layout: Layout,
) -> ExitCode {
    let mut meta = Meta::new("import", Module::Notes.layer(), &envelope::new_request_id());
    let started = std::time::Instant::now();
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {bar:40} {pos}/{len} files ({per_sec}, {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut progress = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let outcome = open(global).and_then(|cairn| {
        if all_projects {
            import_all(&cairn, dir, overwrite, &mut progress)
        } else {
            Ok(vec![(
                None,
                import_into(&cairn, dir, overwrite, &mut progress)?,
            )])
        }
    });
    bar.finish_and_clear();
    meta.runtime_ms = started.elapsed().as_secs_f64() * 1000.0;
    let envelope = match outcome {
        Ok(reports) => {
            let failed: u64 = reports.iter().map(|(_, r)| r.failed).sum();
            if failed > 0 {
                meta.warnings.push(format!(
                    "{failed} of the files could not be imported; `data.report.failures` says why for each"
                ));
            }
            if reports.iter().all(|(_, r)| r.created + r.updated == 0) {
                meta.warnings.push(
                    "nothing changed: the store already held every note these files hold"
                        .to_owned(),
                );
            }
            // One project's report as it always was; with every project,
            // the reports by key.
            let report = match reports.as_slice() {
                [(None, report)] => json!(report),
                all => json!(
                    all.iter()
                        .map(|(key, report)| (key.clone().unwrap_or_default(), json!(report)))
                        .collect::<serde_json::Map<_, _>>()
                ),
            };
            Envelope::success(
                json!({"dir": dir.display().to_string(), "overwrite": overwrite, "report": report}),
                meta,
            )
        }
        Err(error) => Envelope::failure(error, meta),
    };
    print_envelope(envelope, layout)
}

fn import_into(
    cairn: &Cairn,
    dir: &Path,
    overwrite: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<vault::ImportReport, ToolError> {
    cairn.projects().check_writable(cairn.project())?;
    let signal = Signal::default();
    let ctx = Ctx {
        store: cairn.store().as_ref(),
        config: cairn.config(),
        signal: &signal,
    };
    vault::import(&ctx, dir, ImportOptions { overwrite }, progress)
}

/// Each folder of `dir` named by a project key is that project's vault
/// (made when the store lacks it), as `export --all-projects` writes them.
fn import_all(
    hub: &Cairn,
    dir: &Path,
    overwrite: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Vec<(Option<String>, vault::ImportReport)>, ToolError> {
    let unreadable = |error: std::io::Error| {
        tracing::warn!(%error, "cannot read the folder");
        ToolError::invalid_field(
            "dir",
            "The folder cannot be read.",
            error.kind().to_string(),
        )
    };
    let mut keys: Vec<String> = std::fs::read_dir(dir)
        .map_err(unreadable)?
        .filter_map(Result::ok)
        .filter(|entry| entry.path().is_dir())
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| crate::store::key_problem(name).is_none())
        .collect();
    keys.sort();
    if keys.is_empty() {
        return Err(ToolError::invalid_input(
            "dir",
            "holds no folder named by a project key (as `export --all-projects` writes)",
        ));
    }
    let now = timestamp(hub.config().clock.now());
    let have = crate::tools::projects::list(hub.projects(), |_| true)?.projects;
    let mut reports = Vec::new();
    for key in keys {
        if !have.iter().any(|p| p.key == key) {
            let new = crate::tools::projects::ProjectNew {
                key: key.clone(),
                name: None,
            };
            crate::tools::projects::create(hub.projects(), new, &now)?;
        }
        let cairn = hub.in_project_blocking(&key)?;
        let report = import_into(&cairn, &dir.join(&key), overwrite, progress)?;
        reports.push((Some(key), report));
    }
    Ok(reports)
}
