//! The MCP surface, served over stdio (`cairn mcp`) and streamable HTTP
//! ([`http_service`], mounted by the gateway at `/mcp`): one MCP tool per
//! registry entry, notes, tasks and the board as resources
//! ([`resources`]), subscriptions driven by the change feed
//! ([`subscriptions`]), prompts ([`prompts`]), completions ([`completion`])
//! the session's warnings and errors as log notifications ([`logging`]), and
//! progress and cancellation for long tools (`CairnMcp::call_watched`).
//! Every answer is made from the tools' envelopes at the agent tier.
//!
//! The tool list is dynamic (made from [`REGISTRY`]), so [`CairnMcp`]
//! implements `ServerHandler` by hand instead of through rmcp's macros.

mod completion;
mod idempotency;
mod lean;
mod logging;
pub mod projects;
mod prompts;
pub mod refusal;
pub mod resources;
mod sessions;
mod stdio;
mod subscriptions;

use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, ErrorCode as RpcErrorCode, GetPromptRequestParams, GetPromptResponse,
    Implementation, InitializeRequestParams, InitializeResult, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool, ToolAnnotations,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::envelope::{self, Envelope, ErrorCategory, Form, Meta, Tier, ToolError};
use crate::tools::live::FeedHub;
use crate::tools::sets::ToolSet;
use crate::tools::{Cairn, Effect, Progress, REGISTRY, Signal, ToolDef, registry};

/// What an agent is told when it connects: how to read every answer.
pub const INSTRUCTIONS: &str = "cairn is a coordination hub: a task board with claims, notes, \
a link graph and full-text search. Every tool answers with one JSON envelope \
{ok, data | error, meta}. Three rules: (1) branch on `ok` first, then on `error.code` \
(never on `error.message`); `error.details` and `error.suggestions` say how to fix the call. \
(2) Retry only when `error.retryable` is true, after `error.retry_after_ms` when given; \
otherwise change the call. (3) When `meta.truncated` is true the answer was cut to fit your \
budget: each `meta.trimmed` entry names the cut (`path` into `data`, `from` items produced, \
`to` items kept), so narrow the query (filters, a smaller `limit`, a cursor) instead of \
repeating it. Ids accept a unique prefix of at least 6 characters. A writing tool's \
`idempotency_key` makes a retry safe: for 24 hours every call with the same key and arguments \
gets the first final answer again (other arguments: `idempotency_key_reused`; while the first \
runs: `idempotency_request_in_progress`, retryable). Notes and tasks are also \
resources (`cairn://notes/{slug}`, `cairn://tasks/{id}`, `cairn://board`); prompts \
`claim_next_task`, `hand_over_task` and `summarise_board_changes` script the common workflows.";

/// The MCP server for one session over one application. Each session (one
/// stdio connection, one streamable HTTP session) gets its own: its
/// subscriptions and log level are its own; the change feed pump is shared.
#[derive(Clone)]
pub struct CairnMcp {
    cairn: Cairn,
    feed: Arc<FeedHub>,
    shutdown: CancellationToken,
    session: Arc<Session>,
    structured: StructuredContent,
    /// The tools the session lists and may call, unless a request names
    /// its own (`/mcp?tools=`, see [`tool_set_of`]).
    tools: ToolSet,
}

/// How a successful tool result carries its `structuredContent`, which is
/// the same JSON as its text block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StructuredContent {
    /// As a value, which rmcp serializes (streamable HTTP, tests).
    Value,
    /// Left out of the result, for the transport to write from the text
    /// block as it is (stdio: see [`stdio`]). That saves building the
    /// envelope again as a value and serializing it a second time.
    FromText,
}

/// What one session remembers between requests.
#[derive(Default)]
struct Session {
    subscriptions: subscriptions::Subscriptions,
    log: logging::SessionLog,
}

/// A tool's answer read back from the envelope: data on success, the
/// failure envelope (as sent) otherwise.
pub(crate) struct Answer {
    pub data: Value,
    pub meta: Meta,
}

/// A failure to hand to the client as a protocol error carrying the envelope.
pub(crate) struct Failure {
    category: ErrorCategory,
    message: String,
    envelope: Value,
}

