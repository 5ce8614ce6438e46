//! The task board: create, list, read and update tasks; claims that let one
//! agent work a task at a time; and the status transitions.
//!
//! Statuses: `open`, `claimed` (open with a live claim), `done`, `cancelled`.
//! complete/cancel from open|claimed, reopen from done|cancelled. Claims never
//! bump `version`; every other write does.

use serde::{Deserialize, Serialize};

use super::Ctx;
use super::bounds::{
    AGENT_MAX, CURSOR_MAX, DESCRIPTION_MAX, KEY_MAX, NOT_BLANK, QUERY_MAX, TAG_MAX, TAGS_MAX,
    TITLE_MAX, VERSION_MAX,
};
use super::common::{
    MAX_LIMIT, MIN_LIMIT, MIN_PREFIX, clean_tags, decode_keyset, encode_keyset, new_id, non_empty,
    page_limit, resolve_task, timestamp, whole_id,
};
use crate::envelope::ToolError;
use crate::store::{
    BoardColumnQuery, NewTask, Priority, Task, TaskPatch, TaskQuery, TaskStatus, Transition,
    refusal,
};

/// Claim lifetime when none is given, in minutes.
pub const DEFAULT_TTL_MINUTES: i64 = 60;
/// Bounds a claim's lifetime is clamped to, in minutes.
pub const TTL_RANGE: (i64, i64) = (1, 480);
/// The `ttl_minutes` accepted (0 up to a year); a value outside
/// [`TTL_RANGE`] is clamped into it, one outside these is refused.
pub const TTL_ACCEPTED: (i64, i64) = (0, 525_600);

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskCreateInput {
    /// Short summary of the work; must not be blank.
    #[schemars(length(min = 1, max = TITLE_MAX), regex(pattern = NOT_BLANK))]
    #[schema(
        min_length = 1,
        max_length = 300,
        pattern = r"[^\u0000\u0009-\u000D\u0020\u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    pub title: String,
    /// Longer explanation, acceptance criteria.
    #[serde(default)]
    #[schemars(length(max = DESCRIPTION_MAX))]
    #[schema(max_length = 50000)]
    pub description: Option<String>,
    /// Labels to filter by (up to 20, each up to 50 characters).
    #[serde(default)]
    #[schemars(length(max = TAGS_MAX), inner(length(max = TAG_MAX)))]
    #[schema(max_items = 20)]
    pub tags: Option<Vec<String>>,
    /// `low`, `normal` (default), `high` or `urgent`.
    #[serde(default)]
    pub priority: Option<Priority>,
}

#[derive(
    Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema, utoipa::IntoParams,
)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TaskListInput {
    /// Only tasks with this status.
    #[serde(default)]
    pub status: Option<TaskStatus>,
    /// Only tasks carrying this tag.
    #[serde(default)]
    #[schemars(length(max = TAG_MAX))]
    #[schema(max_length = 50)]
    #[param(max_length = 50)]
    pub tag: Option<String>,
    /// Only tasks this agent holds a live claim on.
    #[serde(default)]
    #[schemars(length(max = AGENT_MAX))]
    #[schema(max_length = 100)]
    #[param(max_length = 100)]
    pub claimant: Option<String>,
    /// Case-insensitive text the title or description contains.
    #[serde(default)]
    #[schemars(length(max = QUERY_MAX))]
    #[schema(max_length = 1000)]
    #[param(max_length = 1000)]
    pub q: Option<String>,
    /// Page size, 1-500 (default 50).
    #[serde(default)]
    #[schemars(range(min = MIN_LIMIT, max = MAX_LIMIT))]
    #[schema(minimum = 1, maximum = 500)]
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page (only a cursor this server issued).
    #[serde(default)]
    #[schemars(length(min = 1, max = CURSOR_MAX))]
    #[schema(min_length = 1, max_length = 256)]
    #[param(min_length = 1, max_length = 256)]
    pub cursor: Option<String>,
}

