//! health, argument decoding, the module gate, and panics in tools.

use cairn::envelope::ToolError;
use cairn::tools::{Module, ToolDef};
use serde_json::json;

use crate::tool_helpers::*;

#[tokio::test]
async fn health_reports_ok_with_counts_and_every_check() {
    let t = cairn();
    t.task("a").await;
    t.note("n", "").await;
    let h = t.ok("health", json!({})).await;
    assert_eq!(h["status"], "ok");
    assert_eq!(h["store"], Backend::from_env().kind());
    assert_eq!(h["schema_version"], Backend::from_env().schema_version());
    assert_eq!(h["counts"], json!({"tasks": 1, "notes": 1, "links": 0}));
    assert_eq!(h["search"], true);
    let names: Vec<_> = h["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].clone())
        .collect();
    assert_eq!(
        names,
        [json!("store_read"), json!("store_write"), json!("search")]
    );
    assert!(
        h["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["status"] == "ok")
    );
}

#[tokio::test]
async fn health_on_a_read_only_store_is_degraded_not_failed() {
    let t = cairn();
    let ro = reopen(
        &t.db,
        &cairn::store::StoreOptions {
            read_only: true,
            ..Default::default()
        },
    );
    let h = ok(&ro, "health", json!({})).await;
    assert_eq!(h["status"], "degraded");
    assert_eq!(h["checks"][1]["status"], "failed");
    assert_eq!(h["checks"][1]["code"], "read_only");
}

#[tokio::test]
async fn unknown_field_names_the_field_and_suggests_the_nearest() {
    let t = cairn();
    let e = t.err("task_create", json!({"titel": "x"})).await;
    assert_error(&e, "validation", "unknown_field", false);
    assert_eq!(e["details"]["field"], "titel");
    assert_eq!(e["suggestions"][0], "title");
}

#[tokio::test]
async fn a_swapped_pair_of_letters_suggests_the_intended_value_first() {
    let t = cairn();
    let e = t.err("task_list", json!({"status": "opne"})).await;
    assert_error(&e, "validation", "invalid_input", false);
    assert_eq!(e["suggestions"][0], "open", "{e}");
}

#[tokio::test]
async fn missing_required_field_is_missing_field() {
    let t = cairn();
    let e = t.err("task_claim", json!({"id": "abcdefabcdef"})).await;
    assert_error(&e, "validation", "missing_field", false);
    assert_eq!(e["details"]["field"], "agent");
}

#[tokio::test]
async fn wrong_type_is_invalid_input_with_the_field() {
    let t = cairn();
    let e = t.err("task_list", json!({"limit": "ten"})).await;
    assert_error(&e, "validation", "invalid_input", false);
    assert_eq!(e["details"]["field"], "limit");
    assert!(e["details"]["reason"].is_string());
    let e = t
        .err("task_create", json!({"title": "x", "tags": [1]}))
        .await;
    assert_eq!(e["details"]["field"], "tags[0]");
}

#[tokio::test]
async fn an_unknown_enum_value_suggests_the_nearest_valid_one() {
    let t = cairn();
    let e = t.err("task_list", json!({"status": "claimd"})).await;
    assert_error(&e, "validation", "invalid_input", false);
    assert_eq!(e["details"]["field"], "status");
    assert_eq!(e["suggestions"][0], "claimed");
}

#[tokio::test]
async fn a_wrong_value_is_told_in_one_plain_sentence_naming_the_field() {
    let t = cairn();
    let cases = [
        ("task_create", json!({"title": 3}), "title"),
        ("task_create", json!({"title": null}), "title"),
        ("task_create", json!({"title": "x", "tags": "a"}), "tags"),
        ("task_create", json!({"title": "x", "tags": [1]}), "tags[0]"),
        (
            "task_create",
            json!({"title": "x", "priority": 3}),
            "priority",
        ),
        ("task_list", json!({"limit": "ten"}), "limit"),
        ("task_list", json!({"limit": 1.5}), "limit"),
        ("task_list", json!({"limit": u64::MAX}), "limit"),
        ("task_list", json!({"status": "claimd"}), "status"),
        ("task_board", json!({"columns": "open"}), "columns"),
        (
            "task_board",
            json!({"cursors": {"open": 3}}),
            "cursors.open",
        ),
        ("task_board", json!({"cursors": 3}), "cursors"),
        (
            "link_add",
            json!({"source": "a", "target": "b", "kind": 3}),
            "kind",
        ),
        ("graph_doctor", json!({"fix": "yes"}), "fix"),
        ("task_get", json!([1]), "arguments"),
    ];
    for (tool, args, field) in cases {
        let e = t.err(tool, args.clone()).await;
        assert_error(&e, "validation", "invalid_input", false);
        assert_eq!(e["details"]["field"], field, "{tool}({args})");
        assert!(e["details"]["reason"].is_string(), "{tool}({args})");
        let message = e["message"].as_str().unwrap();
        for serde_words in [
            "invalid type:",
            "invalid value:",
            "unknown variant",
            "expected",
            "i64",
            " map",
        ] {
            assert!(
                !message.contains(serde_words),
                "{tool}({args}): message has serde wording `{serde_words}`: {message}"
            );
        }
        assert!(
            message.contains(&format!("`{field}`")) || field == "arguments",
            "{tool}({args}): message names the field: {message}"
        );
        let outside_code: String = message.split('`').step_by(2).collect();
        assert_eq!(
            outside_code.matches(['.', '?']).count(),
            1,
            "one sentence: {message}"
        );
        assert!(message.ends_with(['.', '?']), "{message}");
    }
}

#[tokio::test]
async fn an_enum_given_the_wrong_type_is_told_its_valid_values() {
    let t = cairn();
    let e = t
        .err("task_create", json!({"title": "x", "priority": 3}))
        .await;
    assert_error(&e, "validation", "invalid_input", false);
    assert_eq!(e["details"]["field"], "priority");
    let message = e["message"].as_str().unwrap();
    assert!(!message.contains("invalid type:"), "{message}");
    for value in ["low", "normal", "high", "urgent"] {
        assert!(message.contains(&format!("`{value}`")), "{message}");
    }
}

#[tokio::test]
async fn non_object_arguments_are_invalid_input_and_null_means_none() {
    let t = cairn();
    let e = t.err("task_list", json!([1, 2])).await;
    assert_error(&e, "validation", "invalid_input", false);
    assert_eq!(e["details"]["field"], "arguments");
    t.ok("task_list", json!(null)).await;
    t.ok("health", json!(null)).await;
}

#[tokio::test]
async fn an_unknown_tool_suggests_the_nearest_names() {
    let t = cairn();
    let e = t.err("task_craete", json!({})).await;
    assert_error(&e, "validation", "invalid_input", false);
    assert_eq!(e["suggestions"][0], "task_create");
}

#[tokio::test]
async fn a_disabled_module_answers_module_disabled() {
    let config = cairn::tools::Config {
        disabled_modules: [Module::Graph].into_iter().collect(),
        ..Default::default()
    };
    let t = cairn_with(&Default::default(), config);
    let e = t.err("graph_export", json!({})).await;
    assert_error(&e, "module_disabled", "module_disabled", false);
    assert_eq!(e["details"]["module"], "graph");
    t.task("tasks still work").await;
}

#[tokio::test]
async fn every_registered_tool_has_an_object_input_schema_and_a_description() {
    for def in cairn::tools::REGISTRY {
        let schema = serde_json::to_value((def.input_schema)()).unwrap();
        assert_eq!(schema["type"], "object", "{}", def.name);
        assert!(!def.description.is_empty());
        let _ = (def.output_schema)();
        assert!(cairn::tools::registry::find(def.name).is_some());
    }
    let mut names: Vec<_> = cairn::tools::REGISTRY.iter().map(|d| d.name).collect();
    let before = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), before, "a tool is registered twice");
}