impl Failure {
    /// A failure made here (not by a tool), e.g. a URI naming no resource.
    pub(crate) fn new(method: &str, error: ToolError) -> Self {
        let meta = Meta::new(method, "", &envelope::new_request_id());
        Self::from_envelope(Envelope::failure(error, meta))
    }

    fn from_envelope(envelope: Envelope) -> Self {
        let (category, message) = match &envelope.outcome {
            Err(e) => (e.category, e.message.clone()),
            Ok(_) => (ErrorCategory::Internal, "not a failure".to_owned()),
        };
        let text = envelope::render(envelope, Tier::Agent, Form::Envelope);
        Self {
            category,
            message,
            envelope: serde_json::from_str(&text).unwrap_or(Value::Null),
        }
    }

    /// The JSON-RPC error: invalid params for a call to fix, `not_found` as
    /// `not_found_code` (resources use -32002), internal error otherwise;
    /// `data` is the failure envelope, so `error.code` is a registry code.
    pub(crate) fn into_rpc(self, not_found_code: RpcErrorCode) -> McpError {
        let code = match self.category {
            ErrorCategory::Validation => RpcErrorCode::INVALID_PARAMS,
            ErrorCategory::NotFound => not_found_code,
            _ => RpcErrorCode::INTERNAL_ERROR,
        };
        McpError::new(code, self.message, Some(self.envelope))
    }
}

impl CairnMcp {
    /// A server with a change feed pump of its own (stdio, tests).
    pub fn new(cairn: Cairn) -> Self {
        Self::with_feed(cairn, Arc::default(), CancellationToken::new())
    }

    /// A server sharing `feed`, whose pump stops when `shutdown` is cancelled.
    pub fn with_feed(cairn: Cairn, feed: Arc<FeedHub>, shutdown: CancellationToken) -> Self {
        Self {
            cairn,
            feed,
            shutdown,
            session: Arc::default(),
            structured: StructuredContent::Value,
            tools: ToolSet::default(),
        }
    }

    /// Runs one tool call and turns its envelope into an MCP tool result.
    async fn run(
        &self,
        def: &'static ToolDef,
        arguments: Option<JsonObject>,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let request_id = envelope::new_request_id();
        // One span for the call, the tool's own: the lines logged here and
        // inside the tool all name the tool and the request.
        let span = crate::tools::tool_span(def, &request_id);
        let tool_span = span.clone();
        let mut args = arguments.unwrap_or_default();
        async {
            let claimed =
                match idempotency::begin(&self.cairn, def, &mut args, &request_id, context).await {
                    idempotency::Keyed::Unkeyed => None,
                    idempotency::Keyed::Run(claimed) => Some(claimed),
                    idempotency::Keyed::Answer { ok, text } => {
                        return self.tool_result(ok, text, None);
                    }
                };
            let envelope = self
                .call_watched(def, Value::Object(args), &request_id, context, tool_span)
                .await;
            let ok = envelope.is_ok();
            let runtime_ms = envelope.meta.runtime_ms;
            match &envelope.outcome {
                Ok(_) => tracing::info!(ok, runtime_ms, "tool call answered"),
                Err(e) => tracing::info!(ok, runtime_ms, code = %e.code, "tool call answered"),
            }
            self.session.log.report(context, &envelope).await;
            let outcome = idempotency::outcome_of(&envelope);
            let (text, structured) = match self.structured {
                StructuredContent::Value => envelope::render_structured(envelope, Tier::Agent),
                StructuredContent::FromText => (
                    envelope::render(envelope, Tier::Agent, Form::Envelope),
                    None,
                ),
            };
            if let Some(claimed) = claimed {
                idempotency::settle(claimed, outcome, &text).await;
            }
            self.tool_result(ok, text, structured)
        }
        .instrument(span)
        .await
    }

