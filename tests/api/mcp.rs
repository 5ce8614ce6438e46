//! The MCP surface, driven by the real rmcp client over both transports:
//! in-process over `tokio::io::duplex`, and streamable HTTP served by axum on
//! 127.0.0.1:0. Every scenario runs on both (`over_duplex`, `over_http`).

use cairn::mcp;
use cairn::tools::{Cairn, Config, REGISTRY};
use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorCode as RpcErrorCode};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::{Map, Value, json};

/// A connected client and what keeps its server alive.
pub struct McpHarness {
    pub client: RunningService<RoleClient, ()>,
    /// The application behind the server, for seeding data the tools cannot make.
    pub cairn: Cairn,
    _dir: tempfile::TempDir,
    _server: tokio::task::JoinHandle<()>,
}

#[derive(Clone, Copy, Debug)]
pub enum Transport {
    /// What `cairn mcp` serves on stdin/stdout, on an in-memory pipe.
    Duplex,
    Http,
}

/// A fresh store in a temporary directory.
pub fn fresh_cairn(config: Config) -> (Cairn, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = cairn::store::open_sqlite(&dir.path().join("cairn.db")).expect("store opens");
    (Cairn::new(store, config), dir)
}

pub async fn connect(transport: Transport) -> McpHarness {
    connect_with(transport, Config::default()).await
}

pub async fn connect_with(transport: Transport, config: Config) -> McpHarness {
    let (cairn, dir) = fresh_cairn(config);
    connect_to(transport, cairn, dir).await
}

/// Connects a client to `cairn`, which may already hold data.
pub async fn connect_to(transport: Transport, cairn: Cairn, dir: tempfile::TempDir) -> McpHarness {
    let (client, server) = match transport {
        Transport::Duplex => {
            let (server_io, client_io) = tokio::io::duplex(64 * 1024);
            let (read, write) = tokio::io::split(server_io);
            let server = tokio::spawn({
                let cairn = cairn.clone();
                async move {
                    let _ = cairn::mcp::serve_lines(cairn, read, write).await;
                }
            });
            let client = ().serve(client_io).await.expect("client initializes");
            (client, server)
        }
        Transport::Http => {
            let (url, server) = serve_http(cairn.clone()).await;
            let client =
                ().serve(StreamableHttpClientTransport::from_uri(url))
                    .await
                    .expect("client initializes over HTTP");
            (client, server)
        }
    };
    McpHarness {
        client,
        cairn,
        _dir: dir,
        _server: server,
    }
}

/// Mounts `http_service` the way the gateway does and serves it on a free port.
pub async fn serve_http(cairn: Cairn) -> (String, tokio::task::JoinHandle<()>) {
    let app = axum::Router::new().nest_service("/mcp", mcp::http_service(cairn));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local addr");
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/mcp"), server)
}

impl McpHarness {
    pub async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        self.try_call(tool, arguments)
            .await
            .unwrap_or_else(|e| panic!("{tool} answered with a protocol error: {e}"))
    }

    pub async fn try_call(
        &self,
        tool: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ServiceError> {
        let arguments: Map<String, Value> = match arguments {
            Value::Object(map) => map,
            other => panic!("arguments must be an object, got {other}"),
        };
        self.client
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
            .await
    }

    /// Calls a tool that must succeed; returns its `data`.
    pub async fn ok(&self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments).await;
        let envelope = envelope_of(&result);
        assert_eq!(envelope["ok"], true, "{tool} failed: {envelope}");
        envelope["data"].clone()
    }
}

/// The names `tools/list` answers, in order.
pub async fn listed_names(client: &RunningService<RoleClient, ()>) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// The envelope in a tool result: exactly one text item holding compact JSON.
pub fn envelope_of(result: &CallToolResult) -> Value {
    assert_eq!(result.content.len(), 1, "one content item");
    let text = &result.content[0]
        .as_text()
        .expect("the content item is text")
        .text;
    serde_json::from_str(text).expect("the text is one JSON envelope")
}

/// The text of the one content item.
pub fn text_of(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("text").text
}

/// One `#[tokio::test]` per transport for a scenario `async fn(Transport)`.
macro_rules! on_both_transports {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn over_duplex() {
                super::$scenario(super::Transport::Duplex).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn over_http() {
                super::$scenario(super::Transport::Http).await
            }
        }
    )*};
}

