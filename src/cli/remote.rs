//! `--url` / `$CAIRN_URL`: a tool command calls a running cairn over its REST
//! routes instead of opening a store, and prints the envelope the local store
//! would have given (same `data`, same error, same exit code; the budget is
//! the CLI's own, applied to what the server sent whole).
//!
//! Each tool goes to the route the gateway serves it on: the target `id` in
//! the path, the rest in the query (reads) or the JSON body (writes). The
//! arguments are checked here first with the tool's own decoder, so a wrong
//! call is refused exactly as the tool refuses it, whatever the route carries.

use std::time::Duration;

use reqwest::{Method, Url};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::envelope::{Envelope, ErrorBody, ErrorCode, Meta, ToolError};
use crate::tools::ToolDef;

/// How long a call may take, connection included, before it answers `timeout`.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A running cairn: its base URL (`http://host:port`) and bearer token.
#[derive(Clone)]
pub struct Remote {
    base: Url,
    token: Option<String>,
    /// The project the calls go to (`/api/v1/projects/{project}/...`);
    /// `None` for `default` (today's `/api/v1/...`).
    project: Option<String>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("base", &self.base.as_str())
            .field("token", &self.token.as_ref().map(|_| "…"))
            .finish()
    }
}

impl Remote {
    /// `url` is where `cairn serve` listens; only `http://` (this build has no
    /// TLS: reach an https gateway through a tunnel or a local proxy).
    pub fn parse(url: &str, token: Option<String>) -> Result<Self, ToolError> {
        Self::parse_in(url, token, crate::store::DEFAULT_PROJECT)
    }

    /// [`Remote::parse`] with the calls going to `project`.
    pub fn parse_in(url: &str, token: Option<String>, project: &str) -> Result<Self, ToolError> {
        let base = Url::parse(url)
            .ok()
            .filter(|u| u.has_host())
            .ok_or_else(|| {
                ToolError::invalid_input(
                    "url",
                    "must be an http:// URL, e.g. http://127.0.0.1:8787",
                )
            })?;
        if base.scheme() != "http" {
            return Err(ToolError::invalid_input(
                "url",
                "must be an http:// URL: this build speaks plain HTTP (reach an https gateway through a tunnel or a local proxy)",
            ));
        }
        Ok(Self {
            base,
            token: token.filter(|t| !t.is_empty()),
            project: (project != crate::store::DEFAULT_PROJECT).then(|| project.to_owned()),
        })
    }

    /// Calls `def` with `arguments` on the server and returns its envelope.
    pub async fn call(&self, def: &ToolDef, arguments: Value, request_id: &str) -> Envelope {
        let meta = Meta::new(def.name, def.module.layer(), request_id);
        let Value::Object(args) = arguments else {
            return Envelope::failure(
                ToolError::invalid_input("arguments", "must be a JSON object"),
                meta,
            );
        };
        if let Err(error) = (def.check)(Value::Object(args.clone())) {
            return Envelope::failure(error, meta);
        }
        let Some(request) = route(def.name, args) else {
            tracing::error!(tool = def.name, "no REST route for this tool");
            return Envelope::failure(ToolError::internal(), meta);
        };
        match self.send(&request, request_id).await {
            Ok(Answer::Data { data, meta }) => Envelope::success(data, meta),
            Ok(Answer::Error { error }) => Envelope {
                outcome: Err(error),
                meta,
            },
            Err(error) => Envelope::failure(error, meta),
        }
    }

    async fn send(&self, request: &Request, request_id: &str) -> Result<Answer, ToolError> {
        let mut url = self.base.clone();
        {
            let mut segments = url
                .path_segments_mut()
                .map_err(|()| ToolError::invalid_input("url", "cannot be a base URL"))?;
            segments.pop_if_empty().extend(["api", "v1"]);
            if let Some(project) = &self.project {
                segments.extend(["projects", project]);
            }
            segments.extend(&request.path);
        }
        if !request.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&request.query);
        }
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(CALL_TIMEOUT)
            .build()
            .map_err(|error| {
                tracing::error!(%error, "cannot build the HTTP client");
                ToolError::internal()
            })?;
        let mut builder = client
            .request(request.method.clone(), url)
            .header("x-request-id", request_id);
        if let Some(token) = &self.token {
            builder = builder.bearer_auth(token);
        }
        if let Some(body) = &request.body {
            builder = builder
                .header("content-type", "application/json")
                .body(Value::Object(body.clone()).to_string());
        }
        let response = builder.send().await.map_err(|error| {
            tracing::warn!(%error, "the cairn server did not answer");
            if error.is_timeout() && !error.is_connect() {
                ToolError::new(
                    ErrorCode::Timeout,
                    "The cairn server took too long to answer.",
                )
            } else {
                unreachable_server()
            }
        })?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(|error| {
            tracing::warn!(%error, "the cairn server's answer broke off");
            unreachable_server()
        })?;
        serde_json::from_slice(&bytes).map_err(|error| {
            tracing::warn!(%status, %error, "the server's answer is not a cairn envelope");
            ToolError::new(
                ErrorCode::ServerUnavailable,
                "The server at that URL answered, but not as cairn does; check `--url`.",
            )
        })
    }
}

fn unreachable_server() -> ToolError {
    ToolError::new(
        ErrorCode::ServerUnavailable,
        "Cannot reach the cairn server at that URL; is `cairn serve` running there?",
    )
}

