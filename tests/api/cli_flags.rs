//! How `cairn <tool> --field value ...` becomes tool arguments, read from each
//! field's JSON Schema (in process: no binary, no store).

use cairn::cli::tool_command::{GLOBAL_FLAGS, parse_invocation};
use cairn::envelope::ErrorCode;
use serde_json::{Value, json};

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

fn arguments(tool: &str, line: &str) -> Value {
    let call = parse_invocation(tool, &words(line)).unwrap_or_else(|e| panic!("{line}: {e}"));
    Value::Object(call.arguments)
}

#[test]
fn strings_stay_strings_even_when_they_look_like_json() {
    assert_eq!(
        arguments("task_create", "--title 123"),
        json!({"title": "123"})
    );
    assert_eq!(
        arguments("task_create", "--title true"),
        json!({"title": "true"})
    );
}

#[test]
fn integers_parse_and_non_integers_are_invalid_input() {
    assert_eq!(arguments("task_list", "--limit 20"), json!({"limit": 20}));
    let error = parse_invocation("task_list", &words("--limit 2.5")).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert_eq!(error.details["field"], "limit");
}

#[test]
fn a_bare_boolean_flag_is_true() {
    assert_eq!(arguments("graph_doctor", "--fix"), json!({"fix": true}));
    assert_eq!(
        arguments("graph_doctor", "--fix false"),
        json!({"fix": false})
    );
}

#[test]
fn arrays_take_commas_json_or_repeated_flags() {
    let expected = json!({"title": "t", "tags": ["a", "b"]});
    assert_eq!(arguments("task_create", "--title t --tags a,b"), expected);
    assert_eq!(
        arguments("task_create", r#"--title t --tags ["a","b"]"#),
        expected
    );
    assert_eq!(
        arguments("task_create", "--title t --tags a --tags b"),
        expected
    );
}

#[test]
fn kebab_case_and_equals_forms_are_accepted() {
    assert_eq!(
        arguments(
            "task_update",
            "--id abcdef --expected-version=3 --title=--dashes"
        ),
        json!({"id": "abcdef", "expected_version": 3, "title": "--dashes"})
    );
}

#[test]
fn one_bare_word_is_the_target_id_or_the_only_required_field() {
    assert_eq!(arguments("task_get", "abcdef"), json!({"id": "abcdef"}));
    assert_eq!(
        arguments("task_claim", "abcdef --agent ann"),
        json!({"id": "abcdef", "agent": "ann"})
    );
    assert_eq!(arguments("search", "migrat*"), json!({"q": "migrat*"}));
    let error = parse_invocation("task_claim", &words("abcdef extra")).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidInput);
    let error = parse_invocation("link_add", &words("abcdef")).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidInput);
}

#[test]
fn a_flag_without_its_value_is_invalid_input() {
    let error = parse_invocation("task_create", &words("--title")).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert_eq!(error.details["field"], "title");
}

#[test]
fn unknown_flags_name_the_nearest_fields() {
    let error = parse_invocation("task_claim", &words("--id x --agnet me")).unwrap_err();
    assert_eq!(error.code, ErrorCode::UnknownField);
    assert_eq!(error.details["field"], "agnet");
    assert_eq!(error.suggestions, ["agent"]);
}

#[test]
fn global_options_are_recognised_after_the_tool_name() {
    let call =
        parse_invocation("health", &words("--dense --db /tmp/x.db --disable notes")).unwrap();
    assert!(call.dense);
    assert_eq!(call.db.as_deref(), Some("/tmp/x.db"));
    assert_eq!(call.disable.unwrap(), [cairn::tools::Module::Notes]);
    assert!(call.arguments.is_empty());
}

#[test]
fn no_tool_field_is_shadowed_by_a_global_option() {
    for tool in cairn::tools::REGISTRY {
        for field in cairn::tools::fields::input_fields(tool) {
            assert!(
                !(GLOBAL_FLAGS.contains(&field.name.as_str()) || field.name == "help"),
                "`{}.{}` collides with a CLI option",
                tool.name,
                field.name
            );
        }
    }
}
