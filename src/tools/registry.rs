//! The one list of tools. The MCP tool list, the CLI, AGENTS.md and the module
//! gate are all made from [`REGISTRY`]; adding a tool is one entry here plus its function.

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::{Ctx, graph, notes, search, system, tasks};
use crate::envelope::{ErrorCode, ToolError};
use crate::store::{Edge, Note, NoteWritten, Task};

/// A group of tools that a deployment can switch off as a whole.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum Module {
    Tasks,
    Notes,
    Graph,
    Search,
    System,
}

impl Module {
    /// The `meta.layer` of this module's answers.
    pub const fn layer(self) -> &'static str {
        match self {
            Module::Tasks => "tasks",
            Module::Notes => "notes",
            Module::Graph => "graph",
            Module::Search => "search",
            Module::System => "health",
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Module::Tasks => "tasks",
            Module::Notes => "notes",
            Module::Graph => "graph",
            Module::Search => "search",
            Module::System => "system",
        }
    }

    pub fn disabled_error(self) -> ToolError {
        ToolError::new(
            ErrorCode::ModuleDisabled,
            format!(
                "The `{0}` module is disabled in this deployment; remove `{0}` from CAIRN_DISABLE (or --disable) to enable it.",
                self.name()
            ),
        )
        .detail("module", self.name())
    }
}

/// Type-erased handler: JSON arguments in, JSON data out.
pub type Handler = fn(&Ctx, Value) -> Result<Value, ToolError>;

/// One tool, as every surface sees it.
pub struct ToolDef {
    pub name: &'static str,
    /// One line telling an agent when to use it.
    pub description: &'static str,
    pub module: Module,
    pub input_schema: fn() -> schemars::Schema,
    pub output_schema: fn() -> schemars::Schema,
    pub handler: Handler,
}

/// Declares one registry entry from a typed tool function.
macro_rules! tool {
    ($name:ident, $module:ident, $func:path, $input:ty => $output:ty, $description:literal) => {
        ToolDef {
            name: stringify!($name),
            description: $description,
            module: Module::$module,
            input_schema: || schemars::schema_for!($input),
            output_schema: || schemars::schema_for!($output),
            handler: |ctx, args| {
                let input: $input = decode(args)?;
                encode($func(ctx, input)?)
            },
        }
    };
}

pub static REGISTRY: &[ToolDef] = &[
    tool!(task_create, Tasks, tasks::task_create, tasks::TaskCreateInput => Task,
        "Create a task on the board when you find work that someone (you or another agent) should do."),
    tool!(task_list, Tasks, tasks::task_list, tasks::TaskListInput => tasks::TaskPage,
        "List tasks, filtered by status, tag, claimant or text, most recently updated first; use it to find work."),
    tool!(task_get, Tasks, tasks::task_get, tasks::TaskIdInput => Task,
        "Read one task (status, live claim, version) before acting on it."),
    tool!(task_update, Tasks, tasks::task_update, tasks::TaskUpdateInput => Task,
        "Change a task's title, description, tags or priority; pass expected_version to avoid overwriting someone else's change."),
    tool!(task_claim, Tasks, tasks::task_claim, tasks::TaskClaimInput => Task,
        "Claim a task before working on it so no other agent does the same work (expires after ttl_minutes)."),
    tool!(task_renew, Tasks, tasks::task_renew, tasks::TaskAgentInput => Task,
        "Extend your claim on a task you are still working on (another 60 minutes from now)."),
    tool!(task_release, Tasks, tasks::task_release, tasks::TaskAgentInput => Task,
        "Give up your claim on a task you will not finish, so another agent can take it."),
    tool!(task_complete, Tasks, tasks::task_complete, tasks::TaskTransitionInput => Task,
        "Mark a task done when its work is finished; releases the claim."),
    tool!(task_cancel, Tasks, tasks::task_cancel, tasks::TaskTransitionInput => Task,
        "Cancel a task that should no longer be done; releases the claim."),
    tool!(task_reopen, Tasks, tasks::task_reopen, tasks::TaskTransitionInput => Task,
        "Reopen a done or cancelled task when its work turns out to be needed again."),
    tool!(task_board, Tasks, tasks::task_board, tasks::TaskBoardInput => tasks::TaskBoard,
        "See the whole board at a glance: open, claimed, done and cancelled columns with each card's claim."),
    tool!(note_write, Notes, notes::note_write, notes::NoteWriteInput => NoteWritten,
        "Save knowledge as a note (no id creates, an id replaces); [[Title]] in content links to other notes."),
    tool!(note_read, Notes, notes::note_read, notes::NoteReadInput => Note,
        "Read a note's full content by id, id prefix or slug."),
    tool!(note_list, Notes, notes::note_list, notes::NoteListInput => notes::NotePage,
        "List notes (without content), filtered by tag or text, most recently updated first."),
    tool!(note_delete, Notes, notes::note_delete, notes::NoteDeleteInput => notes::NoteDeleted,
        "Delete a note that is wrong or obsolete; its links go with it."),
    tool!(link_add, Graph, graph::link_add, graph::LinkAddInput => graph::LinkAdded,
        "Record how two tasks or notes relate (relates_to, depends_on, derived_from, blocks)."),
    tool!(link_remove, Graph, graph::link_remove, graph::LinkRemoveInput => Edge,
        "Remove a link you added by mistake or that no longer holds."),
    tool!(graph_neighbours, Graph, graph::graph_neighbours, graph::NeighboursInput => graph::Subgraph,
        "See what a task or note is connected to, up to 3 hops away, before changing it."),
    tool!(graph_path, Graph, graph::graph_path, graph::PathInput => graph::GraphPath,
        "Find how two tasks or notes are connected (shortest chain of links)."),
    tool!(graph_export, Graph, graph::graph_export, graph::ExportInput => graph::Subgraph,
        "Export the link graph (or the part around one node) as nodes and edges, e.g. to draw it."),
    tool!(graph_doctor, Graph, graph::graph_doctor, graph::DoctorInput => graph::DoctorReport,
        "Check the link graph for dangling edges, self loops, duplicates and orphans; fix: true repairs edges."),
    tool!(search, Search, search::search, search::SearchInput => search::SearchResults,
        "Search every task and note by words, best matches first, with highlighted snippets."),
    tool!(health, System, system::health, system::HealthInput => system::HealthReport,
        "Report version, store kind, schema version, counts and whether search works; use it to check cairn is up."),
];

