//! `system`: health and readiness.

use axum::response::IntoResponse;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::envelope::{ErrorCode, ToolError};
use crate::http::AppState;
use crate::http::openapi::schemas::Success;
use crate::http::semantics::extract::Rest;
use crate::http::semantics::response::ApiResponse;
use crate::tools::system::HealthReport;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(health))
        .routes(routes!(ready))
}

/// Report version, store kind, schema version, counts and each check.
///
/// Always answers 200 with a report; `status` says `ok`, `degraded` or `unavailable`.
#[utoipa::path(get, path = "/api/v1/health", tag = "system", operation_id = "health",
    responses((status = 200, description = "The health report", body = Success<HealthReport>)))]
async fn health(rest: Rest) -> ApiResponse {
    rest.call("health", Default::default()).await
}

/// Readiness for load balancers: 200 when the store serves reads and writes.
#[utoipa::path(get, path = "/api/v1/health/ready", tag = "system", operation_id = "health_ready",
    responses((status = 200, description = "The store serves reads and writes", body = Success<HealthReport>)))]
async fn ready(rest: Rest) -> impl IntoResponse {
    let response = rest.call("health", Default::default()).await;
    if response.data_field("status").as_deref() == Some("ok") {
        response
    } else {
        ApiResponse::error(
            ToolError::new(
                ErrorCode::StoreUnavailable,
                "The store does not serve reads and writes right now.",
            ),
            &rest.request_id,
        )
    }
}