on_both_transports!(
    initialize_tells_the_three_rules,
    lists_one_tool_per_registry_entry,
    input_schemas_state_the_bounds_the_tools_enforce,
    annotations_say_which_tools_only_read_and_which_delete,
    success_is_text_plus_the_same_structured_envelope,
    every_call_gets_a_fresh_request_id,
    invalid_argument_values_are_envelopes_not_protocol_errors,
    unknown_tool_is_a_protocol_error_with_suggestions,
    disabled_module_answers_module_disabled,
    unknown_task_is_task_not_found,
    stale_write_is_version_conflict_with_current_version,
    ambiguous_prefix_lists_candidates,
);

/// Inserts a task with an id the test chooses (the tools always pick random ids).
pub fn seed_task(cairn: &Cairn, id: &str, title: &str) {
    let task = crate::tool_helpers::chosen_task(id, title);
    cairn
        .store()
        .task_create(
            &task,
            &cairn::store::Timestamp::parse(crate::tool_helpers::FIXTURE_TIME).unwrap(),
        )
        .expect("seed task");
}

async fn initialize_tells_the_three_rules(transport: Transport) {
    let h = connect(transport).await;
    let info = h.client.peer_info().expect("server info after initialize");
    let server = info.server_info.as_ref().expect("server identity");
    assert_eq!(server.name, "cairn");
    assert!(info.capabilities.tools.is_some(), "tools capability");
    let instructions = info.instructions.as_deref().expect("instructions");
    for rule in [
        "`ok`",
        "`error.code`",
        "`error.retryable`",
        "`meta.truncated`",
        "`meta.trimmed`",
    ] {
        assert!(instructions.contains(rule), "instructions mention {rule}");
    }
}

async fn lists_one_tool_per_registry_entry(transport: Transport) {
    let h = connect(transport).await;
    let tools = h.client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let registry: Vec<&str> = REGISTRY.iter().map(|t| t.name).collect();
    assert_eq!(names, registry);
    for (tool, def) in tools.iter().zip(REGISTRY) {
        assert_eq!(tool.description.as_deref(), Some(def.description));
        assert_eq!(tool.input_schema.get("type"), Some(&json!("object")));
        let output = tool.output_schema.as_ref().expect("output schema");
        assert_eq!(output.get("type"), Some(&json!("object")));
        assert_eq!(output["properties"]["ok"], json!({"const": true}));
        assert_eq!(output["required"], json!(["ok", "data", "meta"]));
        let data = &output["properties"]["data"];
        // The lean list (issue 44) drops descriptions and bounds from output
        // schemas; the fields and which are required stay the tool's.
        let expected = (def.output_schema)().to_value();
        let keys = |schema: &Value| -> Vec<String> {
            schema["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default()
        };
        assert_eq!(
            keys(data),
            keys(&expected),
            "{}: `data` is typed by the tool's output schema",
            def.name
        );
        assert_eq!(
            data.get("required"),
            expected.get("required"),
            "{}",
            def.name
        );
        assert!(
            output["properties"]["meta"]["properties"]["truncated"].is_object(),
            "meta is typed"
        );
        assert_no_dangling_refs(&Value::Object((**output).clone()));
    }
}

async fn annotations_say_which_tools_only_read_and_which_delete(transport: Transport) {
    let h = connect(transport).await;
    let tools = h.client.list_all_tools().await.expect("tools/list");
    let hints = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).expect("listed");
        let a = tool.annotations.as_ref().expect("annotated");
        (a.read_only_hint, a.destructive_hint, a.open_world_hint)
    };
    assert_eq!(hints("task_get"), (Some(true), Some(false), Some(false)));
    assert_eq!(hints("search"), (Some(true), Some(false), Some(false)));
    assert_eq!(hints("task_claim"), (Some(false), Some(false), Some(false)));
    assert_eq!(hints("note_delete"), (Some(false), Some(true), Some(false)));
    assert_eq!(hints("link_remove"), (Some(false), Some(true), Some(false)));
}

