//! What the CLI prints: the budget and `tokens_estimated` hold for the bytes
//! written (pretty, compact and dense), failures are small on every surface,
//! help is an envelope when piped, and a reader that hangs up early ends
//! nothing but the output.

use std::io::Read;
use std::process::{Command, Stdio};

use cairn::envelope::budget::{STRING_MARKER, size_of};
use cairn::envelope::estimate_tokens;
use cairn::tools::REGISTRY;
use cairn::tools::fields::input_fields;
use http_body_util::BodyExt;
use serde_json::{Value, json};

use crate::cli::{Cli, Run};
use crate::http_helpers::TestApp;
use crate::mcp::{Transport, connect, text_of};

const AGENT: u64 = 32_000;
const STAMP: &str = "2026-01-01T00:00:00.000000Z";

/// `n` tasks written straight into the CLI's store.
fn seed_tasks(cli: &Cli, n: usize) {
    let store = cairn::store::open_sqlite(&cli.db()).expect("the store opens");
    let tasks: Vec<_> = (0..n)
        .map(|i| cairn::store::NewTask {
            id: cairn::store::new_id(),
            title: format!("Printed task {i:04}: the budget counts what is printed"),
            description: "Seeded by the CLI output test.".to_owned(),
            tags: vec!["printed".to_owned()],
            priority: Default::default(),
        })
        .collect();
    store
        .bulk_load(&tasks, &[], &cairn::store::Timestamp::parse(STAMP).unwrap())
        .expect("seed tasks");
}

/// The printed text without its final newline, and its envelope.
fn printed(run: &Run) -> (String, Value) {
    let stdout = run.stdout();
    let text = stdout
        .strip_suffix('\n')
        .expect("a final newline")
        .to_owned();
    let envelope = run.envelope();
    (text, envelope)
}

/// The budget holds for the printed text and describes the cut it made.
fn check_printed_listing(text: &str, envelope: &Value) {
    assert!(size_of(text) <= AGENT, "size {} over budget", size_of(text));
    assert_eq!(
        envelope["meta"]["tokens_estimated"].as_u64(),
        Some(estimate_tokens(text)),
        "tokens_estimated is the estimate of the printed text"
    );
    assert_eq!(envelope["meta"]["truncated"], true);
    let kept = envelope["data"]["items"].as_array().expect("items").len();
    assert_eq!(
        envelope["meta"]["trimmed"],
        json!([{"path": "/items", "kind": "list", "from": 500, "to": kept}])
    );
    assert!(kept > 10, "the budget is used, not wasted: {kept} kept");
}

#[test]
fn the_budget_holds_for_the_printed_bytes_in_every_layout() {
    let cli = Cli::new();
    seed_tasks(&cli, 3000);
    let mut kept = Vec::new();
    for layout in ["--pretty", "--dense", "--compact-by-pipe"] {
        let mut args = vec!["task_list", "--limit", "500"];
        if layout != "--compact-by-pipe" {
            args.push(layout);
        }
        let run = cli.run(&args);
        assert_eq!(run.code(), 0, "{layout}: {}", run.stdout());
        let (text, envelope) = printed(&run);
        check_printed_listing(&text, &envelope);
        assert_eq!(
            text.contains('\n'),
            layout == "--pretty",
            "{layout}: indented only when asked or on a terminal"
        );
        kept.push(envelope["data"]["items"].as_array().unwrap().len());
    }
    // Indentation costs room: the pretty answer keeps fewer items than compact.
    assert!(
        kept[0] < kept[2],
        "pretty {} vs compact {}",
        kept[0],
        kept[2]
    );
}

#[test]
fn on_a_terminal_answers_are_indented_and_help_is_text() {
    let cli = Cli::new();
    let line = format!(
        "{} --db {} health",
        env!("CARGO_BIN_EXE_cairn"),
        cli.db().display()
    );
    let tty = |line: &str| {
        let output = Command::new("script")
            .args(["-qec", line, "/dev/null"])
            .env_remove("CAIRN_LOG")
            .stdin(Stdio::null())
            .output()
            .expect("script(1) runs");
        String::from_utf8(output.stdout)
            .expect("UTF-8")
            .replace("\r\n", "\n")
    };
    let answer = tty(&line);
    let envelope: Value = serde_json::from_str(&answer).expect("one envelope");
    assert!(answer.contains("\n  \"ok\": true"), "indented: {answer}");
    let text = answer.trim_end();
    assert_eq!(
        envelope["meta"]["tokens_estimated"].as_u64(),
        Some(estimate_tokens(text))
    );
    let help = tty(&format!("{} help task_list", env!("CARGO_BIN_EXE_cairn")));
    assert!(help.contains("Fields:"), "text help: {help}");
    let help = tty(&format!(
        "{} help task_list --json",
        env!("CARGO_BIN_EXE_cairn")
    ));
    let envelope: Value = serde_json::from_str(&help).expect("--json: an envelope");
    assert_eq!(envelope["data"]["name"], "task_list");
}

