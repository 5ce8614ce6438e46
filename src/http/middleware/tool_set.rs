//! `/mcp?tools=SET`: the tool set a session over streamable HTTP lists and
//! may call, checked before rmcp sees the request and handed to the MCP
//! server in the request's extensions. A set that names no tool, module or
//! set is refused as `invalid_input` on `tools`, with the nearest names.

use axum::extract::{Query, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::http::semantics::extract::request_id_of;
use crate::http::semantics::response::ApiResponse;
use crate::tools::sets::ToolSet;

#[derive(Deserialize)]
struct Params {
    tools: Option<String>,
}

/// Puts the set `tools` names into the request; without it the session's
/// own set (`--tools`, `CAIRN_TOOLS`) holds.
pub async fn from_query(mut req: Request, next: Next) -> Response {
    let named = Query::<Params>::try_from_uri(req.uri())
        .ok()
        .and_then(|Query(params)| params.tools);
    if let Some(text) = named {
        match text.parse::<ToolSet>() {
            Ok(set) => {
                req.extensions_mut().insert(set);
            }
            Err(error) => {
                return ApiResponse::error(error, &request_id_of(req.headers())).into_response();
            }
        }
    }
    next.run(req).await
}
