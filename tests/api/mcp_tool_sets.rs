//! Tool sets (`cairn mcp --tools`, `/mcp?tools=`, `CAIRN_TOOLS`) and the
//! tool list's size in the o200k tokenizer's tokens: what an agent pays in
//! context before its first call.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use cairn::tools::sets::{CORE, ToolSet};
use cairn::tools::{Effect, REGISTRY};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, Tool};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

use crate::mcp::{envelope_of, fresh_cairn, listed_names};
use crate::process_helpers::cairn_command;

/// Tools the issues after this one add (planning, comments and history,
/// agents, messages, leases: "a dozen"). The budgets hold for today's list
/// grown by this many tools of today's average size.
const PLANNED_TOOLS: usize = 12;
/// Of those, the ones `core` will hold (`task_ready`, `task_claim_next`).
const PLANNED_CORE_TOOLS: usize = 2;

/// The model-facing part of the whole list (name, description, input schema).
const MODEL_FACING_BUDGET: usize = 10_000;
/// The whole `tools/list` answer, output schemas and annotations included.
const WHOLE_BUDGET: usize = 16_000;
/// The model-facing part of the `core` set.
const CORE_MODEL_FACING_BUDGET: usize = 3_000;

fn tokens(text: &str) -> usize {
    static BPE: std::sync::OnceLock<tiktoken_rs::CoreBPE> = std::sync::OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().expect("o200k ships in the crate"))
        .encode_ordinary(text)
        .len()
}

/// A client of `cairn mcp --tools SET`, in process over a pipe.
async fn connect(set: &str) -> (RunningService<rmcp::RoleClient, ()>, tempfile::TempDir) {
    let (cairn, dir) = fresh_cairn(cairn::tools::Config::default());
    let set: ToolSet = set.parse().expect("a tool set");
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_io);
    tokio::spawn(async move {
        let _ = cairn::mcp::serve_lines_with(cairn, set, read, write).await;
    });
    (().serve(client_io).await.expect("initialize"), dir)
}

/// Tokens of the list's model-facing part and of the whole answer.
struct Counted {
    tools: usize,
    model_facing: usize,
    whole: usize,
}

impl Counted {
    /// The list grown by `more` tools of today's average size.
    fn projected(&self, more: usize, of: usize) -> usize {
        of * (self.tools + more) / self.tools
    }
}