    /// Runs the tool with a [`Signal`]: its progress reports become
    /// `notifications/progress` when the request carried a progress token
    /// (all sent before the answer), and `notifications/cancelled` for the
    /// request cancels the signal, so a long tool stops at its next safe point.
    async fn call_watched(
        &self,
        def: &'static ToolDef,
        args: Value,
        request_id: &str,
        context: &RequestContext<RoleServer>,
        span: tracing::Span,
    ) -> Envelope {
        let (signal, forwarder) = match context.meta.get_progress_token() {
            Some(token) => {
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
                let peer = context.peer.clone();
                let forwarder = tokio::spawn(async move {
                    while let Some(step) = rx.recv().await {
                        let mut param =
                            ProgressNotificationParam::new(token.clone(), step.done as f64)
                                .with_message(step.message);
                        if let Some(total) = step.total {
                            param = param.with_total(total as f64);
                        }
                        // A client that has gone away is not the tool's problem.
                        let _ = peer.notify_progress(param).await;
                    }
                });
                let signal = Signal::reporting(move |step| {
                    let _ = tx.send(step);
                });
                (Arc::new(signal), Some(forwarder))
            }
            None => (Arc::default(), None),
        };
        let call = self
            .cairn
            .call_def_with(def, args, request_id, signal.clone(), span);
        tokio::pin!(call);
        let envelope = tokio::select! {
            envelope = &mut call => envelope,
            () = context.ct.cancelled() => {
                tracing::info!("the client cancelled the call");
                signal.cancel();
                call.await
            }
        };
        // The tool is done and its signal dropped with ours: the forwarder
        // drains what was reported and ends.
        drop(signal);
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        envelope
    }

    /// A tool's answer as an agent would get it (agent tier, trimmed and
    /// marked), for what is shown to the client: resources and prompts.
    pub(crate) async fn agent_call(
        &self,
        tool: &str,
        args: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Answer, Failure> {
        let envelope = self
            .cairn
            .call(tool, args, &envelope::new_request_id())
            .await;
        self.session.log.report(context, &envelope).await;
        if !envelope.is_ok() {
            return Err(Failure::from_envelope(envelope));
        }
        let text = envelope::render(envelope, Tier::Agent, Form::Envelope);
        let mut value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let meta = serde_json::from_value(value["meta"].take())
            .map_err(|_| Failure::new(tool, ToolError::internal()))?;
        Ok(Answer {
            data: value["data"].take(),
            meta,
        })
    }

    /// A tool's data in full (no budget), for lookups whose result the
    /// client never sees whole: completions, resolving a subscribed URI.
    pub(crate) async fn lookup(&self, tool: &str, args: Value) -> Result<Value, Failure> {
        let envelope = self
            .cairn
            .call(tool, args, &envelope::new_request_id())
            .await;
        match envelope.outcome {
            Ok(data) => Ok(data),
            Err(_) => Err(Failure::from_envelope(envelope)),
        }
    }

    /// One text item with the envelope; on success the same envelope as
    /// `structuredContent`: `structured` when the render made it, the text
    /// read back when not, or nothing for the transport to fill in
    /// ([`StructuredContent::FromText`]).
    fn tool_result(&self, ok: bool, text: String, structured: Option<Value>) -> CallToolResult {
        if !ok {
            return CallToolResult::error(vec![ContentBlock::text(text)]);
        }
        let structured = match self.structured {
            StructuredContent::FromText => None,
            StructuredContent::Value => {
                structured.or_else(|| serde_json::from_str::<Value>(&text).ok())
            }
        };
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = structured;
        result
    }
}

impl ServerHandler for CairnMcp {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_prompts()
            .enable_completions();
        // Logging is the 2025 revisions' mechanism (dropped in 2026-07-28).
        #[allow(deprecated)]
        let capabilities = capabilities.enable_logging().build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("cairn", env!("CARGO_PKG_VERSION")).with_title("cairn"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let disabled = &self.cairn.config().disabled_modules;
        let set = tool_set_of(&context, &self.tools);
        // A token's scope hides the tools it may not call.
        let caller = caller_of(&context);
        let tools = refusal::callable(caller)
            .filter(|(_, def)| !disabled.contains(&def.module) && set.contains(def))
            .map(|(index, _)| tool_list()[index].clone())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tool_list().iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
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
        let set = tool_set_of(&context, &self.tools);
        if !set.contains(def) {
            return Ok(refusal::refused_call(def.name, set.refusal(def)).into());
        }
        if let Err(error) = refusal::scope_check(caller_of(&context), def) {
            return Ok(refusal::refused_call(def.name, error).into());
        }
        Ok(self.run(def, request.arguments, &context).await.into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let cursor = request.and_then(|r| r.cursor);
        resources::list(self, cursor.as_deref())
            .await
            .map_err(|f| f.into_rpc(RpcErrorCode::RESOURCE_NOT_FOUND))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        resources::read(self, &request.uri, &context)
            .await
            .map(Into::into)
            .map_err(|f| f.into_rpc(RpcErrorCode::RESOURCE_NOT_FOUND))
    }

    #[allow(deprecated)] // resources/subscribe is how the 2025 revisions subscribe
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let target = subscriptions::resolve(self, &request.uri)
            .await
            .map_err(|f| f.into_rpc(RpcErrorCode::RESOURCE_NOT_FOUND))?;
        self.session
            .subscriptions
            .add(request.uri, target, self, &context.peer);
        Ok(())
    }