pub fn find(name: &str) -> Option<&'static ToolDef> {
    REGISTRY.iter().find(|t| t.name == name)
}

/// `invalid_input` for a tool name that is not registered, with the nearest names.
pub fn unknown_tool(name: &str) -> ToolError {
    let suggestions = nearest(name, REGISTRY.iter().map(|t| t.name));
    ToolError::invalid_input("tool", format!("no tool named `{name}`")).suggest(suggestions)
}

/// Up to three candidates closest to `word` by Levenshtein distance.
pub fn nearest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(usize, &str)> = candidates
        .map(|c| (strsim::levenshtein(word, c), c))
        .filter(|(d, c)| *d <= (c.len().max(word.len()) / 2).max(2))
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_owned())
        .collect()
}

/// Decodes tool arguments: an unknown key is `unknown_field` (with the nearest
/// valid names), a missing required key `missing_field`, a wrong type or value
/// `invalid_input` naming the field. No arguments at all count as `{}`.
pub fn decode<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    let args = match args {
        Value::Null => Value::Object(Default::default()),
        Value::Object(map) => Value::Object(map),
        other => {
            return Err(ToolError::invalid_input(
                "arguments",
                format!("must be a JSON object, not {}", json_type(&other)),
            ));
        }
    };
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let reason = e.inner().to_string();
        argument_error(&path, &reason)
    })
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The first backticked word of a serde message.
fn quoted(reason: &str) -> Option<&str> {
    let start = reason.find('`')? + 1;
    let len = reason[start..].find('`')?;
    Some(&reason[start..start + len])
}

/// Joins a parent path (`.` at the top) and a key.
fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() || parent == "." {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

fn argument_error(path: &str, reason: &str) -> ToolError {
    if let Some(rest) = reason.strip_prefix("unknown field ") {
        let field = quoted(rest).unwrap_or_default();
        // serde_path_to_error ends the path with the unknown key itself.
        let parent = path
            .strip_suffix(field)
            .map(|p| p.trim_end_matches('.'))
            .unwrap_or(path);
        let valid: Vec<&str> = rest
            .split_once("expected ")
            .map(|(_, list)| list.split('`').skip(1).step_by(2).collect())
            .unwrap_or_default();
        let full = join(parent, field);
        let suggestions = nearest(field, valid.iter().copied());
        return ToolError::new(
            ErrorCode::UnknownField,
            if suggestions.is_empty() {
                format!("Unknown field `{full}`.")
            } else {
                format!("Unknown field `{full}`; did you mean `{}`?", suggestions[0])
            },
        )
        .detail("field", full)
        .suggest(suggestions);
    }
    if let Some(rest) = reason.strip_prefix("missing field ") {
        let field = join(path, quoted(rest).unwrap_or_default());
        return ToolError::new(
            ErrorCode::MissingField,
            format!("Missing required field `{field}`."),
        )
        .detail("field", field);
    }
    let field = if path.is_empty() || path == "." {
        "arguments"
    } else {
        path
    };
    let mut error = ToolError::invalid_input(field, reason);
    if let Some(rest) = reason.strip_prefix("unknown variant ") {
        let given = quoted(rest).unwrap_or_default();
        let valid: Vec<&str> = rest
            .split_once("expected ")
            .map(|(_, list)| list.split('`').skip(1).step_by(2).collect())
            .unwrap_or_default();
        error = error.suggest(nearest(given, valid.iter().copied()));
    }
    error
}

fn encode<T: Serialize>(output: T) -> Result<Value, ToolError> {
    serde_json::to_value(output).map_err(|_| ToolError::internal())
}
