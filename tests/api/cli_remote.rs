//! `cairn --url`: every tool command against a live `cairn serve` gives the
//! `data`, the error and the exit code the local store gives; a server that
//! is down answers `server_unavailable` with exit 1.

use std::process::Command;

use serde_json::{Value, json};

use crate::cli::{Cli, Run};
use crate::process_helpers::{Gateway, cairn_command, free_port};

/// One store, reached two ways: the file itself, and the gateway serving it.
struct Both {
    cli: Cli,
    url: String,
    _gateway: Gateway,
}

impl Both {
    async fn start() -> Self {
        let cli = Cli::new();
        let gateway = Gateway::start(&cli.db().display().to_string()).await;
        let url = format!("http://127.0.0.1:{}", gateway.port());
        Self {
            cli,
            url,
            _gateway: gateway,
        }
    }

    fn remote(&self, args: &[&str]) -> Run {
        remote_run(&self.url, args)
    }

    fn local(&self, args: &[&str]) -> Run {
        self.cli.run(args)
    }

    /// `data` of a remote call that must succeed.
    fn remote_ok(&self, args: &[&str]) -> Value {
        let run = self.remote(args);
        assert_eq!(run.code(), 0, "{args:?} over --url: {}", run.stdout());
        run.envelope()["data"].clone()
    }

    /// The same call both ways: the same exit code, and byte-identical `data`
    /// (or the same error, request id aside).
    fn same(&self, args: &[&str]) -> Value {
        let (remote, local) = (self.remote(args), self.local(args));
        assert_eq!(remote.code(), local.code(), "{args:?}: exit codes");
        let (remote, local) = (remote.envelope(), local.envelope());
        assert_eq!(remote["meta"]["tool"], local["meta"]["tool"]);
        if local["ok"] == true {
            assert_eq!(
                remote["data"].to_string(),
                local["data"].to_string(),
                "{args:?}: data"
            );
            local["data"].clone()
        } else {
            let strip = |e: &Value| {
                let mut e = e["error"].clone();
                e.as_object_mut().unwrap().remove("request_id");
                e
            };
            assert_eq!(strip(&remote), strip(&local), "{args:?}: error");
            local["error"].clone()
        }
    }
}

fn remote_run(url: &str, args: &[&str]) -> Run {
    let output = cairn_command()
        .arg("--url")
        .arg(url)
        .args(args)
        .output()
        .expect("the cairn binary runs");
    Run(output)
}

