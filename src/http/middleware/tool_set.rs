//! `/mcp?tools=SET`: the tool set a session over streamable HTTP lists and
//! may call, checked before rmcp sees the request and handed to the MCP
//! server in the request's extensions. A set that names no tool, module or
//! set is refused as `invalid_input` on `tools`, with the nearest names.

use axum::extract::{Query, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::envelope::ToolError;
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
    // Other parameters are rmcp's or none; only `tools` twice fails to decode.
    let named = match Query::<Params>::try_from_uri(req.uri()) {
        Ok(Query(params)) => params.tools.map(|text| text.parse::<ToolSet>()),
        Err(_) => Some(Err(ToolError::invalid_input(
            "tools",
            "name one tool set: `tools=` once, its words separated by commas",
        ))),
    };
    match named {
        None => {}
        Some(Ok(set)) => {
            req.extensions_mut().insert(set);
        }
        Some(Err(error)) => {
            return ApiResponse::error(error, &request_id_of(req.headers())).into_response();
        }
    }
    next.run(req).await
}