#[test]
fn help_is_an_envelope_when_piped() {
    let cli = Cli::new();
    for args in [&["help"][..], &["--help"][..], &["--json", "help"][..]] {
        let run = cli.run(args);
        assert_eq!(run.code(), 0, "{args:?}");
        let data = &run.envelope()["data"];
        let names: Vec<&str> = data["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        let registry: Vec<&str> = REGISTRY.iter().map(|t| t.name).collect();
        assert_eq!(names, registry, "{args:?}");
        assert!(
            data["commands"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["name"] == "serve")
        );
    }
    for tool in REGISTRY {
        let run = cli.run(&[tool.name, "--help"]);
        assert_eq!(run.code(), 0);
        assert_eq!(
            cli.run(&["help", tool.name]).envelope()["data"],
            run.envelope()["data"]
        );
        let data = &run.envelope()["data"];
        assert_eq!(data["name"], tool.name);
        assert_eq!(data["description"], tool.description);
        let fields: Vec<&str> = data["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        let expected: Vec<String> = input_fields(tool).into_iter().map(|f| f.name).collect();
        assert_eq!(fields, expected, "{}", tool.name);
    }
    let limit = cli.run(&["task_list", "--help"]).envelope()["data"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "limit")
        .cloned()
        .unwrap();
    assert_eq!(limit["type"], "integer");
    assert_eq!(
        (limit["minimum"].clone(), limit["maximum"].clone()),
        (json!(1), json!(500))
    );
    // An enumerated field lists its values as JSON, not only in its type.
    let field = |tool: &str, name: &str| {
        cli.run(&[tool, "--help"]).envelope()["data"]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(
        field("task_create", "priority")["enum"],
        json!(["low", "normal", "high", "urgent"])
    );
    assert_eq!(
        field("task_list", "status")["enum"],
        json!(["open", "claimed", "done", "cancelled"])
    );
    assert_eq!(limit.get("enum"), None, "a number is no enumeration");
    let serve = cli.run(&["serve", "--help"]).envelope();
    assert_eq!(serve["data"]["name"], "serve");
    assert!(
        serve["data"]["options"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["name"] == "--bind" && o["env"] == "CAIRN_BIND")
    );
}

#[test]
fn a_reader_that_hangs_up_early_is_a_normal_end() {
    let cli = Cli::new();
    let long_id = "a".repeat(40_000);
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(cli.db())
        .args(["task_get", "--id", &long_id])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cairn starts");
    // `| head -c 0`: the reading end is gone before anything is written.
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(2),
        "the answer's own exit code: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// The id of a failure envelope, and its whole text, are small.
fn check_small_failure(surface: &str, text: &str, error: &Value) {
    assert!(
        text.chars().count() < 2_000,
        "{surface}: {} chars",
        text.chars().count()
    );
    let id = error["details"]["id"].as_str().expect("details.id");
    assert_eq!(
        id,
        format!("{}{STRING_MARKER}", "a".repeat(200)),
        "{surface}"
    );
    assert!(
        error["message"].as_str().unwrap().contains(STRING_MARKER),
        "{surface}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_400_character_id_gives_a_small_failure_on_every_surface() {
    // The longest id a tool takes; a longer one is refused unread.
    let long_id = "a".repeat(400);
    let run = Cli::new().run(&["task_get", "--id", &"a".repeat(40_000)]);
    assert_eq!(run.code(), 2);
    let (text, envelope) = printed(&run);
    assert!(
        text.chars().count() < 2_000,
        "{} chars",
        text.chars().count()
    );
    assert_eq!(envelope["error"]["code"], "invalid_input");
    assert_eq!(envelope["error"]["details"]["field"], "id");

    let cli = Cli::new();
    for layout in ["--pretty", "--dense"] {
        let run = cli.run(&["task_get", "--id", &long_id, layout]);
        assert_eq!(run.code(), 2);
        let (text, envelope) = printed(&run);
        check_small_failure(&format!("CLI {layout}"), &text, &envelope["error"]);
        assert_eq!(
            envelope["meta"]["tokens_estimated"].as_u64(),
            Some(estimate_tokens(&text))
        );
    }

    let app = TestApp::new();
    let response = app
        .send_raw(TestApp::request("GET", &format!("/api/v1/tasks/{long_id}")))
        .await;
    assert_eq!(response.status(), 404);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let body: Value = serde_json::from_str(&text).unwrap();
    check_small_failure("REST", &text, &body["error"]);

    let mcp = connect(Transport::Duplex).await;
    let result = mcp.call("task_get", json!({"id": long_id})).await;
    assert_eq!(result.is_error, Some(true));
    let text = text_of(&result);
    let envelope: Value = serde_json::from_str(text).unwrap();
    check_small_failure("MCP", text, &envelope["error"]);
    assert_eq!(
        envelope["meta"]["tokens_estimated"].as_u64(),
        Some(estimate_tokens(text))
    );
}
