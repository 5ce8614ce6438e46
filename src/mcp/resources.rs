//! Notes, tasks and the board as MCP resources, under one scheme:
//!
//! | URI | what | MIME type |
//! |---|---|---|
//! | `cairn://notes/{slug}` | a note as Markdown with a front-matter header (slug, id or id prefix) | `text/markdown` |
//! | `cairn://tasks/{id}` | a task's JSON (full id or unique prefix of 6+) | `application/json` |
//! | `cairn://board` | the board, every column | `application/json` |
//! | `cairn://board/{status}` | one column (`open`, `claimed`, `done`, `cancelled`) | `application/json` |
//!
//! Every read goes through the tool that answers the same question
//! (`note_read`, `task_get`, `task_board`) at the agent tier, so a read fits
//! the agent budget and says what it cut (`_meta.truncated`, `_meta.trimmed`)
//! exactly as the tool's envelope does. Failures are protocol errors whose
//! `data` is the failure envelope.

use rmcp::RoleServer;
use rmcp::model::{
    Annotations, ListResourcesResult, ReadResourceResult, Resource, ResourceContents,
    ResourceTemplate,
};
use rmcp::service::RequestContext;
use serde_json::{Map, Value, json};

use super::{Answer, CairnMcp, Failure};
use crate::envelope::{ErrorCode, ToolError};
use crate::store::{Note, NoteSummary, Priority, Task, TaskStatus};
use crate::tools::markdown::note_markdown;

pub const SCHEME: &str = "cairn://";
pub const NOTE_TEMPLATE: &str = "cairn://notes/{slug}";
pub const TASK_TEMPLATE: &str = "cairn://tasks/{id}";
pub const BOARD_URI: &str = "cairn://board";
pub const COLUMN_TEMPLATE: &str = "cairn://board/{status}";

const MARKDOWN: &str = "text/markdown";
const JSON: &str = "application/json";
/// Resources per `resources/list` page (the board comes first, on page one).
const PAGE: i64 = 100;

/// What a `cairn://` URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A note by slug, id or id prefix.
    Note(String),
    /// A task by id or id prefix.
    Task(String),
    /// The board, or one column of it.
    Board(Option<TaskStatus>),
}

impl Target {
    /// Parses a `cairn://` URI; anything else is `invalid_input` on `uri`.
    pub fn parse(uri: &str) -> Result<Self, ToolError> {
        let bad = |reason: &str| ToolError::invalid_input("uri", reason.to_owned());
        let rest = uri.strip_prefix(SCHEME).ok_or_else(|| {
            bad("cairn resources are cairn://notes/{slug}, cairn://tasks/{id} or cairn://board")
        })?;
        let (kind, key) = rest.split_once('/').unwrap_or((rest, ""));
        match (kind, key) {
            ("board", "") => Ok(Self::Board(None)),
            ("board", status) => TaskStatus::ALL
                .into_iter()
                .find(|s| s.as_str() == status)
                .map(|s| Self::Board(Some(s)))
                .ok_or_else(|| bad("a board column is open, claimed, done or cancelled")),
            ("notes", key) if !key.is_empty() && !key.contains('/') => {
                Ok(Self::Note(key.to_owned()))
            }
            ("tasks", key) if !key.is_empty() && !key.contains('/') => {
                Ok(Self::Task(key.to_owned()))
            }
            _ => Err(bad(
                "cairn resources are cairn://notes/{slug}, cairn://tasks/{id} or cairn://board",
            )),
        }
    }
}

pub fn note_uri(slug: &str) -> String {
    format!("{SCHEME}notes/{slug}")
}

pub fn task_uri(id: &str) -> String {
    format!("{SCHEME}tasks/{id}")
}

/// The templates clients fill in (completion knows their variables).
pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(NOTE_TEMPLATE, "note")
            .with_title("Note")
            .with_description("A note as Markdown with a front-matter header; `slug` also takes the note's id or a unique prefix of 6+ characters")
            .with_mime_type(MARKDOWN),
        ResourceTemplate::new(TASK_TEMPLATE, "task")
            .with_title("Task")
            .with_description("A task's JSON; `id` takes the full id or a unique prefix of 6+ characters")
            .with_mime_type(JSON),
        ResourceTemplate::new(COLUMN_TEMPLATE, "board-column")
            .with_title("Board column")
            .with_description("One column of the board: open, claimed, done or cancelled")
            .with_mime_type(JSON),
    ]
}

fn priority_weight(priority: Priority) -> f32 {
    match priority {
        Priority::Low => 0.25,
        Priority::Normal => 0.5,
        Priority::High => 0.75,
        Priority::Urgent => 1.0,
    }
}

fn annotations(priority: f32, last_modified: &str) -> Annotations {
    let mut annotations = Annotations::default().with_priority(priority);
    annotations.last_modified = Some(last_modified.to_owned());
    annotations
}

fn note_resource(note: &NoteSummary) -> Resource {
    Resource::new(note_uri(&note.slug), note.slug.clone())
        .with_title(note.title.clone())
        .with_mime_type(MARKDOWN)
        .with_annotations(annotations(0.5, &note.updated_at))
}

fn task_resource(task: &Task) -> Resource {
    Resource::new(task_uri(&task.id), task.id.clone())
        .with_title(task.title.clone())
        .with_description(format!(
            "{} task, {} priority",
            task.status.as_str(),
            task.priority.as_str()
        ))
        .with_mime_type(JSON)
        .with_annotations(annotations(
            priority_weight(task.priority),
            &task.updated_at,
        ))
}

