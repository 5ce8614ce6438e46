//! The MCP surface: one MCP tool per registry entry, served over stdio
//! (`cairn mcp`) and streamable HTTP ([`http_service`], mounted by the gateway
//! at `/mcp`). Every tool result is the envelope at the agent tier.
//!
//! The tool list is dynamic (made from [`REGISTRY`]), so [`CairnMcp`]
//! implements `ServerHandler` by hand instead of through rmcp's macros.

use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::envelope::{self, Form, Meta, Tier};
use crate::tools::{Cairn, Effect, REGISTRY, ToolDef, registry};

/// What an agent is told when it connects: how to read every answer.
pub const INSTRUCTIONS: &str = "cairn is a coordination hub: a task board with claims, notes, \
a link graph and full-text search. Every tool answers with one JSON envelope \
{ok, data | error, meta}. Three rules: (1) branch on `ok` first, then on `error.code` \
(never on `error.message`); `error.details` and `error.suggestions` say how to fix the call. \
(2) Retry only when `error.retryable` is true, after `error.retry_after_ms` when given; \
otherwise change the call. (3) When `meta.truncated` is true the answer was cut to fit your \
budget: each `meta.trimmed` entry names the cut (`path` into `data`, `from` items produced, \
`to` items kept), so narrow the query (filters, a smaller `limit`, a cursor) instead of \
repeating it. Ids accept a unique prefix of at least 6 characters.";

/// The MCP server over one application; its tools are [`tool_list`].
#[derive(Clone)]
pub struct CairnMcp {
    cairn: Cairn,
}

impl CairnMcp {
    pub fn new(cairn: Cairn) -> Self {
        Self { cairn }
    }

    /// Runs one tool call and turns its envelope into an MCP tool result.
    async fn run(&self, def: &'static ToolDef, arguments: Option<JsonObject>) -> CallToolResult {
        let request_id = envelope::new_request_id();
        let span = tracing::info_span!("mcp_call", tool = def.name, request_id = %request_id);
        let args = Value::Object(arguments.unwrap_or_default());
        async {
            let envelope = self.cairn.call(def.name, args, &request_id).await;
            let ok = envelope.is_ok();
            let runtime_ms = envelope.meta.runtime_ms;
            match &envelope.outcome {
                Ok(_) => tracing::info!(ok, runtime_ms, "tool call answered"),
                Err(e) => tracing::info!(ok, runtime_ms, code = %e.code, "tool call answered"),
            }
            tool_result(ok, envelope::render(envelope, Tier::Agent, Form::Envelope))
        }
        .instrument(span)
        .await
    }
}

/// One text item with the envelope; on success the same envelope as `structuredContent`.
fn tool_result(ok: bool, text: String) -> CallToolResult {
    if !ok {
        return CallToolResult::error(vec![ContentBlock::text(text)]);
    }
    let structured = serde_json::from_str::<Value>(&text).ok();
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = structured;
    result
}

impl ServerHandler for CairnMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("cairn", env!("CARGO_PKG_VERSION")).with_title("cairn"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let disabled = &self.cairn.config().disabled_modules;
        let tools = REGISTRY
            .iter()
            .zip(tool_list())
            .filter(|(def, _)| !disabled.contains(&def.module))
            .map(|(_, tool)| tool.clone())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tool_list().iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // An unknown tool is the one call the protocol itself rejects (-32602);
        // non-object arguments never get here (rmcp rejects them while parsing).
        let Some(def) = registry::find(&request.name) else {
            let suggestions = registry::nearest(&request.name, REGISTRY.iter().map(|t| t.name));
            return Err(McpError::invalid_params(
                format!("Unknown tool: {}", request.name),
                Some(json!({ "tool": request.name, "suggestions": suggestions })),
            ));
        };
        Ok(self.run(def, request.arguments).await.into())
    }
}

/// The MCP tool list, in registry order; built once.
pub fn tool_list() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(|| REGISTRY.iter().map(mcp_tool).collect())
}

fn mcp_tool(def: &ToolDef) -> Tool {
    let mut input = object((def.input_schema)().to_value());
    // MCP requires an object schema for arguments, even for a tool that takes none.
    input
        .entry("type")
        .or_insert_with(|| Value::String("object".into()));
    let annotations = ToolAnnotations::new()
        .read_only(def.effect == Effect::Reads)
        .destructive(def.effect == Effect::Deletes)
        .open_world(false);
    Tool::new(def.name, def.description, Arc::new(input))
        .with_raw_output_schema(Arc::new(envelope_output_schema(def)))
        .annotate(annotations)
}

/// The schema of the success envelope `{ok: true, data, meta}`, with `data`
/// typed by the tool's output schema. Every `$defs` entry is hoisted to the
/// root so that `#/$defs/...` references resolve inside this one document.
pub fn envelope_output_schema(def: &ToolDef) -> JsonObject {
    let mut defs = Map::new();
    let data = hoist_defs(object((def.output_schema)().to_value()), &mut defs);
    let meta = hoist_defs(
        object(crate::tools::registry::schema_of::<Meta>().to_value()),
        &mut defs,
    );
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": format!("{}_envelope", def.name),
        "description": "The success envelope; failures arrive with isError and no structured content.",
        "type": "object",
        "properties": {
            "ok": {"const": true},
            "data": data,
            "meta": meta,
        },
        "required": ["ok", "data", "meta"],
        "$defs": defs,
    });
    object(schema)
}

fn hoist_defs(mut schema: JsonObject, defs: &mut JsonObject) -> Value {
    schema.remove("$schema");
    if let Some(Value::Object(own)) = schema.remove("$defs") {
        for (name, def) in own {
            if let Some(existing) = defs.get(&name) {
                assert_eq!(
                    existing, &def,
                    "two schemas define `$defs/{name}` differently; rename one type"
                );
            }
            defs.insert(name, def);
        }
    }
    Value::Object(schema)
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        // `true` (any value) and other non-object schemas.
        _ => Map::new(),
    }
}

/// Serves MCP on stdin/stdout until the client hangs up. Only protocol frames
/// go to stdout; logs go to stderr (see `cli::init_logging`).
pub async fn serve_stdio(cairn: Cairn) -> std::io::Result<()> {
    let running = CairnMcp::new(cairn)
        .serve(rmcp::transport::io::stdio_pipes())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// Settings of the streamable HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// `Host` header values accepted (`name` or `name:port`); empty accepts any
    /// host. rmcp's default is loopback only, which guards a local server
    /// against DNS rebinding; a gateway reached under another name must list
    /// that name (or pass an empty list when it authenticates every request).
    pub allowed_hosts: Vec<String>,
    /// Cancelled on shutdown, so that open SSE streams end and a graceful
    /// shutdown does not wait on them.
    pub shutdown: CancellationToken,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            shutdown: CancellationToken::new(),
        }
    }
}

/// The streamable HTTP transport as a tower service.
pub type McpHttpService = StreamableHttpService<CairnMcp, LocalSessionManager>;

/// MCP over streamable HTTP, loopback hosts only; mount it with
/// `Router::nest_service("/mcp", mcp::http_service(cairn))`.
pub fn http_service(cairn: Cairn) -> McpHttpService {
    http_service_with(cairn, HttpOptions::default())
}

/// MCP over streamable HTTP with explicit settings.
pub fn http_service_with(cairn: Cairn, options: HttpOptions) -> McpHttpService {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts)
        .with_cancellation_token(options.shutdown);
    let server = CairnMcp::new(cairn);
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}