async fn input_schemas_state_the_bounds_the_tools_enforce(transport: Transport) {
    use cairn::tools::common::{MAX_LIMIT, MIN_LIMIT, MIN_PREFIX};
    use cairn::tools::graph::MAX_DEPTH;
    let h = connect(transport).await;
    let tools = h.client.list_all_tools().await.expect("tools/list");
    let property = |tool: &str, field: &str| -> Value {
        let tool = tools.iter().find(|t| t.name == tool).expect("listed");
        tool.input_schema["properties"][field].clone()
    };
    for tool in ["task_list", "task_board", "note_list", "search"] {
        let limit = property(tool, "limit");
        assert_eq!(limit["minimum"], MIN_LIMIT, "{tool}.limit minimum");
        assert_eq!(limit["maximum"], MAX_LIMIT, "{tool}.limit maximum");
    }
    for tool in ["graph_neighbours", "graph_export"] {
        let depth = property(tool, "depth");
        assert_eq!(depth["minimum"], 1, "{tool}.depth minimum");
        assert_eq!(depth["maximum"], MAX_DEPTH, "{tool}.depth maximum");
    }
    assert_eq!(property("task_get", "id")["minLength"], MIN_PREFIX);
    assert_eq!(property("link_remove", "id")["minLength"], MIN_PREFIX);
    assert_eq!(property("task_create", "title")["minLength"], 1);
    // A clamped value is described, and bounded by what is accepted at all.
    let ttl = property("task_claim", "ttl_minutes");
    assert_eq!(ttl["minimum"], 0);
    assert_eq!(ttl["maximum"], 525_600);
    assert!(ttl["description"].as_str().unwrap().contains("clamped"));
    // Every input is bounded (issue 10): a title, tags, an agent, a query.
    assert_eq!(property("task_create", "title")["maxLength"], 300);
    assert_eq!(property("task_create", "tags")["maxItems"], 20);
    assert_eq!(property("task_create", "tags")["items"]["maxLength"], 50);
    assert_eq!(property("task_claim", "agent")["maxLength"], 100);
    assert_eq!(property("search", "q")["maxLength"], 1000);
}

/// Every `$ref` resolves inside the one schema document (clients validate with it).
fn assert_no_dangling_refs(schema: &Value) {
    fn walk(node: &Value, root: &Value) {
        match node {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    let pointer = r.strip_prefix('#').expect("local reference");
                    assert!(root.pointer(pointer).is_some(), "dangling $ref {r}");
                }
                map.values().for_each(|v| walk(v, root));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, root)),
            _ => {}
        }
    }
    walk(schema, schema);
}

async fn success_is_text_plus_the_same_structured_envelope(transport: Transport) {
    let h = connect(transport).await;
    let result = h.call("health", json!({})).await;
    assert_eq!(result.is_error, Some(false));
    let text = text_of(&result);
    assert!(!text.contains('\n'), "compact JSON");
    let envelope = envelope_of(&result);
    assert_eq!(envelope["ok"], true);
    assert_eq!(envelope["meta"]["tool"], "health");
    assert_eq!(envelope["meta"]["truncated"], false);
    assert_eq!(
        envelope["meta"]["tokens_estimated"],
        json!(cairn::envelope::estimate_tokens(text)),
        "agent-tier rendering counts the emitted text"
    );
    assert_eq!(result.structured_content.as_ref(), Some(&envelope));
}

async fn every_call_gets_a_fresh_request_id(transport: Transport) {
    let h = connect(transport).await;
    h.ok("health", json!({})).await;
    let first = envelope_of(&h.call("health", json!({})).await);
    let second = envelope_of(&h.call("health", json!({})).await);
    let id = |e: &Value| e["meta"]["request_id"].as_str().unwrap().to_owned();
    assert!(!id(&first).is_empty());
    assert_ne!(id(&first), id(&second));
}

async fn invalid_argument_values_are_envelopes_not_protocol_errors(transport: Transport) {
    let h = connect(transport).await;
    let result = h.call("health", json!({"verbose": "very"})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        result.structured_content.is_none(),
        "no structured content on failure"
    );
    let envelope = envelope_of(&result);
    assert_eq!(envelope["ok"], false);
    assert_eq!(envelope["error"]["category"], "validation");
    assert_eq!(envelope["error"]["retryable"], false);
    assert_eq!(
        envelope["error"]["request_id"], envelope["meta"]["request_id"],
        "the error carries the call's request id"
    );
    let unknown = envelope_of(&h.call("task_create", json!({"titel": "x"})).await);
    assert_eq!(unknown["error"]["code"], "unknown_field");
    assert_eq!(unknown["error"]["suggestions"], json!(["title"]));
}

