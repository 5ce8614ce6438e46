//! `cairn envelope` through the binary: what an agent is shown for any payload.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::budget::{AGENT, Answer, check_answer};

fn cairn_envelope(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("envelope")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the cairn binary starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin)
        .expect("stdin takes the payload");
    child.wait_with_output().expect("cairn envelope finishes")
}

fn answer(output: &Output) -> Answer {
    let text = String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8");
    let line = text.strip_suffix('\n').expect("one line on stdout");
    assert!(!line.contains('\n'), "exactly one envelope on stdout");
    Answer::parse(line.to_owned())
}

fn big_payload() -> Value {
    let rows: Vec<Value> = (0..200)
        .map(|i| json!({"id": i, "text": "lorem ipsum ".repeat(100)}))
        .collect();
    json!({"results": rows})
}

#[test]
fn the_agent_tier_trims_a_large_payload_and_exits_0() {
    let input = big_payload();
    let output = cairn_envelope(&[], input.to_string().as_bytes());
    assert_eq!(output.status.code(), Some(0));
    let answer = answer(&output);
    check_answer(&input, &answer, AGENT);
    assert_eq!(answer.json["ok"], true);
    assert_eq!(answer.meta()["truncated"], true);
}

#[test]
fn tier_none_prints_the_payload_untouched() {
    let input = big_payload();
    let output = cairn_envelope(&["--tier", "none"], input.to_string().as_bytes());
    assert_eq!(output.status.code(), Some(0));
    let answer = answer(&output);
    assert_eq!(answer.data(), &input);
    assert_eq!(answer.meta()["truncated"], false);
}

#[test]
fn the_tool_flag_sets_meta_tool() {
    let output = cairn_envelope(&["--tool", "task_list"], b"{\"a\":1}");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(answer(&output).meta()["tool"], "task_list");
}

#[test]
fn input_that_is_not_json_is_an_invalid_json_failure_with_exit_2() {
    let output = cairn_envelope(&[], b"{not json");
    assert_eq!(output.status.code(), Some(2));
    let answer = answer(&output);
    assert_eq!(answer.json["ok"], false);
    assert_eq!(answer.json["error"]["code"], "invalid_json");
    assert_eq!(answer.json["error"]["category"], "validation");
}

#[test]
fn empty_stdin_is_an_invalid_json_failure_with_exit_2() {
    let output = cairn_envelope(&[], b"");
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(answer(&output).json["error"]["code"], "invalid_json");
}
