//! The API's routes, one file per domain: thin handlers that call a tool
//! through [`Rest`](crate::http::semantics::extract::Rest) and hand its
//! envelope to [`semantics`](crate::http::semantics), each with its OpenAPI
//! annotation. [`api_router`] merges them.

pub mod changes;
pub mod errors;
pub mod graph;
pub mod notes;
pub mod projects;
pub mod search;
pub mod spa;
pub mod system;
pub mod tasks;

use utoipa_axum::router::OpenApiRouter;

use crate::http::AppState;

/// Every API router, with its OpenAPI paths. Each route names its whole
/// path (`/api/v1/...`) rather than being nested under `/api/v1`: a nested
/// route rebuilds the request's URI without the prefix on every request.
pub fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(tasks::router())
        .merge(notes::router())
        .merge(graph::router())
        .merge(search::router())
        .merge(system::router())
        .merge(changes::router())
        .merge(errors::router())
        .merge(projects::router())
}