async fn counted(set: &str) -> Counted {
    let (client, _dir) = connect(set).await;
    let listed = client.list_tools(None).await.expect("tools/list");
    let model_facing = listed
        .tools
        .iter()
        .map(|tool: &Tool| {
            let part = json!({
                "name": tool.name,
                "description": tool.description,
                "inputSchema": tool.input_schema,
            });
            tokens(&part.to_string())
        })
        .sum();
    Counted {
        tools: listed.tools.len(),
        model_facing,
        whole: tokens(&serde_json::to_string(&listed).unwrap()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_list_fits_its_token_budget() {
    let all = counted("all").await;
    let core = counted("core").await;
    eprintln!(
        "tools/list, o200k tokens: all {} tools: model-facing {}, whole {}; core {} tools: model-facing {}, whole {}",
        all.tools, all.model_facing, all.whole, core.tools, core.model_facing, core.whole
    );
    assert_eq!(all.tools, REGISTRY.len());
    let model_facing = all.projected(PLANNED_TOOLS, all.model_facing);
    assert!(
        model_facing <= MODEL_FACING_BUDGET,
        "with {PLANNED_TOOLS} more tools like today's, the model-facing part would be {model_facing} tokens (today {}), over {MODEL_FACING_BUDGET}: shorten descriptions or schemas",
        all.model_facing
    );
    let whole = all.projected(PLANNED_TOOLS, all.whole);
    assert!(
        whole <= WHOLE_BUDGET,
        "with {PLANNED_TOOLS} more tools like today's, tools/list would be {whole} tokens (today {}), over {WHOLE_BUDGET}",
        all.whole
    );
    let core_facing = core.projected(PLANNED_CORE_TOOLS, core.model_facing);
    assert!(
        core_facing <= CORE_MODEL_FACING_BUDGET,
        "the core set's model-facing part would be {core_facing} tokens (today {}), over {CORE_MODEL_FACING_BUDGET}",
        core.model_facing
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_lists_and_calls_only_the_tools_of_its_set() {
    let (client, _dir) = connect("core").await;
    let listed = listed_names(&client).await;
    let core: Vec<&str> = REGISTRY
        .iter()
        .map(|d| d.name)
        .filter(|name| CORE.contains(name))
        .collect();
    assert_eq!(listed, core);

    let outside = client
        .call_tool(CallToolRequestParams::new("graph_doctor"))
        .await
        .expect("a tool result, not a protocol error");
    assert_eq!(outside.is_error, Some(true));
    let envelope = envelope_of(&outside);
    assert_eq!(envelope["error"]["code"], "tool_not_in_set");
    assert_eq!(envelope["error"]["category"], "module_disabled");
    assert_eq!(envelope["error"]["details"]["set"], "core");
    assert_eq!(envelope["error"]["details"]["tool"], "graph_doctor");

    let inside = client
        .call_tool(CallToolRequestParams::new("task_list"))
        .await
        .unwrap();
    assert_eq!(envelope_of(&inside)["ok"], true);
}

async fn listed_over_http(url: &str) -> Vec<String> {
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
            .await
            .expect("initialize");
    listed_names(&client).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_url_names_a_sessions_set_over_the_default() {
    let (url, _dir) = crate::scopes::gateway_with(cairn::http::HttpSettings {
        tools: "core".parse().unwrap(),
        ..Default::default()
    })
    .await;
    let by_default = listed_over_http(&url).await;
    assert_eq!(by_default.len(), CORE.len());
    let named = listed_over_http(&format!("{url}?tools=search,graph_path")).await;
    assert_eq!(named, ["graph_path", "search"]);
    let every = listed_over_http(&format!("{url}?tools=all")).await;
    assert_eq!(every.len(), REGISTRY.len());

    // A set that names nothing known is refused before any session starts.
    let refused = reqwest::Client::new()
        .post(format!("{url}?tools=core,grahp"))
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_input");
    assert_eq!(body["error"]["details"]["field"], "tools");
    assert_eq!(body["error"]["suggestions"][0], "graph");
    let twice = reqwest::Client::new()
        .post(format!("{url}?tools=core&tools=all"))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"}))
        .send()
        .await
        .unwrap();
    assert_eq!(twice.status(), 400);
    let body: Value = twice.json().await.unwrap();
    assert_eq!(body["error"]["details"]["field"], "tools");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_token_sees_only_the_reading_tools_of_its_set() {
    let (url, _dir) = crate::scopes::gateway().await;
    let reader = crate::scopes::mcp_client(&format!("{url}?tools=core"), crate::scopes::READ).await;
    let listed = listed_names(&reader).await;
    let expected: Vec<&str> = REGISTRY
        .iter()
        .filter(|d| d.effect == Effect::Reads && CORE.contains(&d.name))
        .map(|d| d.name)
        .collect();
    assert_eq!(listed, expected);
}

/// `tools/list` of `cairn mcp` run with `args` and `CAIRN_TOOLS`.
fn listed_by_the_cli(args: &[&str], env: Option<&str>) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut command = cairn_command();
    command
        .arg("--db")
        .arg(dir.path().join("c.db"))
        .arg("mcp")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    if let Some(set) = env {
        command.env("CAIRN_TOOLS", set);
    }
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let _initialized = lines.next().unwrap().unwrap();
    let listed: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    drop(stdin);
    child.wait().unwrap();
    listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn cairn_mcp_takes_its_set_from_the_flag_or_the_environment() {
    assert_eq!(listed_by_the_cli(&["--tools", "notes"], None).len(), 4);
    assert_eq!(listed_by_the_cli(&[], Some("core")).len(), CORE.len());
    assert_eq!(
        listed_by_the_cli(&["--tools", "health"], Some("core")),
        ["health"],
        "the flag over the environment"
    );
    assert_eq!(listed_by_the_cli(&[], None).len(), REGISTRY.len());

    let wrong = cairn_command()
        .args(["mcp", "--tools", "everything"])
        .output()
        .unwrap();
    assert_eq!(
        wrong.status.code(),
        Some(2),
        "a wrong set is the call's fault"
    );
    let envelope: Value = serde_json::from_slice(&wrong.stdout).expect("one envelope");
    assert_eq!(envelope["error"]["code"], "invalid_input");
    assert_eq!(envelope["error"]["details"]["field"], "tools");
    let message = envelope["error"]["message"].as_str().unwrap();
    assert!(message.contains("`everything`"), "{message}");
    assert!(!message.ends_with(".."), "{message}");
}
