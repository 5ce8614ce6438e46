//! `/api/v1/projects/{project}/...` and `/projects/{project}/mcp`: every API
//! route and MCP, in the project the path names. The prefix is taken off
//! before the token rule, the rate limit and the router see the request, so
//! one router serves every project; the key goes into the request's
//! extensions, where [`crate::http::semantics::extract::project_cairn`]
//! turns it (and the caller's token) into the project's application, and
//! the rate limit keeps a bucket per client and project. Today's
//! `/api/v1/...` routes and `/mcp` are the `default` project's (`/mcp`
//! also takes `?project=KEY`).
//!
//! `/api/v1/projects` and `/api/v1/projects/{project}` themselves are the
//! registry's routes (`routes/projects.rs`), and a project path never nests
//! another.

use axum::extract::{Query, Request, State};
use axum::http::{HeaderValue, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::envelope::ToolError;
use crate::http::semantics::extract::{project_cairn, request_id_of};
use crate::http::semantics::response::ApiResponse;
use crate::tools::Cairn;
use crate::tools::projects::InProject;

/// Where the project routes start.
pub const PREFIX: &str = "/api/v1/projects/";

/// Takes `/api/v1/projects/{project}` off the path, keeping the key, and
/// puts it back in front of the `Location` of what the route created.
pub async fn route_in_project(mut req: Request, next: Next) -> Response {
    let Some((key, uri)) = split(req.uri()) else {
        return next.run(req).await;
    };
    *req.uri_mut() = uri;
    let prefix = format!("{PREFIX}{key}/");
    req.extensions_mut().insert(InProject(key));
    let mut response = next.run(req).await;
    let inside = response
        .headers()
        .get(header::LOCATION)
        .and_then(|l| l.to_str().ok())
        .and_then(|l| l.strip_prefix("/api/v1/"))
        .map(|rest| format!("{prefix}{rest}"));
    if let Some(location) = inside.and_then(|l| HeaderValue::try_from(l).ok()) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

#[derive(Deserialize)]
struct McpParams {
    project: Option<String>,
}

/// MCP's project: the path's (`/projects/{project}/mcp`), else
/// `/mcp?project=KEY`'s, else `default`. The project's application goes
/// into the request for [`crate::mcp::projects::ProjectSessions`]; a
/// project there is not, or the token may not use, is `project_not_found`.
pub async fn mcp_in_project(State(cairn): State<Cairn>, mut req: Request, next: Next) -> Response {
    if req.extensions().get::<InProject>().is_none() {
        match Query::<McpParams>::try_from_uri(req.uri()) {
            Ok(Query(McpParams { project: Some(key) })) => {
                req.extensions_mut().insert(InProject(key));
            }
            Ok(_) => {}
            Err(_) => {
                let error =
                    ToolError::invalid_input("project", "name one project: `project=` once");
                return ApiResponse::error(error, &request_id_of(req.headers())).into_response();
            }
        }
    }
    match project_cairn(&cairn, req.extensions()).await {
        Ok(in_project) => {
            req.extensions_mut().insert(in_project);
            next.run(req).await
        }
        Err(error) => ApiResponse::error(error, &request_id_of(req.headers())).into_response(),
    }
}

/// Where MCP in a project starts: `/projects/{project}/mcp`.
const MCP_PREFIX: &str = "/projects/";

/// The project key of `uri`'s path and the URI of the route inside it.
fn split(uri: &Uri) -> Option<(String, Uri)> {
    let (key, inner) = if let Some(tail) = uri.path().strip_prefix(PREFIX) {
        let (key, rest) = tail.split_once('/')?;
        if rest.is_empty() || rest == "projects" || rest.starts_with("projects/") {
            return None;
        }
        (key, format!("/api/v1/{rest}"))
    } else {
        let (key, rest) = uri.path().strip_prefix(MCP_PREFIX)?.split_once('/')?;
        if rest != "mcp" && !rest.starts_with("mcp/") {
            return None;
        }
        (key, format!("/{rest}"))
    };
    let inner = match uri.query() {
        Some(query) => format!("{inner}?{query}"),
        None => inner,
    };
    Some((key.to_owned(), inner.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_path_is_the_route_inside_it() {
        let split = |path: &str| split(&path.parse().unwrap()).map(|(k, u)| (k, u.to_string()));
        assert_eq!(
            split("/api/v1/projects/web/tasks/abc?x=1"),
            Some(("web".into(), "/api/v1/tasks/abc?x=1".into()))
        );
        assert_eq!(
            split("/api/v1/projects/web/board"),
            Some(("web".into(), "/api/v1/board".into()))
        );
        assert_eq!(
            split("/projects/web/mcp?tools=core"),
            Some(("web".into(), "/mcp?tools=core".into()))
        );
        for own in [
            "/projects/web",
            "/projects/web/tasks",
            "/api/v1/projects",
            "/api/v1/projects/web",
            "/api/v1/projects/web/",
            "/api/v1/projects/web/projects",
            "/api/v1/projects/web/projects/docs/tasks",
            "/api/v1/tasks",
        ] {
            assert_eq!(split(own), None, "{own}");
        }
    }
}