/// One page of tasks, most recently updated first.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct TaskPage {
    pub items: Vec<Task>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    /// Tasks matching the filters, across all pages: exact up to 1,000 (see
    /// `total_is_lower_bound`).
    pub total: u64,
    /// True when more than `total` match: counting stops at 1,000, so that a
    /// page costs what it returns, not what the store holds.
    pub total_is_lower_bound: bool,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskIdInput {
    /// Task id or a unique prefix of at least 6 characters.
    #[schemars(length(min = MIN_PREFIX, max = KEY_MAX))]
    #[schema(min_length = 6, max_length = 400)]
    pub id: String,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskUpdateInput {
    /// Task id or a unique prefix of at least 6 characters.
    #[schemars(length(min = MIN_PREFIX, max = KEY_MAX))]
    #[schema(min_length = 6, max_length = 400)]
    pub id: String,
    /// The version you read; the update is refused with `version_conflict` if it changed.
    #[serde(default)]
    #[schemars(range(min = 1, max = VERSION_MAX))]
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    pub expected_version: Option<i64>,
    /// New title; must not be blank.
    #[serde(default)]
    #[schemars(length(min = 1, max = TITLE_MAX), regex(pattern = NOT_BLANK))]
    #[schema(
        min_length = 1,
        max_length = 300,
        pattern = r"[^\u0000\u0009-\u000D\u0020\u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    pub title: Option<String>,
    /// New description.
    #[serde(default)]
    #[schemars(length(max = DESCRIPTION_MAX))]
    #[schema(max_length = 50000)]
    pub description: Option<String>,
    /// New tags (replace the old ones; up to 20, each up to 50 characters).
    #[serde(default)]
    #[schemars(length(max = TAGS_MAX), inner(length(max = TAG_MAX)))]
    #[schema(max_items = 20)]
    pub tags: Option<Vec<String>>,
    /// New priority.
    #[serde(default)]
    pub priority: Option<Priority>,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskClaimInput {
    /// Task id or a unique prefix of at least 6 characters.
    #[schemars(length(min = MIN_PREFIX, max = KEY_MAX))]
    #[schema(min_length = 6, max_length = 400)]
    pub id: String,
    /// Who claims it (your agent name); must not be blank.
    #[schemars(length(min = 1, max = AGENT_MAX), regex(pattern = NOT_BLANK))]
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"[^\u0000\u0009-\u000D\u0020\u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    pub agent: String,
    /// Claim lifetime in minutes (default 60), clamped to 1-480.
    #[serde(default)]
    #[schemars(range(min = TTL_ACCEPTED.0, max = TTL_ACCEPTED.1))]
    #[schema(minimum = 0, maximum = 525600)]
    pub ttl_minutes: Option<i64>,
    /// The version you read; refused with `version_conflict` if it changed
    /// (claims do not change it).
    #[serde(default)]
    #[schemars(range(min = 1, max = VERSION_MAX))]
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    pub expected_version: Option<i64>,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskAgentInput {
    /// Task id or a unique prefix of at least 6 characters.
    #[schemars(length(min = MIN_PREFIX, max = KEY_MAX))]
    #[schema(min_length = 6, max_length = 400)]
    pub id: String,
    /// The agent holding the claim; must not be blank.
    #[schemars(length(min = 1, max = AGENT_MAX), regex(pattern = NOT_BLANK))]
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"[^\u0000\u0009-\u000D\u0020\u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    pub agent: String,
    /// The version you read; refused with `version_conflict` if it changed
    /// (claims do not change it).
    #[serde(default)]
    #[schemars(range(min = 1, max = VERSION_MAX))]
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    pub expected_version: Option<i64>,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskTransitionInput {
    /// Task id or a unique prefix of at least 6 characters.
    #[schemars(length(min = MIN_PREFIX, max = KEY_MAX))]
    #[schema(min_length = 6, max_length = 400)]
    pub id: String,
    /// Acting agent (not blank); refused with `claim_held` while another agent
    /// holds a live claim.
    #[serde(default)]
    #[schemars(length(min = 1, max = AGENT_MAX), regex(pattern = NOT_BLANK))]
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"[^\u0000\u0009-\u000D\u0020\u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    pub agent: Option<String>,
    /// The version you read; refused with `version_conflict` if it changed
    /// (claims do not change it).
    #[serde(default)]
    #[schemars(range(min = 1, max = VERSION_MAX))]
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    pub expected_version: Option<i64>,
}

#[derive(Debug, Default, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BoardCursors {
    /// Next page of the `open` column.
    #[serde(default)]
    #[schemars(length(min = 1, max = CURSOR_MAX))]
    #[schema(min_length = 1, max_length = 256)]
    pub open: Option<String>,
    /// Next page of the `claimed` column.
    #[serde(default)]
    #[schemars(length(min = 1, max = CURSOR_MAX))]
    #[schema(min_length = 1, max_length = 256)]
    pub claimed: Option<String>,
    /// Next page of the `done` column.
    #[serde(default)]
    #[schemars(length(min = 1, max = CURSOR_MAX))]
    #[schema(min_length = 1, max_length = 256)]
    pub done: Option<String>,
    /// Next page of the `cancelled` column.
    #[serde(default)]
    #[schemars(length(min = 1, max = CURSOR_MAX))]
    #[schema(min_length = 1, max_length = 256)]
    pub cancelled: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskBoardInput {
    /// Only these columns, e.g. `["open"]` to page one column on; answered in
    /// the board's order (open, claimed, done, cancelled) whatever order is given.
    /// Default: all four; when given, at least one.
    #[serde(default)]
    #[schemars(length(min = 1, max = 4))]
    #[schema(min_items = 1, max_items = 4)]
    pub columns: Option<Vec<TaskStatus>>,
    /// Cards per column, 1-500 (default 50).
    #[serde(default)]
    #[schemars(range(min = MIN_LIMIT, max = MAX_LIMIT))]
    #[schema(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
    /// Per-column `next_cursor` values from a previous board.
    #[serde(default)]
    pub cursors: Option<BoardCursors>,
}

/// One status column of the board.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct BoardColumn {
    pub status: TaskStatus,
    /// Cards, most recently updated first; each carries its live claim.
    pub items: Vec<Task>,
    /// Cursor for this column's next page; null on the last page.
    pub next_cursor: Option<String>,
    /// Tasks in this column: exact up to 1,000 (see `total_is_lower_bound`).
    pub total: u64,
    /// True when more than `total` match: counting stops at 1,000, so that a
    /// page costs what it returns, not what the store holds.
    pub total_is_lower_bound: bool,
}

/// The board: columns `open`, `claimed`, `done`, `cancelled`, in that order
/// (only those asked for in `columns`, when given).
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct TaskBoard {
    pub columns: Vec<BoardColumn>,
}

fn now(ctx: &Ctx<'_>) -> crate::store::Timestamp {
    timestamp(ctx.config.clock.now())
}

fn cursor_scope(status: Option<TaskStatus>) -> String {
    format!("tasks:{}", status.map_or("all", TaskStatus::as_str))
}

pub fn task_create(ctx: &Ctx<'_>, input: TaskCreateInput) -> Result<Task, ToolError> {
    let task = NewTask {
        id: new_id(),
        title: non_empty("title", &input.title)?,
        description: input.description.unwrap_or_default(),
        tags: clean_tags(input.tags),
        priority: input.priority.unwrap_or_default(),
    };
    ctx.store
        .task_create(&task, &now(ctx))
        .map_err(ToolError::from)
}

pub fn task_list(ctx: &Ctx<'_>, input: TaskListInput) -> Result<TaskPage, ToolError> {
    let scope = cursor_scope(input.status);
    let query = TaskQuery {
        status: input.status,
        tag: input.tag,
        claimant: input.claimant,
        q: input.q.filter(|q| !q.trim().is_empty()),
        limit: page_limit(input.limit)?,
        after: decode_keyset(&scope, input.cursor.as_deref())?,
    };
    let page = ctx.store.task_list(&query, &now(ctx))?;
    Ok(TaskPage {
        items: page.items,
        next_cursor: page.next.map(|k| encode_keyset(&scope, &k)),
        total: page.total.count,
        total_is_lower_bound: page.total.lower_bound,
    })
}

pub fn task_get(ctx: &Ctx<'_>, input: TaskIdInput) -> Result<Task, ToolError> {
    let now = now(ctx);
    if let Some(id) = whole_id(&input.id)
        && let Some(task) = ctx.store.task_get(&id, &now)?
    {
        return Ok(task);
    }
    let id = resolve_task(ctx.store, &input.id)?.id;
    ctx.store
        .task_get(&id, &now)?
        .ok_or_else(|| refusal::task_not_found(&id))
        .map_err(ToolError::from)
}

pub fn task_update(ctx: &Ctx<'_>, input: TaskUpdateInput) -> Result<Task, ToolError> {
    if input.title.is_none()
        && input.description.is_none()
        && input.tags.is_none()
        && input.priority.is_none()
    {
        return Err(ToolError::invalid_input(
            "arguments",
            "give at least one of title, description, tags, priority",
        ));
    }
    let id = resolve_task(ctx.store, &input.id)?.id;
    let patch = TaskPatch {
        title: input
            .title
            .as_deref()
            .map(|t| non_empty("title", t))
            .transpose()?,
        description: input.description,
        tags: input.tags.map(|t| clean_tags(Some(t))),
        priority: input.priority,
    };
    ctx.store
        .task_update(&id, &patch, input.expected_version, &now(ctx))
        .map_err(ToolError::from)
}

pub fn task_claim(ctx: &Ctx<'_>, input: TaskClaimInput) -> Result<Task, ToolError> {
    let id = resolve_task(ctx.store, &input.id)?.id;
    let agent = non_empty("agent", &input.agent)?;
    let ttl = input
        .ttl_minutes
        .unwrap_or(DEFAULT_TTL_MINUTES)
        .clamp(TTL_RANGE.0, TTL_RANGE.1);
    let now = ctx.config.clock.now();
    let expires_at = timestamp(now + chrono::Duration::minutes(ttl));
    ctx.store
        .task_claim(
            &id,
            &agent,
            &expires_at,
            input.expected_version,
            &timestamp(now),
        )
        .map_err(ToolError::from)
}

/// Renews for the default lifetime from now.
pub fn task_renew(ctx: &Ctx<'_>, input: TaskAgentInput) -> Result<Task, ToolError> {
    let id = resolve_task(ctx.store, &input.id)?.id;
    let agent = non_empty("agent", &input.agent)?;
    let now = ctx.config.clock.now();
    let expires_at = timestamp(now + chrono::Duration::minutes(DEFAULT_TTL_MINUTES));
    ctx.store
        .task_renew(
            &id,
            &agent,
            &expires_at,
            input.expected_version,
            &timestamp(now),
        )
        .map_err(ToolError::from)
}

pub fn task_release(ctx: &Ctx<'_>, input: TaskAgentInput) -> Result<Task, ToolError> {
    let id = resolve_task(ctx.store, &input.id)?.id;
    let agent = non_empty("agent", &input.agent)?;
    ctx.store
        .task_release(&id, &agent, input.expected_version, &now(ctx))
        .map_err(ToolError::from)
}

fn transition(ctx: &Ctx<'_>, input: TaskTransitionInput, t: Transition) -> Result<Task, ToolError> {
    let id = resolve_task(ctx.store, &input.id)?.id;
    let agent = input
        .agent
        .as_deref()
        .map(|a| non_empty("agent", a))
        .transpose()?;
    ctx.store
        .task_transition(&id, t, agent.as_deref(), input.expected_version, &now(ctx))
        .map_err(ToolError::from)
}

pub fn task_complete(ctx: &Ctx<'_>, input: TaskTransitionInput) -> Result<Task, ToolError> {
    transition(ctx, input, Transition::Complete)
}

pub fn task_cancel(ctx: &Ctx<'_>, input: TaskTransitionInput) -> Result<Task, ToolError> {
    transition(ctx, input, Transition::Cancel)
}

pub fn task_reopen(ctx: &Ctx<'_>, input: TaskTransitionInput) -> Result<Task, ToolError> {
    transition(ctx, input, Transition::Reopen)
}

pub fn task_board(ctx: &Ctx<'_>, input: TaskBoardInput) -> Result<TaskBoard, ToolError> {
    let limit = page_limit(input.limit)?;
    let wanted = match input.columns {
        None => TaskStatus::ALL.to_vec(),
        Some(list) if list.is_empty() => {
            return Err(ToolError::invalid_input(
                "columns",
                "must name at least one status (omit it for all four)",
            ));
        }
        Some(list) => TaskStatus::ALL
            .into_iter()
            .filter(|s| list.contains(s))
            .collect(),
    };
    let cursors = input.cursors.unwrap_or_default();
    let mut asked = Vec::with_capacity(wanted.len());
    for status in TaskStatus::ALL {
        let cursor = match status {
            TaskStatus::Open => &cursors.open,
            TaskStatus::Claimed => &cursors.claimed,
            TaskStatus::Done => &cursors.done,
            TaskStatus::Cancelled => &cursors.cancelled,
        };
        let field = format!("cursors.{}", status.as_str());
        if !wanted.contains(&status) {
            // A cursor for a column not asked for would be silently dropped.
            if cursor.is_some() {
                return Err(ToolError::invalid_input(
                    &field,
                    format!(
                        "must not be given when `columns` leaves the `{}` column out",
                        status.as_str()
                    ),
                ));
            }
            continue;
        }
        let after = decode_keyset(&cursor_scope(Some(status)), cursor.as_deref())
            .map_err(|e| e.detail("field", field))?;
        asked.push(BoardColumnQuery { status, after });
    }
    let pages = ctx.store.task_board(&asked, limit, &now(ctx))?;
    let columns = asked
        .iter()
        .zip(pages)
        .map(|(column, page)| BoardColumn {
            status: column.status,
            items: page.items,
            next_cursor: page
                .next
                .map(|k| encode_keyset(&cursor_scope(Some(column.status)), &k)),
            total: page.total.count,
            total_is_lower_bound: page.total.lower_bound,
        })
        .collect();
    Ok(TaskBoard { columns })
}
