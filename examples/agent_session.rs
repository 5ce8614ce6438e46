//! What an agent reads in one scripted working session over MCP, counted in
//! the o200k tokenizer's tokens: initialize, list the tools, find a task,
//! claim it, read a note, write a note, complete the task. Every line the
//! server writes to stdout is counted (answers, and the notifications a call
//! causes); the store is seeded first with the
//! CLI (ten open tasks and a note), which is not counted.
//!
//!     cargo run --example agent_session -- BIN [ARGS FOR `cairn mcp` ...]
//!     cargo run --example agent_session -- target/debug/cairn --tools core
//!
//! BIN is any build of cairn, so two builds are compared in one run
//! (BENCHMARKS.md, "What an agent reads").

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(bin) = args.next() else {
        eprintln!("usage: agent_session BIN [ARGS FOR `cairn mcp` ...]");
        std::process::exit(2);
    };
    let mcp_args: Vec<String> = args.collect();
    let dir = tempfile::tempdir().expect("a scratch folder");
    let db = dir.path().join("session.db");
    let cli = |tool: &str, arguments: Value| -> Value {
        let out = Command::new(&bin)
            .arg("--db")
            .arg(&db)
            .args(["call", tool, &arguments.to_string()])
            .env("CAIRN_LOG", "warn")
            .output()
            .expect("cairn runs");
        serde_json::from_slice(&out.stdout).expect("one envelope")
    };
    for n in 1..=10 {
        cli(
            "task_create",
            json!({"title": format!("Task {n}: migrate the {n}th table"), "description": "Move it to the new schema and keep the old reads working.", "tags": ["migration"]}),
        );
    }
    cli(
        "note_write",
        json!({"title": "Migration guide", "content": "Run `migrate --dry-run` first; then the real run. Old reads go through the view `legacy_*` until every client moved.", "tags": ["migration"]}),
    );

    let mut server = Command::new(&bin)
        .arg("--db")
        .arg(&db)
        .arg("mcp")
        .args(&mcp_args)
        .env("CAIRN_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("cairn mcp runs");
    let mut to_server = server.stdin.take().expect("stdin");
    let mut from_server = BufReader::new(server.stdout.take().expect("stdout")).lines();
    let bpe = tiktoken_rs::o200k_base().expect("o200k ships in the crate");
    let mut next_id = 0;
    let mut total = 0;
    let mut step = |label: &str, method: &str, params: Value| -> Value {
        next_id += 1;
        let request = json!({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params});
        writeln!(to_server, "{request}").expect("send");
        if method == "initialize" {
            writeln!(
                to_server,
                "{}",
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            )
            .expect("send");
        }
        // Notifications the call causes (a list changed) come before its
        // answer, and are read too.
        let mut tokens = 0;
        let answer = loop {
            let line = from_server.next().expect("an answer").expect("read");
            tokens += bpe.encode_ordinary(&line).len();
            let message: Value = serde_json::from_str(&line).expect("JSON-RPC");
            if message["id"] == next_id {
                break message;
            }
        };
        total += tokens;
        println!("| {label} | {tokens} |");
        answer
    };
    let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    let data = |answer: &Value| -> Value {
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .expect("a text result");
        serde_json::from_str::<Value>(text).expect("an envelope")["data"].clone()
    };

    println!("| step | tokens read |\n|---|---|");
    step(
        "initialize",
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "agent_session", "version": "1"}}),
    );
    let listed = step("tools/list", "tools/list", json!({}));
    let model_facing: usize = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| {
            let part = json!({"name": tool["name"], "description": tool["description"], "inputSchema": tool["inputSchema"]});
            bpe.encode_ordinary(&part.to_string()).len()
        })
        .sum();
    let found = step(
        "find a task (`task_list`, open, 5)",
        "tools/call",
        call("task_list", json!({"status": "open", "limit": 5})),
    );
    let id = data(&found)["items"][0]["id"]
        .as_str()
        .expect("an open task")
        .to_owned();
    step(
        "claim it",
        "tools/call",
        call("task_claim", json!({"id": id, "agent": "ada"})),
    );
    step(
        "read a note",
        "tools/call",
        call("note_read", json!({"id": "migration-guide"})),
    );
    step(
        "write a note",
        "tools/call",
        call(
            "note_write",
            json!({"title": "Table 1 migrated", "content": "Done; see [[Migration guide]]."}),
        ),
    );
    step(
        "complete the task",
        "tools/call",
        call("task_complete", json!({"id": id, "agent": "ada"})),
    );
    println!("| **total** | **{total}** |");
    println!(
        "\ntools/list's model-facing part (name, description, input schema): {model_facing} tokens"
    );
    drop(to_server);
    let _ = server.wait();
}
