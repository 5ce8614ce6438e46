//! The CLI surface through the real binary: one envelope on stdout, exit 0
//! on success, 2 when the call is wrong, 1 when the store or environment is.

use std::path::PathBuf;
use std::process::{Command, Output};

use cairn::tools::REGISTRY;
use serde_json::Value;

/// The binary with a fresh `--db` in a temporary directory.
pub struct Cli {
    pub dir: tempfile::TempDir,
}

impl Cli {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("cairn.db")
    }

    pub fn run(&self, args: &[&str]) -> Run {
        let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("--db")
            .arg(self.db())
            .args(args)
            .env_remove("CAIRN_DISABLE")
            .env_remove("CAIRN_LOG")
            .env_remove("RUST_LOG")
            .output()
            .expect("the cairn binary runs");
        Run(output)
    }

    /// Runs a tool command that must succeed; returns its `data`.
    pub fn ok(&self, args: &[&str]) -> Value {
        let run = self.run(args);
        assert_eq!(run.code(), 0, "{args:?} failed: {}", run.stdout());
        run.envelope()["data"].clone()
    }
}

pub struct Run(pub Output);

impl Run {
    pub fn code(&self) -> i32 {
        self.0.status.code().expect("exited normally")
    }

    pub fn stdout(&self) -> String {
        String::from_utf8(self.0.stdout.clone()).expect("UTF-8 stdout")
    }

    /// stdout holds exactly one JSON envelope.
    pub fn envelope(&self) -> Value {
        let stdout = self.stdout();
        let mut documents = serde_json::Deserializer::from_str(&stdout).into_iter::<Value>();
        let envelope = documents
            .next()
            .expect("one envelope on stdout")
            .expect("stdout is JSON");
        assert!(documents.next().is_none(), "exactly one envelope: {stdout}");
        assert!(envelope["ok"].is_boolean() && envelope["meta"].is_object());
        envelope
    }

    pub fn error_code(&self) -> String {
        self.envelope()["error"]["code"]
            .as_str()
            .expect("a failure envelope")
            .to_owned()
    }

    pub fn suggestions(&self) -> Vec<String> {
        serde_json::from_value(self.envelope()["error"]["suggestions"].clone())
            .expect("suggestions")
    }
}

#[test]
fn a_successful_tool_call_prints_one_envelope_and_exits_0() {
    let cli = Cli::new();
    let run = cli.run(&["health"]);
    assert_eq!(run.code(), 0);
    let envelope = run.envelope();
    assert_eq!(envelope["ok"], true);
    assert_eq!(envelope["meta"]["tool"], "health");
    assert_eq!(cli.ok(&["health"])["status"], "ok");
}

#[test]
fn call_takes_the_arguments_as_json() {
    let cli = Cli::new();
    let run = cli.run(&["call", "health", "{}"]);
    assert_eq!(run.code(), 0);
    assert_eq!(run.envelope()["ok"], true);
}

#[test]
fn dense_prints_compact_json_without_nulls_and_counts_that_text() {
    let cli = Cli::new();
    let run = cli.run(&["health", "--dense"]);
    assert_eq!(run.code(), 0);
    let stdout = run.stdout();
    let line = stdout.trim_end();
    assert!(
        !line.contains('\n') && !line.contains(": "),
        "compact: {line}"
    );
    assert!(!line.contains("null"), "no nulls: {line}");
    let envelope = run.envelope();
    assert_eq!(
        envelope["meta"]["tokens_estimated"],
        Value::from(cairn::envelope::estimate_tokens(line))
    );
    // `--dense` works anywhere on the line.
    for args in [
        &["--dense", "health"][..],
        &["call", "--dense", "health"][..],
    ] {
        let run = cli.run(args);
        assert_eq!(run.code(), 0);
        assert_eq!(run.stdout().lines().count(), 1, "{args:?}");
    }
}

#[test]
fn an_unknown_tool_exits_2_with_the_nearest_names() {
    let cli = Cli::new();
    for args in [&["helth"][..], &["call", "helth", "{}"][..]] {
        let run = cli.run(args);
        assert_eq!(run.code(), 2, "{args:?}");
        assert_eq!(run.error_code(), "invalid_input");
        assert_eq!(run.suggestions(), ["health"]);
    }
}

