//! `search`: full-text search over tasks and notes.

use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::AppState;
use crate::http::openapi::schemas::Success;
use crate::http::semantics::extract::{ApiQuery, Rest};
use crate::http::semantics::response::ApiResponse;
use crate::tools::search::{SearchInput, SearchResults};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(search))
}

/// Search task titles and descriptions and note titles and content, best first.
///
/// Each hit has a `snippet` with `<mark>`…`</mark>` around the matches (the
/// rest is plain text: escape it before rendering as HTML). `cursor` takes
/// only a `next_cursor` this server issued for the same query; any other
/// value is `invalid_cursor` (400).
#[utoipa::path(get, path = "/api/v1/search", tag = "search", operation_id = "search",
    params(SearchInput),
    responses((status = 200, description = "Hits, best first", body = Success<SearchResults>)))]
async fn search(rest: Rest, query: ApiQuery) -> ApiResponse {
    rest.call_query("search", None, query).await
}