/// A REST body: `{data, meta}` or `{error}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Answer {
    Data { data: Value, meta: Meta },
    Error { error: ErrorBody },
}

/// One HTTP request for one tool call.
#[derive(Debug)]
struct Request {
    method: Method,
    /// Path segments under `/api/v1` (each percent-encoded when sent).
    path: Vec<String>,
    query: Vec<(String, String)>,
    body: Option<Map<String, Value>>,
}

/// Where a tool's arguments go.
#[derive(Clone, Copy)]
enum Carry {
    Query,
    Body,
}

/// The gateway's route for `tool` (see `src/http/`), with the arguments placed.
fn route(tool: &str, mut args: Map<String, Value>) -> Option<Request> {
    use Carry::{Body, Query};
    let id = match args.remove("id") {
        Some(Value::String(id)) => Some(id),
        Some(other) => Some(other.to_string()),
        None => None,
    };
    let (method, path, carry): (Method, &[&str], Carry) = match tool {
        "task_create" => (Method::POST, &["tasks"], Body),
        "task_list" => (Method::GET, &["tasks"], Query),
        "task_get" => (Method::GET, &["tasks", "{id}"], Query),
        "task_update" => (Method::PATCH, &["tasks", "{id}"], Body),
        "task_claim" => (Method::POST, &["tasks", "{id}", "claim"], Body),
        "task_renew" => (Method::POST, &["tasks", "{id}", "renew"], Body),
        "task_release" => (Method::POST, &["tasks", "{id}", "release"], Body),
        "task_complete" => (Method::POST, &["tasks", "{id}", "complete"], Body),
        "task_cancel" => (Method::POST, &["tasks", "{id}", "cancel"], Body),
        "task_reopen" => (Method::POST, &["tasks", "{id}", "reopen"], Body),
        "task_board" => (Method::GET, &["board"], Query),
        "note_write" if id.is_some() => (Method::PUT, &["notes", "{id}"], Body),
        "note_write" => (Method::POST, &["notes"], Body),
        "note_read" => (Method::GET, &["notes", "{id}"], Query),
        "note_list" => (Method::GET, &["notes"], Query),
        "note_delete" => (Method::DELETE, &["notes", "{id}"], Query),
        "link_add" => (Method::POST, &["links"], Body),
        "link_remove" => (Method::DELETE, &["links", "{id}"], Query),
        "graph_neighbours" => (Method::GET, &["graph", "neighbours", "{id}"], Query),
        "graph_path" => (Method::GET, &["graph", "path"], Query),
        "graph_export" => (Method::GET, &["graph", "export"], Query),
        "graph_doctor" => (Method::POST, &["graph", "doctor"], Body),
        "search" => (Method::GET, &["search"], Query),
        "health" => (Method::GET, &["health"], Query),
        "changes_since" => (Method::GET, &["changes"], Query),
        _ => return None,
    };
    let path = path
        .iter()
        .map(|segment| match *segment {
            "{id}" => id.clone().unwrap_or_default(),
            fixed => fixed.to_owned(),
        })
        .collect();
    let (query, body) = match carry {
        Body => (Vec::new(), Some(args)),
        Query => (query_pairs(args), None),
    };
    Some(Request {
        method,
        path,
        query,
        body,
    })
}

/// Arguments as query pairs, typed back by the gateway from the tool's schema:
/// arrays repeat their key, nulls are left out, and the board's `cursors`
/// object becomes `<column>_cursor` parameters.
fn query_pairs(args: Map<String, Value>) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    for (key, value) in args {
        match value {
            Value::Null => {}
            Value::String(s) => pairs.push((key, s)),
            Value::Array(items) => {
                for item in items {
                    pairs.push((key.clone(), scalar_text(item)));
                }
            }
            Value::Object(map) if key == "cursors" => {
                for (column, cursor) in map {
                    pairs.push((format!("{column}_cursor"), scalar_text(cursor)));
                }
            }
            other => pairs.push((key, scalar_text(other))),
        }
    }
    pairs
}

fn scalar_text(value: Value) -> String {
    match value {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn every_registered_tool_has_a_route() {
        for def in crate::tools::REGISTRY {
            assert!(
                route(def.name, args(json!({"id": "abcdef"}))).is_some(),
                "{} has no REST route",
                def.name
            );
        }
    }

    #[test]
    fn the_id_goes_in_the_path_and_the_rest_in_the_body_or_query() {
        let claim = route("task_claim", args(json!({"id": "a/b c", "agent": "ann"}))).unwrap();
        assert_eq!(claim.method, Method::POST);
        assert_eq!(claim.path, ["tasks", "a/b c", "claim"]);
        assert_eq!(claim.body, Some(args(json!({"agent": "ann"}))));
        let board = route(
            "task_board",
            args(json!({"columns": ["open", "done"], "cursors": {"open": "c1"}, "limit": 5})),
        )
        .unwrap();
        assert_eq!(
            board.query,
            [
                ("columns".to_owned(), "open".to_owned()),
                ("columns".to_owned(), "done".to_owned()),
                ("open_cursor".to_owned(), "c1".to_owned()),
                ("limit".to_owned(), "5".to_owned()),
            ]
        );
        assert_eq!(
            route("note_write", args(json!({"title": "t"})))
                .unwrap()
                .path,
            ["notes"]
        );
        assert_eq!(
            route("note_write", args(json!({"id": "n1", "title": "t"})))
                .unwrap()
                .method,
            Method::PUT
        );
    }
}