fn str_of(value: &Value, key: &str) -> String {
    value[key].as_str().expect(key).to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_over_url_answers_as_the_local_store_does() {
    let both = Both::start().await;

    // Writes go over --url; what they answer is what the store then holds.
    let task = both.remote_ok(&["task_create", "--title", "Ship it", "--tags", "a,b"]);
    let id = str_of(&task, "id");
    assert_eq!(task, both.cli.ok(&["task_get", &id]));
    let other = str_of(&both.remote_ok(&["task_create", "--title", "Other"]), "id");
    for args in [
        vec![
            "task_update",
            &id,
            "--priority",
            "high",
            "--expected_version",
            "1",
        ],
        vec!["task_claim", &id, "--agent", "ann", "--ttl_minutes", "30"],
        vec!["task_renew", &id, "--agent", "ann"],
        vec!["task_release", &id, "--agent", "ann"],
        vec!["task_complete", &id],
        vec!["task_reopen", &id],
        vec!["task_cancel", &other],
    ] {
        let written = both.remote_ok(&args);
        let target = str_of(&written, "id");
        assert_eq!(written, both.cli.ok(&["task_get", &target]), "{args:?}");
    }
    let runbook = both.remote_ok(&[
        "note_write",
        "--title",
        "Runbook",
        "--content",
        "See [[Release Plan]] and [[Missing]].",
        "--tags",
        "ops",
    ]);
    let plan = both.remote_ok(&[
        "note_write",
        "--title",
        "Release Plan",
        "--content",
        "Ship.",
    ]);
    let note_id = str_of(&plan, "id");
    let read = both.cli.ok(&["note_read", &note_id]);
    for key in ["id", "title", "slug", "version", "updated_at"] {
        assert_eq!(
            plan[key], read[key],
            "note_write answers what is stored: {key}"
        );
    }
    let rewritten = both.remote_ok(&[
        "note_write",
        &note_id,
        "--title",
        "Release Plan",
        "--content",
        "Ship it.",
    ]);
    assert_eq!(rewritten["version"], 2);
    let link_args = [
        "link_add",
        "--source",
        &id,
        "--target",
        &note_id,
        "--kind",
        "depends_on",
    ];
    let link = both.remote_ok(&link_args);
    let again = both.cli.ok(&link_args);
    assert_eq!(
        (link["created"].clone(), again["created"].clone()),
        (json!(true), json!(false))
    );
    let without_created = |v: &Value| {
        let mut v = v.clone();
        v.as_object_mut().unwrap().remove("created");
        v
    };
    assert_eq!(
        without_created(&link),
        without_created(&again),
        "link_add over --url wrote the edge"
    );

    // Reads: byte-identical data both ways.
    let runbook_id = str_of(&runbook, "id");
    for args in [
        vec!["task_list", "--limit", "10"],
        vec!["task_list", "--status", "cancelled"],
        vec!["task_get", &id[..8]],
        vec!["task_board", "--columns", "open,cancelled", "--limit", "1"],
        vec!["note_read", &runbook_id],
        vec!["note_read", "release-plan"],
        vec!["note_list", "--tag", "ops"],
        vec!["graph_neighbours", &id, "--depth", "2"],
        vec!["graph_path", "--from", &id, "--to", &runbook_id],
        vec!["graph_export"],
        vec!["graph_doctor"],
        vec!["search", "ship*"],
    ] {
        both.same(&args);
    }
    let health = both.same(&["health"]);
    assert_eq!(health["counts"]["tasks"], 2);

    // Refusals: the same error and exit code.
    for args in [
        vec!["task_get", "0123456789abcdef"],
        vec!["task_get", "abc"],
        vec!["task_renew", &id, "--agent", "bob"],
        vec![
            "task_update",
            &id,
            "--title",
            "x",
            "--expected_version",
            "1",
        ],
        vec!["note_write", "--title", "Runbook", "--content", "again"],
        vec!["call", "task_get", r#"{"id": "abcdef", "extra": 1}"#],
        vec!["call", "link_remove", r#"{"id": 5}"#],
        vec!["task_list", "--limit", "501"],
    ] {
        let error = both.same(&args);
        assert!(error["code"].is_string(), "{args:?} is refused");
    }

    // Deletes last; they answer what they removed.
    let edge_id = str_of(&link, "id");
    let removed = both.remote_ok(&["link_remove", &edge_id]);
    for key in ["id", "source", "target", "kind"] {
        assert_eq!(
            removed[key], link[key],
            "link_remove answers the edge: {key}"
        );
    }
    let deleted = both.remote_ok(&["note_delete", &note_id]);
    assert_eq!(deleted["id"], json!(note_id));
    both.same(&["note_read", &note_id]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_is_down_is_server_unavailable_with_exit_1() {
    let url = format!("http://127.0.0.1:{}", free_port());
    let run = remote_run(&url, &["task_list"]);
    assert_eq!(run.code(), 1, "{}", run.stdout());
    let error = &run.envelope()["error"];
    assert_eq!(error["code"], "server_unavailable");
    assert_eq!(error["category"], "unavailable");
    assert_eq!(error["retryable"], true);
    // CAIRN_URL works as the flag does; a wrong call is still refused with exit 2.
    let output = cairn_command()
        .env("CAIRN_URL", &url)
        .args(["task_lst"])
        .output()
        .unwrap();
    assert_eq!(Run(output).code(), 2);
    let output = cairn_command()
        .env("CAIRN_URL", &url)
        .args(["health"])
        .output()
        .unwrap();
    assert_eq!(Run(output).error_code(), "server_unavailable");
    let run = remote_run("https://127.0.0.1:1", &["health"]);
    assert_eq!(
        (run.code(), run.error_code()),
        (2, "invalid_input".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_comes_from_cairn_token() {
    let cli = Cli::new();
    let db = cli.db().display().to_string();
    let port = free_port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_cairn"));
    server
        .args(["serve", "--db", &db, "--bind"])
        .arg(format!("127.0.0.1:{port}"))
        .env("CAIRN_TOKEN", "s3cret")
        .env("CAIRN_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = server.spawn().expect("serve starts");
    let url = format!("http://127.0.0.1:{port}");
    let up = crate::process_helpers::within(std::time::Duration::from_secs(30), async || {
        let run = remote_run(&url, &["health"]);
        (run.code() != 1 || run.error_code() != "server_unavailable").then_some(())
    })
    .await;
    assert!(up.is_some(), "the server came up");
    let run = remote_run(&url, &["task_list"]);
    assert_eq!(
        (run.code(), run.error_code()),
        (1, "unauthorized".to_owned())
    );
    let output = cairn_command()
        .env("CAIRN_TOKEN", "s3cret")
        .args(["--url", &url, "task_list"])
        .output()
        .unwrap();
    assert_eq!(Run(output).code(), 0);
    let _ = child.kill();
    let _ = child.wait();
}