    #[allow(deprecated)] // resources/unsubscribe belongs with resources/subscribe
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.session.subscriptions.remove(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let head = *self.cairn.store().watch_changes().borrow();
        self.session.subscriptions.accept_listen(head);
        Some(subscriptions::acceptable(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        subscriptions::listen(self, context).await
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        self.session.subscriptions.join_feed(self);
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // `list_changed` flows from the start of a session, subscribed or not.
        self.session.subscriptions.start(self, &context.peer);
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let arguments = request.arguments.unwrap_or_default();
        prompts::get(self, &request.name, &arguments, &context)
            .await
            .map(Into::into)
            .map_err(|f| f.into_rpc(RpcErrorCode::INVALID_PARAMS))
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        completion::complete(self, &request)
            .await
            .map(CompleteResult::new)
            .map_err(|f| f.into_rpc(RpcErrorCode::INVALID_PARAMS))
    }

    #[allow(deprecated)] // logging/setLevel is the 2025 revisions' mechanism
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if logging::dropped_in(context.protocol_version().as_ref()) {
            return Err(McpError::method_not_found::<
                rmcp::model::SetLevelRequestMethod,
            >());
        }
        self.session.log.set_level(request.level);
        Ok(())
    }
}

/// The gateway's caller of a request over streamable HTTP (the token and
/// its scope); none over stdio.
fn caller_of(context: &RequestContext<RoleServer>) -> Option<&crate::auth::Caller> {
    context
        .extensions
        .get::<axum::http::request::Parts>()?
        .extensions
        .get::<crate::auth::Caller>()
}

/// The tool set a request over streamable HTTP named (`/mcp?tools=`: the
/// gateway checks it and puts it in the request's extensions), else the
/// session's own.
fn tool_set_of<'a>(context: &'a RequestContext<RoleServer>, own: &'a ToolSet) -> &'a ToolSet {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<ToolSet>())
        .unwrap_or(own)
}

/// The MCP tool list, in registry order; built once.
pub fn tool_list() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(|| REGISTRY.iter().map(mcp_tool).collect())
}

fn mcp_tool(def: &ToolDef) -> Tool {
    let mut input = lean::input((def.input_schema)().to_value());
    idempotency::declare(def, &mut input);
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
/// typed by the tool's output schema (see [`lean::output`]).
pub fn envelope_output_schema(def: &ToolDef) -> JsonObject {
    lean::output((def.output_schema)().to_value())
}

/// Serves MCP on stdin/stdout until the client hangs up. Only protocol frames
/// go to stdout; logs go to stderr (see `cli::logging`).
pub async fn serve_stdio(cairn: Cairn, tools: ToolSet) -> std::io::Result<()> {
    let (read, write) = rmcp::transport::io::stdio_pipes();
    serve_lines_with(cairn, tools, read, write).await
}

/// Serves MCP as [`serve_stdio`] does, on any pair of byte streams (tests
/// serve it on an in-memory pipe), until the client hangs up.
pub async fn serve_lines<R, W>(cairn: Cairn, read: R, write: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    serve_lines_with(cairn, ToolSet::default(), read, write).await
}

/// [`serve_lines`] listing and calling only the tools of `tools`.
pub async fn serve_lines_with<R, W>(
    cairn: Cairn,
    tools: ToolSet,
    read: R,
    write: W,
) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let server = CairnMcp {
        structured: StructuredContent::FromText,
        tools,
        ..CairnMcp::new(cairn)
    };
    let running = server
        .serve(stdio::Stdio::new(read, write))
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
    /// The change feed broadcast that drives resource subscriptions (the
    /// gateway shares its own with the SSE streams).
    pub feed: Arc<FeedHub>,
    /// The tools a session lists and may call when its requests name no
    /// set of their own (`CAIRN_TOOLS`; `all` by default).
    pub tools: ToolSet,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            shutdown: CancellationToken::new(),
            feed: Arc::default(),
            tools: ToolSet::default(),
        }
    }
}