async fn unknown_tool_is_a_protocol_error_with_suggestions(transport: Transport) {
    let h = connect(transport).await;
    let error = h
        .try_call("helth", json!({}))
        .await
        .expect_err("protocol error");
    let ServiceError::McpError(error) = error else {
        panic!("expected a JSON-RPC error, got {error:?}");
    };
    assert_eq!(error.code, RpcErrorCode::INVALID_PARAMS);
    assert!(error.message.contains("helth"));
    let data = error.data.expect("error data");
    assert_eq!(data["suggestions"], json!(["health"]));
}

async fn disabled_module_answers_module_disabled(transport: Transport) {
    let config = Config {
        disabled_modules: [cairn::tools::Module::System].into_iter().collect(),
        ..Config::default()
    };
    let h = connect_with(transport, config).await;
    let tools = h.client.list_all_tools().await.expect("tools/list");
    assert!(
        tools.iter().all(|t| t.name != "health"),
        "a disabled module's tools are not offered"
    );
    let result = h.call("health", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(envelope_of(&result)["error"]["code"], "module_disabled");
}

#[tokio::test]
async fn http_rejects_a_host_outside_the_allowed_list() {
    let (cairn, _dir) = fresh_cairn(Config::default());
    let (url, _server) = serve_http(cairn).await;
    let response = reqwest::Client::new()
        .post(&url)
        .header("host", "evil.example")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn http_accepts_configured_hosts() {
    let (cairn, _dir) = fresh_cairn(Config::default());
    let options = mcp::HttpOptions {
        allowed_hosts: vec!["cairn.internal".into()],
        ..Default::default()
    };
    let app = axum::Router::new().nest_service("/mcp", mcp::http_service_with(cairn, options));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let _server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let send = |host: &'static str| {
        reqwest::Client::new()
            .post(format!("http://{addr}/mcp"))
            .header("host", host)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
            .send()
    };
    assert_eq!(send("cairn.internal").await.unwrap().status(), 200);
    assert_eq!(send("127.0.0.1").await.unwrap().status(), 403);
}

#[test]
fn output_schemas_hoist_every_definition_to_the_root() {
    for def in REGISTRY {
        let schema = Value::Object(mcp::envelope_output_schema(def));
        assert_no_dangling_refs(&schema);
        assert!(schema["properties"]["data"].get("$defs").is_none());
    }
}

#[test]
fn tool_list_is_made_from_the_registry_once() {
    let first = mcp::tool_list();
    let again = mcp::tool_list();
    assert!(std::ptr::eq(first, again));
    assert_eq!(first.len(), REGISTRY.len());
}

async fn unknown_task_is_task_not_found(transport: Transport) {
    let h = connect(transport).await;
    let result = h.call("task_get", json!({"id": "0123456789abcdef"})).await;
    assert_eq!(result.is_error, Some(true));
    let envelope = envelope_of(&result);
    assert_eq!(envelope["ok"], false);
    assert_eq!(envelope["error"]["category"], "not_found");
    assert_eq!(envelope["error"]["code"], "task_not_found");
    assert_eq!(envelope["error"]["retryable"], false);
}

async fn stale_write_is_version_conflict_with_current_version(transport: Transport) {
    let h = connect(transport).await;
    let task = h
        .ok("task_create", json!({"title": "write me twice"}))
        .await;
    let id = task["id"].as_str().unwrap();
    assert_eq!(task["version"], 1);
    let updated = h
        .ok(
            "task_update",
            json!({"id": id, "title": "second", "expected_version": 1}),
        )
        .await;
    assert_eq!(updated["version"], 2);
    let result = h
        .call(
            "task_update",
            json!({"id": id, "title": "third", "expected_version": 1}),
        )
        .await;
    assert_eq!(result.is_error, Some(true));
    let envelope = envelope_of(&result);
    assert_eq!(envelope["error"]["code"], "version_conflict");
    assert_eq!(envelope["error"]["category"], "conflict");
    assert_eq!(envelope["error"]["details"]["current_version"], 2);
    let now = h.ok("task_get", json!({"id": id})).await;
    assert_eq!(now["title"], "second", "nothing was written");
}

async fn ambiguous_prefix_lists_candidates(transport: Transport) {
    let h = connect(transport).await;
    seed_task(&h.cairn, &format!("feed00{:026x}", 1), "twin one");
    seed_task(&h.cairn, &format!("feed00{:026x}", 2), "twin two");
    let result = h.call("task_get", json!({"id": "feed00"})).await;
    assert_eq!(result.is_error, Some(true));
    let envelope = envelope_of(&result);
    assert_eq!(envelope["error"]["code"], "ambiguous_id_prefix");
    assert_eq!(envelope["error"]["category"], "validation");
    let candidates = envelope["error"]["details"]["candidates"]
        .as_array()
        .unwrap();
    let titles: Vec<&str> = candidates
        .iter()
        .map(|c| c["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["twin one", "twin two"]);
    assert_eq!(candidates[0]["id"], format!("feed00{:026x}", 1));
    // The full id resolves.
    let one = h
        .ok("task_get", json!({"id": format!("feed00{:025x}1", 0)}))
        .await;
    assert_eq!(one["title"], "twin one");
}

#[tokio::test]
async fn every_tool_output_schema_accepts_its_success_envelope() {
    // A cheap structural check of the schemas the Python SDK validates for real:
    // each property the data schema requires is present in a real answer.
    let h = connect(Transport::Duplex).await;
    let task = h.ok("task_create", json!({"title": "schema"})).await;
    let tools = h.client.list_all_tools().await.unwrap();
    let answer = envelope_of(&h.call("task_get", json!({"id": task["id"]})).await);
    let schema = &tools
        .iter()
        .find(|t| t.name == "task_get")
        .unwrap()
        .output_schema;
    let data_schema = &schema.as_ref().unwrap()["properties"]["data"];
    for key in data_schema["required"].as_array().unwrap() {
        let key = key.as_str().unwrap();
        assert!(
            answer["data"].get(key).is_some(),
            "task_get data has `{key}`"
        );
    }
}

/// The gateway's whole stack (token rule, compression, timeout, body limit,
/// framework errors) with MCP at `/mcp`, exactly as `cairn serve` serves it.
async fn serve_through_gateway(
    token: &str,
) -> (String, tempfile::TempDir, tokio::task::JoinHandle<()>) {
    let (cairn, dir) = fresh_cairn(Config::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let settings = cairn::http::HttpSettings {
        bind: addr,
        token: Some(token.to_owned()),
        ..Default::default()
    };
    let app = cairn::http::app(cairn, settings);
    let server = tokio::spawn(async move {
        let _ = cairn::http::serve_listener(listener, app, std::future::pending()).await;
    });
    (format!("http://{addr}/mcp"), dir, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn works_behind_the_gateway_with_a_bearer_token() {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let (url, _dir, _server) = serve_through_gateway("s3cret").await;

    let config = StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header("s3cret");
    let client =
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await
            .expect("initialize through the gateway");
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), REGISTRY.len());
    let params = CallToolRequestParams::new("task_create")
        .with_arguments(json!({"title": "via gateway"}).as_object().unwrap().clone());
    let result = client.call_tool(params).await.expect("tools/call");
    assert_eq!(envelope_of(&result)["data"]["title"], "via gateway");

    let without_token = ().serve(StreamableHttpClientTransport::from_uri(url)).await;
    assert!(without_token.is_err(), "no token, no session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_stdout_carries_only_protocol_frames_even_at_trace_level() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    command
        .arg("--db")
        .arg(dir.path().join("cairn.db"))
        .arg("mcp")
        .env("CAIRN_LOG", "trace");
    let (transport, stderr) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn cairn mcp");
    let client = ().serve(transport).await.expect("initialize over stdio");
    let result = client
        .call_tool(CallToolRequestParams::new("health"))
        .await
        .expect("tools/call");
    assert_eq!(envelope_of(&result)["ok"], true);
    client.cancel().await.expect("hang up");
    let mut logs = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr.expect("stderr"), &mut logs)
        .await
        .unwrap();
    assert!(logs.contains("tool call answered"), "logs go to stderr");
}