#[test]
fn an_unknown_flag_exits_2_with_unknown_field() {
    let cli = Cli::new();
    let run = cli.run(&["health", "--verbose"]);
    assert_eq!(run.code(), 2);
    assert_eq!(run.error_code(), "unknown_field");
    assert_eq!(run.envelope()["error"]["details"]["field"], "verbose");
    let run = cli.run(&["call", "health", r#"{"verbose": true}"#]);
    assert_eq!(run.code(), 2);
    assert_eq!(run.error_code(), "unknown_field");
}

#[test]
fn arguments_that_are_not_a_json_object_exit_2() {
    let cli = Cli::new();
    let run = cli.run(&["call", "health", "[1, 2"]);
    assert_eq!(run.code(), 2);
    assert_eq!(run.error_code(), "invalid_json");
    let run = cli.run(&["call", "health", "[1, 2]"]);
    assert_eq!(run.code(), 2);
    assert_eq!(run.error_code(), "invalid_input");
}

#[test]
fn help_lists_every_tool_from_the_registry() {
    let cli = Cli::new();
    for args in [&["--help"][..], &["help"][..]] {
        let run = cli.run(args);
        assert_eq!(run.code(), 0, "{args:?}");
        let text = run.stdout();
        for tool in REGISTRY {
            assert!(text.contains(tool.name), "{args:?} lists {}", tool.name);
        }
    }
}

#[test]
fn logs_never_reach_stdout() {
    let cli = Cli::new();
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(cli.db())
        .args(["health", "--dense"])
        .env("CAIRN_LOG", "trace")
        .output()
        .unwrap();
    let run = Run(output);
    assert_eq!(run.code(), 0);
    run.envelope();
}

#[test]
fn tool_manual_is_generated_from_the_registry() {
    use cairn::cli::agents_md::{REGENERATE, render};
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tools.md");
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == render(),
        "docs/tools.md drifted from the tool registry; regenerate it with `{REGENERATE}`"
    );
    let cli = Cli::new();
    assert_eq!(cli.run(&["agents-md"]).stdout(), render());
}

#[test]
fn flags_become_typed_arguments() {
    let cli = Cli::new();
    let task = cli.ok(&[
        "task_create",
        "--title",
        "42",
        "--tags",
        "cli,flags",
        "--priority=high",
    ]);
    assert_eq!(task["title"], "42", "a string field keeps digits as text");
    assert_eq!(task["tags"], serde_json::json!(["cli", "flags"]));
    assert_eq!(task["priority"], "high");
    let id = task["id"].as_str().unwrap();
    // Kebab-case flags, JSON arrays, and a bare word for the only required field.
    let updated = cli.ok(&[
        "task_update",
        "--id",
        id,
        "--expected-version",
        "1",
        "--tags",
        r#"["json"]"#,
    ]);
    assert_eq!(updated["version"], 2);
    assert_eq!(updated["tags"], serde_json::json!(["json"]));
    assert_eq!(cli.ok(&["task_get", &id[..8]])["id"], id);
    // A bare word is the target id even when other fields are required too.
    let claimed = cli.ok(&["task_claim", &id[..8], "--agent", "ann"]);
    assert_eq!(claimed["claim"]["holder"], "ann");
}

#[test]
fn an_unknown_flag_suggests_the_nearest_field() {
    let cli = Cli::new();
    let run = cli.run(&["task_create", "--titel", "x"]);
    assert_eq!(run.code(), 2);
    assert_eq!(run.error_code(), "unknown_field");
    assert_eq!(run.suggestions(), ["title"]);
    let run = cli.run(&["call", "task_create", r#"{"titel": "x"}"#]);
    assert_eq!(run.code(), 2);
    assert_eq!(run.suggestions(), ["title"]);
}

#[test]
fn a_bad_value_exits_2() {
    let cli = Cli::new();
    let run = cli.run(&["task_list", "--limit", "lots"]);
    assert_eq!(run.code(), 2);
    assert_eq!(run.error_code(), "invalid_input");
    assert_eq!(run.envelope()["error"]["details"]["field"], "limit");
    // Out of range is the tool's verdict, still the caller's to fix.
    let run = cli.run(&["task_list", "--limit", "501"]);
    assert_eq!(run.code(), 2);
    assert_eq!(run.error_code(), "invalid_input");
}

#[test]
fn not_found_and_conflicts_exit_2() {
    let cli = Cli::new();
    let run = cli.run(&["task_get", "--id", "0123456789abcdef"]);
    assert_eq!(run.code(), 2);
    assert_eq!(run.error_code(), "task_not_found");
    let id = cli.ok(&["task_create", "--title", "t"])["id"]
        .as_str()
        .unwrap()
        .to_owned();
    cli.ok(&[
        "task_update",
        "--id",
        &id,
        "--title",
        "u",
        "--expected_version",
        "1",
    ]);
    let run = cli.run(&[
        "task_update",
        "--id",
        &id,
        "--title",
        "v",
        "--expected_version",
        "1",
    ]);
    assert_eq!(run.code(), 2);
    assert_eq!(run.error_code(), "version_conflict");
}

#[test]
fn a_store_that_cannot_open_exits_1() {
    let cli = Cli::new();
    let missing = cli.dir.path().join("no/such/dir/cairn.db");
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(&missing)
        .args(["task_list"])
        .output()
        .unwrap();
    let run = Run(output);
    assert_eq!(run.code(), 1, "{}", run.stdout());
    let envelope = run.envelope();
    assert_eq!(envelope["error"]["category"], "unavailable");
    assert_eq!(envelope["error"]["retryable"], true);
    let message = envelope["error"]["message"].as_str().unwrap();
    assert!(
        !message.contains("no/such/dir"),
        "no paths in messages: {message}"
    );
    // A wrong call is still a wrong call, whatever the store: exit 2.
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(&missing)
        .args(["task_lst"])
        .output()
        .unwrap();
    assert_eq!(Run(output).code(), 2);
}

#[test]
fn an_unknown_global_option_is_an_envelope_too() {
    let cli = Cli::new();
    let run = cli.run(&["--dnse", "health"]);
    assert_eq!(run.code(), 2);
    assert_eq!(run.error_code(), "unknown_field");
    assert_eq!(run.envelope()["error"]["details"]["field"], "dnse");
    assert_eq!(run.suggestions(), ["dense"]);
}
