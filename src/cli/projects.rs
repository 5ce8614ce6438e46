//! `cairn project list|create|update`: the registry of projects, on the
//! store `--db` names (the REST routes `/api/v1/projects` do the same on a
//! running server).

use std::process::ExitCode;

use crate::envelope::{self, Envelope, Layout, Meta, ToolError};
use crate::store::timestamp;
use crate::tools::projects::{self, ProjectChange, ProjectNew};

use super::GlobalArgs;
use super::output::print_envelope;

#[derive(Debug, clap::Subcommand)]
pub enum ProjectAction {
    /// List every project, by key.
    List,
    /// Create a project: its data is a store of its own, beside the first.
    Create {
        /// Lowercase letters, digits and `-`, 1-64 characters; never changes.
        key: String,
        /// A name for people (the key when not given).
        #[arg(long)]
        name: Option<String>,
    },
    /// Rename, archive (read-only) or unarchive a project.
    Update {
        key: String,
        #[arg(long)]
        name: Option<String>,
        /// Make it read-only: every write answers `project_archived`.
        #[arg(long, conflicts_with = "unarchive")]
        archive: bool,
        /// Open it for writes again.
        #[arg(long)]
        unarchive: bool,
    },
}

pub fn project_command(global: &GlobalArgs, action: ProjectAction, layout: Layout) -> ExitCode {
    let tool = match action {
        ProjectAction::List => "project_list",
        ProjectAction::Create { .. } => "project_create",
        ProjectAction::Update { .. } => "project_update",
    };
    let meta = Meta::new(tool, "projects", &envelope::new_request_id());
    let envelope = match answer(global, action) {
        Ok(data) => Envelope::success(data, meta),
        Err(error) => Envelope::failure(error, meta),
    };
    print_envelope(envelope, layout)
}

fn answer(global: &GlobalArgs, action: ProjectAction) -> Result<serde_json::Value, ToolError> {
    global.refuse_url("project commands")?;
    let cairn = global.open_hub()?;
    let now = timestamp(cairn.config().clock.now());
    let registry = cairn.projects();
    let data = match action {
        ProjectAction::List => serde_json::to_value(projects::list(registry, |_| true)?),
        ProjectAction::Create { key, name } => {
            serde_json::to_value(projects::create(registry, ProjectNew { key, name }, &now)?)
        }
        ProjectAction::Update {
            key,
            name,
            archive,
            unarchive,
        } => {
            let archived = (archive || unarchive).then_some(archive);
            let change = ProjectChange { name, archived };
            serde_json::to_value(projects::update(registry, &key, change, &now)?)
        }
    };
    data.map_err(|_| ToolError::internal())
}