#[test]
fn every_input_field_is_described_and_unknown_fields_are_refused_in_the_schema() {
    for def in cairn::tools::REGISTRY {
        let schema = serde_json::to_value((def.input_schema)()).unwrap();
        assert_eq!(schema["additionalProperties"], false, "{}", def.name);
        let properties = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (field, property) in &properties {
            assert!(
                property["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{}.{field} has no description",
                def.name
            );
        }
    }
}

fn panicking_tool(
    _: &cairn::tools::Ctx<'_>,
    _: serde_json::Value,
) -> Result<serde_json::Value, ToolError> {
    panic!("boom: SELECT * FROM secrets at /var/lib/cairn.db")
}

static PANICKER: ToolDef = ToolDef {
    name: "panicker",
    description: "Panics, for tests.",
    module: Module::System,
    effect: cairn::tools::Effect::Reads,
    input_schema: || schemars::schema_for!(cairn::tools::system::HealthInput),
    output_schema: || schemars::schema_for!(cairn::tools::system::HealthInput),
    handler: panicking_tool,
    check: accept_anything,
    point_read: false,
    one_write: false,
};

fn accept_anything(_: serde_json::Value) -> Result<(), ToolError> {
    Ok(())
}

#[tokio::test]
async fn a_panic_in_a_tool_is_internal_error_and_the_next_call_is_served() {
    let t = cairn();
    let envelope = to_json(t.cairn.call_def(&PANICKER, json!({}), "test-request").await);
    assert_eq!(envelope["ok"], false);
    let e = &envelope["error"];
    assert_error(e, "internal", "internal_error", false);
    assert_eq!(e["details"], json!({}));
    assert_no_internals(e, &t.path);
    assert!(!e["message"].as_str().unwrap().contains("boom"));
    assert_eq!(envelope["meta"]["request_id"], "test-request");
    t.task("still serving").await;
    assert_eq!(t.ok("health", json!({})).await["status"], "ok");
}
