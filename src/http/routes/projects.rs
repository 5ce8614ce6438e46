//! `projects`: the registry. Listing shows the projects the caller's token
//! may use; creating, renaming and archiving need an admin token on every
//! project (`*`). Each project's own routes are today's routes under
//! `/api/v1/projects/{project}/...` (see `middleware/project.rs`).

use axum::Extension;
use axum::extract::Path;
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::Caller;
use crate::envelope::{Envelope, Meta, ToolError};
use crate::http::AppState;
use crate::http::openapi::schemas::Success;
use crate::http::semantics::extract::{ApiJson, request_id_of};
use crate::http::semantics::response::ApiResponse;
use crate::http::semantics::revalidation::{TagMatch, if_none_match};
use crate::store::{Project, timestamp};
use crate::tools::projects::{self, ProjectChange, ProjectList, ProjectNew};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(project_list, project_create))
        .routes(routes!(project_update))
}

const KEY: &str = "The project's key.";

/// List the projects your token may use, by key.
#[utoipa::path(get, path = "/api/v1/projects", tag = "projects", operation_id = "project_list",
    responses((status = 200, description = "The projects", body = Success<ProjectList>)))]
async fn project_list(rest: Registry, caller: Option<Extension<Caller>>) -> ApiResponse {
    let projects = rest.cairn.projects().clone();
    answer(&rest, "project_list", move || {
        let may_use = |key: &str| caller.as_ref().is_none_or(|c| c.projects.allows(key));
        projects::list(&projects, may_use)
    })
    .await
    .revalidating(rest.if_none_match.clone())
}

/// Create a project (admin token on every project).
///
/// Its routes are then `/api/v1/projects/{key}/...`; MCP sessions name it
/// with `/mcp?project=KEY`, the CLI with `--project KEY`.
#[utoipa::path(post, path = "/api/v1/projects", tag = "projects", operation_id = "project_create",
    request_body = ProjectNew,
    responses((status = 201, description = "The created project; `Location` is its URL", body = Success<Project>)))]
async fn project_create(
    rest: Registry,
    caller: Option<Extension<Caller>>,
    ApiJson(body): ApiJson,
) -> ApiResponse {
    if let Some(refused) = refuse_unless_admin(&rest, caller.as_deref()) {
        return refused;
    }
    let new = match decode::<ProjectNew>(body) {
        Ok(new) => new,
        Err(error) => return ApiResponse::error(error, &rest.request_id),
    };
    let (projects, now) = (rest.cairn.projects().clone(), now(&rest));
    answer(&rest, "project_create", move || {
        projects::create(&projects, new, &now)
    })
    .await
    .created_by("/api/v1/projects", "key")
}

/// Rename, archive or unarchive a project (admin token on every project).
///
/// An archived project answers reads and refuses every write with
/// `project_archived` (403).
#[utoipa::path(patch, path = "/api/v1/projects/{project}", tag = "projects", operation_id = "project_update",
    params(("project" = String, Path, description = KEY, max_length = 64, pattern = "^[a-z0-9-]{1,64}$")),
    request_body = ProjectChange,
    responses((status = 200, description = "The project", body = Success<Project>)))]
async fn project_update(
    rest: Registry,
    caller: Option<Extension<Caller>>,
    Path(key): Path<String>,
    ApiJson(body): ApiJson,
) -> ApiResponse {
    if let Some(refused) = refuse_unless_admin(&rest, caller.as_deref()) {
        return refused;
    }
    let change = match decode::<ProjectChange>(body) {
        Ok(change) => change,
        Err(error) => return ApiResponse::error(error, &rest.request_id),
    };
    let (projects, now) = (rest.cairn.projects().clone(), now(&rest));
    answer(&rest, "project_update", move || {
        projects::update(&projects, &key, change, &now)
    })
    .await
}

/// What the registry's routes need: the application and the request id.
/// Not [`crate::http::semantics::extract::Rest`], which is a project's: a
/// token of some projects lists its own without any use of `default`.
struct Registry {
    cairn: crate::tools::Cairn,
    request_id: String,
    /// A GET's `If-None-Match`, as every route reads it.
    if_none_match: Option<TagMatch>,
}

impl axum::extract::FromRequestParts<AppState> for Registry {
    type Rejection = ApiResponse;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let request_id = request_id_of(&parts.headers);
        let if_none_match = if_none_match(&parts.method, &parts.headers)
            .map_err(|error| ApiResponse::error(error, &request_id))?;
        Ok(Self {
            cairn: state.cairn.clone(),
            request_id,
            if_none_match,
        })
    }
}

fn refuse_unless_admin(rest: &Registry, caller: Option<&Caller>) -> Option<ApiResponse> {
    let refused = caller?.check_admin_of_all().err()?;
    Some(ApiResponse::error(refused, &rest.request_id))
}

fn now(rest: &Registry) -> crate::store::Timestamp {
    timestamp(rest.cairn.config().clock.now())
}

/// A body as `T`, refused as the tools refuse theirs.
fn decode<T: serde::de::DeserializeOwned + schemars::JsonSchema + 'static>(
    body: serde_json::Map<String, Value>,
) -> Result<T, ToolError> {
    crate::tools::registry::decode(Value::Object(body))
}

/// Runs `work` on the blocking pool (it reads and writes the registry) and
/// answers its outcome as `tool`'s envelope.
async fn answer<T: serde::Serialize + Send + 'static>(
    rest: &Registry,
    tool: &'static str,
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> ApiResponse {
    let started = std::time::Instant::now();
    let done = tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|_| Err(ToolError::internal()))
        .and_then(|value| serde_json::to_value(value).map_err(|_| ToolError::internal()));
    let mut meta = Meta::new(tool, "projects", &rest.request_id);
    meta.runtime_ms = started.elapsed().as_secs_f64() * 1000.0;
    ApiResponse::new(match done {
        Ok(data) => Envelope::success(data, meta),
        Err(error) => Envelope::failure(error, meta),
    })
}