fn board_resource() -> Resource {
    Resource::new(BOARD_URI, "board")
        .with_title("Task board")
        .with_description("Every task by status: open, claimed, done, cancelled")
        .with_mime_type(JSON)
        .with_annotations(Annotations::default().with_priority(1.0))
}

/// Where a `resources/list` page starts: the board and notes first, then tasks.
/// The cursor a client gets back is `notes:<note_list cursor>` or
/// `tasks:<task_list cursor>` (empty: the first page of tasks).
enum Phase<'a> {
    Notes(Option<&'a str>),
    Tasks(Option<&'a str>),
}

fn phase(cursor: Option<&str>) -> Result<Phase<'_>, ToolError> {
    match cursor {
        None => Ok(Phase::Notes(None)),
        Some(c) => {
            if let Some(rest) = c.strip_prefix("notes:") {
                Ok(Phase::Notes(Some(rest).filter(|s| !s.is_empty())))
            } else if let Some(rest) = c.strip_prefix("tasks:") {
                Ok(Phase::Tasks(Some(rest).filter(|s| !s.is_empty())))
            } else {
                Err(ToolError::new(
                    ErrorCode::InvalidCursor,
                    "The cursor is not one this server gave out; start without one.",
                ))
            }
        }
    }
}

fn page_args(cursor: Option<&str>) -> Value {
    let mut args = Map::new();
    args.insert("limit".into(), json!(PAGE));
    if let Some(c) = cursor {
        args.insert("cursor".into(), json!(c));
    }
    Value::Object(args)
}

fn decoded<T: serde::de::DeserializeOwned>(tool: &str, value: Value) -> Result<T, Failure> {
    serde_json::from_value(value).map_err(|error| {
        tracing::error!(tool, %error, "a tool's data did not decode as its output type");
        Failure::new(tool, ToolError::internal())
    })
}

/// One page of every resource: the board, the notes (most recently updated
/// first), then the tasks (likewise).
/// Pages are read without the budget (a cut page would lose items between
/// cursors); a page of 100 short entries is small anyway.
pub(super) async fn list(
    mcp: &CairnMcp,
    cursor: Option<&str>,
) -> Result<ListResourcesResult, Failure> {
    let phase = phase(cursor).map_err(|e| Failure::new("resources/list", e))?;
    let mut resources = Vec::new();
    let next_cursor = match phase {
        Phase::Notes(inner) => {
            if inner.is_none() {
                resources.push(board_resource());
            }
            let page: crate::tools::notes::NotePage = decoded(
                "note_list",
                mcp.lookup("note_list", page_args(inner)).await?,
            )?;
            resources.extend(page.items.iter().map(note_resource));
            Some(match page.next_cursor {
                Some(next) => format!("notes:{next}"),
                None => "tasks:".to_owned(),
            })
        }
        Phase::Tasks(inner) => {
            let page: crate::tools::tasks::TaskPage = decoded(
                "task_list",
                mcp.lookup("task_list", page_args(inner)).await?,
            )?;
            resources.extend(page.items.iter().map(task_resource));
            page.next_cursor.map(|next| format!("tasks:{next}"))
        }
    };
    let mut result = ListResourcesResult::with_all_items(resources);
    result.next_cursor = next_cursor;
    Ok(result)
}

/// The budget's report on a read, as the contents' `_meta`.
fn budget_meta(answer: &Answer) -> rmcp::model::MetaObject {
    let mut meta = Map::new();
    meta.insert("request_id".into(), json!(answer.meta.request_id));
    meta.insert("truncated".into(), json!(answer.meta.truncated));
    meta.insert("trimmed".into(), json!(answer.meta.trimmed));
    meta.insert(
        "tokens_estimated".into(),
        json!(answer.meta.tokens_estimated),
    );
    rmcp::model::MetaObject(meta)
}

/// Reads one resource by URI.
pub(super) async fn read(
    mcp: &CairnMcp,
    uri: &str,
    context: &RequestContext<RoleServer>,
) -> Result<ReadResourceResult, Failure> {
    let target = Target::parse(uri).map_err(|e| Failure::new("resources/read", e))?;
    let contents = match target {
        Target::Note(key) => {
            let answer = mcp
                .agent_call("note_read", json!({"id": key}), context)
                .await?;
            let note: Note = decoded("note_read", answer.data.clone())?;
            ResourceContents::text(note_markdown(&note, answer.meta.truncated), uri)
                .with_mime_type(MARKDOWN)
                .with_meta(budget_meta(&answer))
        }
        Target::Task(key) => {
            let answer = mcp
                .agent_call("task_get", json!({"id": key}), context)
                .await?;
            ResourceContents::text(answer.data.to_string(), uri)
                .with_mime_type(JSON)
                .with_meta(budget_meta(&answer))
        }
        Target::Board(column) => {
            let args = match column {
                Some(status) => json!({"columns": [status.as_str()]}),
                None => json!({}),
            };
            let answer = mcp.agent_call("task_board", args, context).await?;
            ResourceContents::text(answer.data.to_string(), uri)
                .with_mime_type(JSON)
                .with_meta(budget_meta(&answer))
        }
    };
    Ok(ReadResourceResult::new(vec![contents]))
}
