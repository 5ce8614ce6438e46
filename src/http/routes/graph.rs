//! `graph`: typed links between tasks and notes, and walks over them.

use serde_json::Map;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::AppState;
use crate::http::openapi::schemas::Success;
use crate::http::semantics::extract::{ApiId, ApiJson, ApiQuery, Rest};
use crate::http::semantics::response::ApiResponse;
use crate::store::Edge;
use crate::tools::graph::{
    DoctorInput, DoctorReport, ExportInput, GraphPath, LinkAddInput, LinkAdded, PathInput, Subgraph,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(link_add))
        .routes(routes!(link_remove))
        .routes(routes!(graph_neighbours))
        .routes(routes!(graph_path))
        .routes(routes!(graph_export))
        .routes(routes!(graph_doctor))
}

const NODE: &str = "Task or note id, a unique prefix of at least 6 characters, or a note slug. A key under 6 characters that is no note's slug is `id_prefix_too_short` (400).";

/// Link two tasks or notes with a typed edge.
///
/// `source` and `target` are ids, unique prefixes of at least 6 characters,
/// or note slugs: a shorter key that is no note's slug is
/// `id_prefix_too_short`, and two keys naming the same node (an edge from a
/// node to itself) are `invalid_input` (400).
#[utoipa::path(post, path = "/api/v1/links", tag = "graph", operation_id = "link_add",
    request_body = LinkAddInput,
    responses((status = 201, description = "The edge; `Location` is its URL", body = Success<LinkAdded>)))]
async fn link_add(rest: Rest, ApiJson(body): ApiJson) -> ApiResponse {
    rest.call_with_body("link_add", None, body)
        .await
        .created("/api/v1/links")
}

/// Remove a link.
#[utoipa::path(delete, path = "/api/v1/links/{id}", tag = "graph", operation_id = "link_remove",
    params(("id" = String, Path, description = "Link id or a unique prefix of at least 6 characters.", min_length = 6)),
    responses((status = 200, description = "The removed edge", body = Success<Edge>)))]
async fn link_remove(rest: Rest, ApiId(id): ApiId) -> ApiResponse {
    rest.call_with_body("link_remove", Some(id), Map::new())
        .await
}

/// The neighbourhood of a node, 1 to 3 hops deep.
#[utoipa::path(get, path = "/api/v1/graph/neighbours/{id}", tag = "graph", operation_id = "graph_neighbours",
    params(("id" = String, Path, description = NODE, min_length = 1),
        ("depth" = Option<i64>, Query, description = "How many hops, 1-3 (default 1).", minimum = 1, maximum = 3)),
    responses((status = 200, description = "The subgraph around the node", body = Success<Subgraph>)))]
async fn graph_neighbours(rest: Rest, ApiId(id): ApiId, query: ApiQuery) -> ApiResponse {
    rest.call_query("graph_neighbours", Some(id), query).await
}

/// The shortest path between two nodes.
///
/// `from` and `to` are ids, unique prefixes of at least 6 characters, or
/// note slugs: a shorter key that is no note's slug is `id_prefix_too_short` (400).
#[utoipa::path(get, path = "/api/v1/graph/path", tag = "graph", operation_id = "graph_path",
    params(PathInput),
    responses((status = 200, description = "The path, or `found: false`", body = Success<GraphPath>)))]
async fn graph_path(rest: Rest, query: ApiQuery) -> ApiResponse {
    rest.call_query("graph_path", None, query).await
}

/// Export the whole graph, or the subgraph around a node, as `{nodes, edges}`.
///
/// `depth` applies only together with `around`: `depth` alone is
/// `invalid_input` (400). A short `around` is refused as for any node key.
#[utoipa::path(get, path = "/api/v1/graph/export", tag = "graph", operation_id = "graph_export",
    params(ExportInput),
    responses((status = 200, description = "The graph", body = Success<Subgraph>)))]
async fn graph_export(rest: Rest, query: ApiQuery) -> ApiResponse {
    rest.call_query("graph_export", None, query).await
}

/// Find dangling edges, self loops, duplicates and orphans; `fix` repairs what is safe.
#[utoipa::path(post, path = "/api/v1/graph/doctor", tag = "graph", operation_id = "graph_doctor",
    request_body = DoctorInput,
    responses((status = 200, description = "What was found and repaired", body = Success<DoctorReport>)))]
async fn graph_doctor(rest: Rest, ApiJson(body): ApiJson) -> ApiResponse {
    rest.call_with_body("graph_doctor", None, body).await
}
