//! Projects as the surfaces use them: [`Projects`] opens each project's
//! store once and keeps it, [`Cairn::in_project`](super::Cairn::in_project)
//! hands a surface the application over one project, and the functions here
//! list, create and change projects (the REST routes and `cairn project`).
//!
//! Each project's data is a store of its own (see
//! [`crate::store::model::project`]), so a call made in one project cannot
//! read or change another's: ids, prefixes, counts, search, the board and
//! the change feed are the project's by construction.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;
use serde::{Deserialize, Serialize};

use crate::envelope::{ErrorCode, ToolError};
use crate::store::{DEFAULT_PROJECT, Project, ProjectPatch, Store, Timestamp, key_problem};

/// The project a request named (`/api/v1/projects/{project}/...`,
/// `/mcp?project=`), as the gateway keeps it in the request's extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InProject(pub String);

/// The stores of the projects used so far, the first (`default`) among them.
pub struct Projects {
    first: Arc<dyn Store>,
    /// Keys are kept for the process's life, as metric labels are: only keys
    /// of projects that exist get here.
    open: RwLock<HashMap<&'static str, Arc<dyn Store>>>,
}

impl Projects {
    pub fn new(first: Arc<dyn Store>) -> Self {
        Self {
            first,
            open: RwLock::default(),
        }
    }

    /// The store `--db` names: the registry, and the `default` project's data.
    pub fn first(&self) -> &Arc<dyn Store> {
        &self.first
    }

    /// The store of `key` when it was opened before (`default`'s always is).
    pub fn opened(&self, key: &str) -> Option<(&'static str, Arc<dyn Store>)> {
        if key == DEFAULT_PROJECT {
            return Some((DEFAULT_PROJECT, self.first.clone()));
        }
        self.open
            .read()
            .get_key_value(key)
            .map(|(key, store)| (*key, store.clone()))
    }

    /// The store of `key`, opened (and on first use created) if it was not:
    /// `project_not_found` for a key the registry does not hold. Blocks on
    /// the store: call it off the async executor.
    pub fn open(&self, key: &str) -> Result<(&'static str, Arc<dyn Store>), ToolError> {
        if let Some(opened) = self.opened(key) {
            return Ok(opened);
        }
        if key_problem(key).is_some() {
            return Err(not_found(key));
        }
        let store = self.first.project_store(key)?;
        let mut open = self.open.write();
        if let Some((key, store)) = open.get_key_value(key) {
            return Ok((*key, store.clone()));
        }
        let kept: &'static str = Box::leak(key.into());
        open.insert(kept, store.clone());
        Ok((kept, store))
    }

    /// `project_archived` when `key` is archived; a write checks it first.
    pub fn check_writable(&self, key: &str) -> Result<(), ToolError> {
        match self.first.project_get(key)? {
            Some(project) if project.archived => Err(archived(key)),
            Some(_) => Ok(()),
            None => Err(not_found(key)),
        }
    }
}

/// `project_not_found`: no such project, or one the caller may not use.
pub fn not_found(key: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ProjectNotFound,
        format!("No project `{key}` (or your token may not use it)."),
    )
    .detail("project", key)
    .suggest([
        "list the projects you may use: GET /api/v1/projects or `cairn project list`".to_owned(),
    ])
}

/// `project_archived`: the project answers reads only.
pub fn archived(key: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ProjectArchived,
        format!("Project `{key}` is archived: it answers reads and refuses writes."),
    )
    .detail("project", key)
    .suggest([
        "unarchive it first (PATCH /api/v1/projects/{project} with `archived: false`)".to_owned(),
    ])
}

/// A new project as `POST /api/v1/projects` and `cairn project create` take it.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectNew {
    /// Lowercase letters, digits and `-`, 1-64 characters; never changes.
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[a-z0-9-]{1,64}$"))]
    #[schema(min_length = 1, max_length = 64, pattern = r"^[a-z0-9-]{1,64}$")]
    pub key: String,
    /// A name for people (not blank, no NUL); the key when not given.
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000]*[^\u0000\u0009-\u000D\u0020\u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\u0000]*$"
    )]
    pub name: Option<String>,
}

/// A change to a project: its name, or whether it is archived.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectChange {
    /// A name for people (not blank, no NUL).
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000]*[^\u0000\u0009-\u000D\u0020\u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\u0000]*$"
    )]
    pub name: Option<String>,
    /// `true` makes the project read-only (`project_archived`); `false` opens it again.
    #[serde(default)]
    pub archived: Option<bool>,
}

/// The projects a caller may use.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct ProjectList {
    /// By key; at most [`PROJECTS_MAX`].
    #[schema(max_items = 10000)]
    pub projects: Vec<Project>,
}

/// The most projects a hub holds (the list is one answer, not paged).
pub const PROJECTS_MAX: usize = 10_000;

/// The longest project name, in characters.
const NAME_MAX: usize = 200;

fn checked_name(name: &str) -> Result<String, ToolError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > NAME_MAX {
        return Err(ToolError::invalid_input(
            "name",
            "must be 1-200 characters, not only blanks",
        ));
    }
    Ok(name.to_owned())
}

/// Every project `may_use` allows, by key.
pub fn list(projects: &Projects, may_use: impl Fn(&str) -> bool) -> Result<ProjectList, ToolError> {
    let mut all = projects.first.project_list()?;
    all.retain(|p| may_use(&p.key));
    Ok(ProjectList { projects: all })
}

/// Adds a project to the registry and makes its store.
pub fn create(projects: &Projects, new: ProjectNew, now: &Timestamp) -> Result<Project, ToolError> {
    if let Some(reason) = key_problem(&new.key) {
        return Err(ToolError::invalid_input("key", reason));
    }
    let name = checked_name(new.name.as_deref().unwrap_or(&new.key))?;
    if projects.first.project_list()?.len() >= PROJECTS_MAX {
        return Err(ToolError::invalid_input(
            "key",
            "this hub holds 10000 projects, the most it takes",
        ));
    }
    let project = projects.first.project_create(&Project {
        key: new.key,
        name,
        archived: false,
        created_at: now.to_string(),
        updated_at: now.to_string(),
    })?;
    // Made now, so that a store that cannot be made fails the create's
    // caller rather than the project's first user; opening again retries.
    projects.open(&project.key)?;
    Ok(project)
}

/// Renames, archives or unarchives a project.
pub fn update(
    projects: &Projects,
    key: &str,
    change: ProjectChange,
    now: &Timestamp,
) -> Result<Project, ToolError> {
    let patch = ProjectPatch {
        name: change.name.as_deref().map(checked_name).transpose()?,
        archived: change.archived,
    };
    if patch == ProjectPatch::default() {
        return Err(ToolError::invalid_input(
            "body",
            "name at least one of `name` and `archived`",
        ));
    }
    Ok(projects.first.project_update(key, &patch, now)?)
}