/// The streamable HTTP transport as a tower service.
pub type McpHttpService = StreamableHttpService<CairnMcp, sessions::GaugedSessions>;

/// MCP over streamable HTTP, loopback hosts only; mount it with
/// `Router::nest_service("/mcp", mcp::http_service(cairn))`.
pub fn http_service(cairn: Cairn) -> McpHttpService {
    http_service_with(cairn, HttpOptions::default())
}

/// MCP over streamable HTTP with explicit settings.
pub fn http_service_with(cairn: Cairn, options: HttpOptions) -> McpHttpService {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts)
        .with_cancellation_token(options.shutdown.clone());
    let (feed, shutdown, tools) = (options.feed, options.shutdown, options.tools);
    StreamableHttpService::new(
        // A server per session: subscriptions and the log level are per session.
        move || {
            Ok(CairnMcp {
                tools: tools.clone(),
                ..CairnMcp::with_feed(cairn.clone(), feed.clone(), shutdown.clone())
            })
        },
        Arc::new(sessions::GaugedSessions::default()),
        config,
    )
}

/// What the tool manual (docs/tools.md) says about MCP beyond tools, made from the same
/// definitions the server serves (resource templates, prompts).
pub fn agents_md_section() -> String {
    let mut out = String::from(
        "## MCP resources, prompts and notifications\n\n\
         Over MCP, notes, tasks and the board are also resources (`resources/list` pages \
         by cursor: the board, then notes, then tasks, most recently updated first). A read \
         accepts what the tools accept (an id prefix of 6+ characters, a note's slug), fits \
         the agent budget, and reports cuts in the contents' `_meta` (`truncated`, \
         `trimmed`, as in an envelope's `meta`). A failed read or prompt is a protocol \
         error whose `data` is the failure envelope: branch on `data.error.code`.\n\n\
         | URI | what | MIME type |\n|---|---|---|\n\
         | `cairn://board` | the board, every column | `application/json` |\n",
    );
    for template in resources::templates() {
        out.push_str(&format!(
            "| `{}` | {} | `{}` |\n",
            template.uri_template,
            template.description.unwrap_or_default(),
            template.mime_type.unwrap_or_default(),
        ));
    }
    out.push_str(
        "\nSubscribe to any of these URIs (`resources/subscribe`; on protocol 2026-07-28 \
         `subscriptions/listen`) to get `notifications/resources/updated` when anyone \
         changes it (for the board: any task); `notifications/resources/list_changed` comes \
         when a task or note is created or a note deleted. `completion/complete` completes \
         the template variables and prompt arguments (task id prefixes, note slugs, tags, \
         agent names, statuses). With `logging/setLevel` (2025 revisions) or a request's \
         `io.modelcontextprotocol/logLevel` (2026-07-28) the session's failures arrive as \
         log messages: `error` for internal ones, `warning` for a busy or missing store and \
         for `meta.warnings`, `notice` for calls to fix. `graph_doctor` with `fix` \
         reports `notifications/progress` (scan, found, repaired) when the call carries a \
         progress token, and a cancelled one stops before its repair.\n\nPrompts:\n\n",
    );
    for prompt in prompts::list() {
        out.push_str(&format!(
            "- `{}`: {}\n",
            prompt.name,
            prompt.description.as_deref().unwrap_or_default()
        ));
        for argument in prompt.arguments.iter().flatten() {
            let optional = if argument.required == Some(true) {
                ""
            } else {
                " (optional)"
            };
            out.push_str(&format!(
                "  - `{}`{optional}: {}\n",
                argument.name,
                argument.description.as_deref().unwrap_or_default()
            ));
        }
    }
    out.push('\n');
    out.push_str(idempotency::AGENTS_MD);
    out
}
