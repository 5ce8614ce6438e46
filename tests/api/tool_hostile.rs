//! Hostile text through the tools, on every backend: a NUL character is
//! refused naming its field and writes nothing (PostgreSQL text cannot hold
//! one; SQLite could, and both must answer the same).

use serde_json::json;

use crate::tool_helpers::*;

#[tokio::test]
async fn a_nul_in_any_text_field_is_invalid_input_naming_it() {
    let t = cairn();
    let task = t.task("clean").await;
    for (tool, args, field) in [
        ("task_create", json!({"title": "a\0b"}), "title"),
        (
            "task_create",
            json!({"title": "ok", "description": "x\0"}),
            "description",
        ),
        (
            "task_create",
            json!({"title": "ok", "tags": ["fine", "b\0d"]}),
            "tags[1]",
        ),
        (
            "task_update",
            json!({"id": task["id"], "title": "\0"}),
            "title",
        ),
        (
            "note_write",
            json!({"title": "n", "content": "x\0y"}),
            "content",
        ),
        (
            "note_write",
            json!({"title": "n\0", "content": ""}),
            "title",
        ),
        ("search", json!({"q": "a\0b"}), "q"),
        ("task_get", json!({"id": "abcdef\0"}), "id"),
    ] {
        let e = t.err(tool, args.clone()).await;
        assert_error(&e, "validation", "invalid_input", false);
        assert_eq!(e["details"]["field"], field, "{tool}({args})");
    }
    let e = t.err("task_create", json!({"title": "ok", "a\0": 1})).await;
    assert_error(&e, "validation", "invalid_input", false);
    // Nothing was written: the one task is still the clean one, at version 1.
    let list = t.ok("task_list", json!({})).await;
    assert_eq!(list["total"], 1);
    assert_eq!(list["items"][0]["version"], 1);
    assert_eq!(t.ok("note_list", json!({})).await["total"], 0);
}

#[tokio::test]
async fn other_control_characters_are_stored_and_found_as_given() {
    let t = cairn();
    let task = t.task("bell\u{7}ringer tab\there").await;
    let got = t.ok("task_get", json!({"id": task["id"]})).await;
    assert_eq!(got["title"], "bell\u{7}ringer tab\there");
    assert_eq!(t.ok("search", json!({"q": "ringer"})).await["total"], 1);
}
