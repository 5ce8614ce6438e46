//! `tasks`: the task board and claims.

use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use axum::response::Response;

use crate::envelope::ToolError;
use crate::http::AppState;
use crate::http::openapi::schemas::Success;
use crate::http::semantics::conditional::{self, Preconditions, TASK};
use crate::http::semantics::extract::{ApiId, ApiJson, ApiQuery, Rest};
use crate::http::semantics::response::ApiResponse;
use crate::store::{Task, TaskStatus};
use crate::tools::tasks::{
    TaskAgentInput, TaskBoard, TaskClaimInput, TaskCreateInput, TaskListInput, TaskPage,
    TaskTransitionInput, TaskUpdateInput,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(task_create, task_list))
        .routes(routes!(task_get, task_update))
        .routes(routes!(task_claim))
        .routes(routes!(task_renew))
        .routes(routes!(task_release))
        .routes(routes!(task_complete))
        .routes(routes!(task_cancel))
        .routes(routes!(task_reopen))
        .routes(routes!(task_board))
}

const ID: &str = "Task id or a unique prefix of at least 6 characters.";

/// Create a task.
#[utoipa::path(post, path = "/api/v1/tasks", tag = "tasks", operation_id = "task_create",
    request_body = TaskCreateInput,
    responses((status = 201, description = "The created task; `Location` is its URL", body = Success<Task>)))]
async fn task_create(rest: Rest, ApiJson(body): ApiJson) -> Response {
    let answer = rest.call_with_body("task_create", None, body).await;
    conditional::tagged(answer.created("/api/v1/tasks"))
}

/// List tasks, most recently updated first, filtered and paginated.
///
/// `cursor` takes only a `next_cursor` this server issued for the same
/// listing; any other value is `invalid_cursor` (400).
#[utoipa::path(get, path = "/api/v1/tasks", tag = "tasks", operation_id = "task_list",
    params(TaskListInput),
    responses((status = 200, description = "One page of tasks", body = Success<TaskPage>)))]
async fn task_list(rest: Rest, query: ApiQuery) -> ApiResponse {
    rest.call_query("task_list", None, query).await
}

/// Get one task, with its live claim.
#[utoipa::path(get, path = "/api/v1/tasks/{id}", tag = "tasks", operation_id = "task_get",
    params(("id" = String, Path, description = ID, min_length = 6)),
    responses((status = 200, description = "The task", body = Success<Task>)))]
async fn task_get(rest: Rest, pre: Preconditions, ApiId(id): ApiId) -> Response {
    conditional::read(&rest, &pre, TASK, id).await
}

/// Edit a task's title, description, tags or priority.
///
/// Send the `expected_version` you read to be refused with `version_conflict`
/// (and the `current_version`) when someone changed it since, or the `ETag`
/// you read as `If-Match` to be refused with `precondition_failed` (412).
#[utoipa::path(patch, path = "/api/v1/tasks/{id}", tag = "tasks", operation_id = "task_update",
    params(("id" = String, Path, description = ID, min_length = 6)),
    request_body = TaskUpdateInput,
    responses((status = 200, description = "The updated task", body = Success<Task>)))]
async fn task_update(
    rest: Rest,
    pre: Preconditions,
    ApiId(id): ApiId,
    ApiJson(body): ApiJson,
) -> Response {
    conditional::write(&rest, &pre, TASK, "task_update", id, body).await
}

/// A `POST /tasks/{id}/<action>` route: the path names the task, the body
/// carries the rest of the tool's input.
macro_rules! task_action {
    ($(#[doc = $doc:literal])* $tool:ident, $path:literal, $input:ty, $answer:literal) => {
        $(#[doc = $doc])*
        #[utoipa::path(post, path = $path, tag = "tasks", operation_id = stringify!($tool),
            params(("id" = String, Path, description = ID, min_length = 6)),
            request_body = $input,
            responses((status = 200, description = $answer, body = Success<Task>)))]
        async fn $tool(
            rest: Rest,
            pre: Preconditions,
            ApiId(id): ApiId,
            ApiJson(body): ApiJson,
        ) -> Response {
            conditional::write(&rest, &pre, TASK, stringify!($tool), id, body).await
        }
    };
}

task_action!(
    /// Claim a task for an agent (TTL in minutes, default 60, clamped to 1-480).
    task_claim, "/api/v1/tasks/{id}/claim", TaskClaimInput, "The task with its new claim"
);
task_action!(
    /// Extend the claim the agent holds.
    task_renew, "/api/v1/tasks/{id}/renew", TaskAgentInput, "The task with its renewed claim"
);
task_action!(
    /// Release the claim the agent holds.
    task_release, "/api/v1/tasks/{id}/release", TaskAgentInput, "The task, unclaimed"
);
task_action!(
    /// Mark a task done (releases its claim).
    task_complete, "/api/v1/tasks/{id}/complete", TaskTransitionInput, "The task, done"
);
task_action!(
    /// Cancel a task (releases its claim).
    task_cancel, "/api/v1/tasks/{id}/cancel", TaskTransitionInput, "The task, cancelled"
);
task_action!(
    /// Reopen a done or cancelled task.
    task_reopen, "/api/v1/tasks/{id}/reopen", TaskTransitionInput, "The task, open again"
);

/// Query of `GET /board`: which columns, one page size, and a cursor per column.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // documents the query; the values travel as tool arguments
struct BoardQuery {
    /// Only these columns, comma-separated (e.g. `columns=open` with
    /// `open_cursor` to page one column on); default all four.
    #[param(style = Form, explode = false, min_items = 1)]
    columns: Option<Vec<TaskStatus>>,
    /// Cards per column, 1-500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
    /// `next_cursor` of the `open` column.
    open_cursor: Option<String>,
    /// `next_cursor` of the `claimed` column.
    claimed_cursor: Option<String>,
    /// `next_cursor` of the `done` column.
    done_cursor: Option<String>,
    /// `next_cursor` of the `cancelled` column.
    cancelled_cursor: Option<String>,
}

/// The board: columns open, claimed, done and cancelled, each paginated.
///
/// A `<column>_cursor` takes only that column's `next_cursor` as this server
/// issued it (else `invalid_cursor`), and only for a column `columns` asks
/// for: a cursor for a column left out is `invalid_input` (400).
#[utoipa::path(get, path = "/api/v1/board", tag = "tasks", operation_id = "task_board",
    params(BoardQuery),
    responses((status = 200, description = "The board", body = Success<TaskBoard>)))]
async fn task_board(rest: Rest, query: ApiQuery) -> ApiResponse {
    let mut rest_of_query = Vec::new();
    let mut cursors = Map::new();
    for (key, value) in query.0 {
        match key.strip_suffix("_cursor") {
            Some(column) => {
                if cursors.contains_key(column) {
                    let error = ToolError::invalid_input(&key, "must be given once");
                    return ApiResponse::error(error, &rest.request_id);
                }
                cursors.insert(column.to_owned(), Value::String(value));
            }
            None => rest_of_query.push((key, value)),
        }
    }
    let mut args = match ApiQuery(rest_of_query).into_args("task_board") {
        Ok(args) => args,
        Err(error) => return ApiResponse::error(error, &rest.request_id),
    };
    if !cursors.is_empty() {
        args.insert("cursors".into(), Value::Object(cursors));
    }
    rest.call_cached("task_board", args, None).await
}
