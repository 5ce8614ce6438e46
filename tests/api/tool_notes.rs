//! Note tools: writes, slugs, duplicates, wiki-links, reads by prefix or slug.

use serde_json::json;

use crate::tool_helpers::*;

#[tokio::test]
async fn note_write_without_id_creates_a_note_at_version_1() {
    let t = cairn();
    let n = t
        .ok(
            "note_write",
            json!({"title": "Hello, World!", "content": "body", "tags": ["x"], "source_url": "https://e.x/a"}),
        )
        .await;
    assert_eq!(n["title"], "Hello, World!");
    assert_eq!(n["slug"], "hello-world");
    assert_eq!(n["version"], 1);
    assert_eq!(n["created"], true);
    assert_eq!(n["linked"], json!([]));
    assert_eq!(n["unresolved_links"], json!([]));
    let read = t.ok("note_read", json!({"id": n["id"]})).await;
    assert_eq!(read["content"], "body");
    assert_eq!(read["tags"], json!(["x"]));
    assert_eq!(read["source_url"], "https://e.x/a");
}

#[tokio::test]
async fn note_write_with_id_replaces_and_bumps_version() {
    let t = cairn();
    let n = t.note("First", "one").await;
    let id = n["id"].as_str().unwrap();
    let w = t
        .ok(
            "note_write",
            json!({"id": &id[..7], "title": "First", "content": "two", "expected_version": 1}),
        )
        .await;
    assert_eq!(w["id"], id);
    assert_eq!(w["created"], false);
    assert_eq!(w["version"], 2);
    assert_eq!(t.ok("note_read", json!({"id": id})).await["content"], "two");
}

#[tokio::test]
async fn note_write_update_keeps_omitted_tags_and_source_and_clears_on_request() {
    let t = cairn();
    let n = t
        .ok(
            "note_write",
            json!({"title": "Kept", "content": "a", "tags": ["t"], "source_url": "https://e.x/k"}),
        )
        .await;
    t.ok(
        "note_write",
        json!({"id": n["id"], "title": "Kept", "content": "b"}),
    )
    .await;
    let read = t.ok("note_read", json!({"id": n["id"]})).await;
    assert_eq!(read["tags"], json!(["t"]));
    assert_eq!(read["source_url"], "https://e.x/k");
    t.ok(
        "note_write",
        json!({"id": n["id"], "title": "Kept", "content": "c", "tags": [], "source_url": ""}),
    )
    .await;
    let read = t.ok("note_read", json!({"id": n["id"]})).await;
    assert_eq!(read["tags"], json!([]));
    assert_eq!(read["source_url"], json!(null));
    // An empty source on create means none.
    let other = t
        .ok(
            "note_write",
            json!({"title": "Other", "content": "", "source_url": " "}),
        )
        .await;
    assert_eq!(
        t.ok("note_read", json!({"id": other["id"]})).await["source_url"],
        json!(null)
    );
}

#[tokio::test]
async fn note_write_with_stale_version_is_version_conflict() {
    let t = cairn();
    let id = t.note("N", "one").await["id"].clone();
    t.ok(
        "note_write",
        json!({"id": id, "title": "N", "content": "two"}),
    )
    .await;
    let e = t
        .err(
            "note_write",
            json!({"id": id, "title": "N", "content": "three", "expected_version": 1}),
        )
        .await;
    assert_error(&e, "conflict", "version_conflict", false);
    assert_eq!(e["details"]["current_version"], 2);
    assert_eq!(t.ok("note_read", json!({"id": id})).await["content"], "two");
}

#[tokio::test]
async fn note_write_expected_version_without_id_is_invalid_input() {
    let t = cairn();
    let e = t
        .err(
            "note_write",
            json!({"title": "N", "content": "", "expected_version": 1}),
        )
        .await;
    assert_error(&e, "validation", "invalid_input", false);
    assert_eq!(e["details"]["field"], "expected_version");
}

#[tokio::test]
async fn note_write_unknown_id_is_note_not_found() {
    let t = cairn();
    let e = t
        .err(
            "note_write",
            json!({"id": "0123456789", "title": "N", "content": ""}),
        )
        .await;
    assert_error(&e, "not_found", "note_not_found", false);
    assert_eq!(e["details"]["id"], "0123456789");
}

#[tokio::test]
async fn note_write_same_slug_is_slug_collision_with_existing_id() {
    let t = cairn();
    let first = t.note("Rust Tips", "a").await;
    let e = t
        .err(
            "note_write",
            json!({"title": "rust  tips!", "content": "b"}),
        )
        .await;
    assert_error(&e, "conflict", "slug_collision", false);
    assert_eq!(e["details"]["existing_id"], first["id"]);
}

#[tokio::test]
async fn note_write_same_source_url_is_duplicate_with_duplicate_of() {
    let t = cairn();
    let first = t
        .ok(
            "note_write",
            json!({"title": "A", "content": "a", "source_url": "https://e.x/1"}),
        )
        .await;
    let e = t
        .err(
            "note_write",
            json!({"title": "B", "content": "b", "source_url": "https://e.x/1"}),
        )
        .await;
    assert_error(&e, "conflict", "duplicate", false);
    assert_eq!(
        e["details"]["duplicate_of"],
        json!({"id": first["id"], "title": "A", "source_url": "https://e.x/1"})
    );
    // Rewriting the holder itself with its own source is fine.
    t.ok(
        "note_write",
        json!({"id": first["id"], "title": "A", "content": "a2", "source_url": "https://e.x/1"}),
    )
    .await;
}

#[tokio::test]
async fn note_write_over_the_content_limit_is_content_too_large() {
    let config = cairn::tools::Config {
        content_limit_bytes: 10,
        ..Default::default()
    };
    let t = cairn_with(&Default::default(), config);
    let e = t
        .err(
            "note_write",
            json!({"title": "Big", "content": "x".repeat(11)}),
        )
        .await;
    assert_error(&e, "too_large", "content_too_large", false);
    assert_eq!(e["details"]["limit_bytes"], 10);
    t.ok(
        "note_write",
        json!({"title": "Fits", "content": "x".repeat(10)}),
    )
    .await;
}

#[tokio::test]
async fn note_write_title_without_letters_is_invalid_input() {
    let t = cairn();
    let e = t
        .err("note_write", json!({"title": "!!!", "content": ""}))
        .await;
    assert_error(&e, "validation", "invalid_input", false);
    assert_eq!(e["details"]["field"], "title");
}

/// A letter or digit of any script makes a title (the schema's pattern
/// says so for ASCII and lets every other character through, see
/// `LETTER_OR_DIGIT`); characters beyond ASCII that are no letters do not.
#[tokio::test]
async fn a_title_needs_a_letter_or_digit_of_any_script() {
    let t = cairn();
    for title in ["日本語", "ùÝ", "Ωμέγα", "٣"] {
        let written = t
            .ok("note_write", json!({"title": title, "content": ""}))
            .await;
        assert_eq!(written["title"], title);
    }
    for title in ["€", "…—…", "_"] {
        let e = t
            .err("note_write", json!({"title": title, "content": ""}))
            .await;
        assert_error(&e, "validation", "invalid_input", false);
        assert_eq!(e["details"]["field"], "title", "{title}");
    }
}

#[tokio::test]
async fn note_write_missing_content_is_missing_field() {
    let t = cairn();
    let e = t.err("note_write", json!({"title": "x"})).await;
    assert_error(&e, "validation", "missing_field", false);
    assert_eq!(e["details"]["field"], "content");
}

#[tokio::test]
async fn wiki_links_become_links_to_edges_and_resolve_later() {
    let t = cairn();
    let a = t.note("Alpha", "see [[Beta]] and [[gamma]]").await;
    assert_eq!(a["unresolved_links"], json!(["beta", "gamma"]));
    let b = t.note("Beta", "back to [[Alpha]]").await;
    assert_eq!(b["linked"], json!([a["id"]]));
    // Writing Beta resolved Alpha's pending link.
    let graph = t.ok("graph_neighbours", json!({"id": a["id"]})).await;
    let mut kinds: Vec<_> = graph["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["source"].clone(), e["target"].clone(), e["kind"].clone()))
        .collect();
    kinds.sort_by_key(|k| k.0.to_string());
    assert_eq!(kinds.len(), 2);
    assert!(kinds.contains(&(a["id"].clone(), b["id"].clone(), json!("links_to"))));
    assert!(kinds.contains(&(b["id"].clone(), a["id"].clone(), json!("links_to"))));
    let read = t.ok("note_read", json!({"id": "alpha"})).await;
    assert_eq!(read["unresolved_links"], json!(["gamma"]));
}

#[tokio::test]
async fn unresolved_links_follow_the_content_order() {
    let t = cairn();
    let n = t
        .note("Index", "first [[Zeta]], then [[Alpha]], [[Zeta]] again")
        .await;
    assert_eq!(n["unresolved_links"], json!(["zeta", "alpha"]));
    let read = t.ok("note_read", json!({"id": n["id"]})).await;
    assert_eq!(read["unresolved_links"], json!(["zeta", "alpha"]));
}

#[tokio::test]
async fn rewriting_content_recomputes_wiki_link_edges() {
    let t = cairn();
    let b = t.note("Beta", "").await;
    let a = t.note("Alpha", "[[Beta]]").await;
    assert_eq!(a["linked"], json!([b["id"]]));
    let a2 = t
        .ok(
            "note_write",
            json!({"id": a["id"], "title": "Alpha", "content": "no links"}),
        )
        .await;
    assert_eq!(a2["linked"], json!([]));
    let graph = t.ok("graph_neighbours", json!({"id": b["id"]})).await;
    assert_eq!(graph["edges"], json!([]));
}

#[tokio::test]
async fn note_read_accepts_slug_and_prefix() {
    let t = cairn();
    let n = t.note("My Note", "c").await;
    let id = n["id"].as_str().unwrap();
    assert_eq!(t.ok("note_read", json!({"id": "my-note"})).await["id"], id);
    assert_eq!(t.ok("note_read", json!({"id": "My Note"})).await["id"], id);
    assert_eq!(t.ok("note_read", json!({"id": &id[..6]})).await["id"], id);
}

#[tokio::test]
async fn note_read_errors_follow_the_prefix_rules() {
    let t = cairn();
    t.note("x", "").await;
    let e = t.err("note_read", json!({"id": "abc"})).await;
    assert_error(&e, "validation", "id_prefix_too_short", false);
    assert_eq!(e["details"]["min_length"], 6);
    let e = t.err("note_read", json!({"id": "no-such-note"})).await;
    assert_error(&e, "not_found", "note_not_found", false);
}

#[tokio::test]
async fn note_list_pages_filters_and_omits_content() {
    let t = cairn();
    t.ok(
        "note_write",
        json!({"title": "One", "content": "apple", "tags": ["fruit"]}),
    )
    .await;
    t.ok(
        "note_write",
        json!({"title": "Two", "content": "pear", "tags": ["fruit"]}),
    )
    .await;
    t.note("Three", "rock").await;
    let all = t.ok("note_list", json!({"limit": 2})).await;
    assert_eq!(all["total"], 3);
    assert_eq!(all["items"][0]["title"], "Three");
    assert!(all["items"][0].get("content").is_none());
    let rest = t
        .ok(
            "note_list",
            json!({"limit": 2, "cursor": all["next_cursor"]}),
        )
        .await;
    assert_eq!(rest["items"].as_array().unwrap().len(), 1);
    assert_eq!(rest["next_cursor"], json!(null));
    assert_eq!(t.ok("note_list", json!({"tag": "fruit"})).await["total"], 2);
    assert_eq!(t.ok("note_list", json!({"q": "PEAR"})).await["total"], 1);
}

#[tokio::test]
async fn note_list_bad_limit_or_cursor_is_refused() {
    let t = cairn();
    let e = t.err("note_list", json!({"limit": 0})).await;
    assert_error(&e, "validation", "invalid_input", false);
    let e = t.err("note_list", json!({"cursor": "zzz"})).await;
    assert_error(&e, "validation", "invalid_cursor", false);
}

#[tokio::test]
async fn note_delete_removes_the_note_and_its_edges() {
    let t = cairn();
    let a = t.note("Alpha", "[[Beta]]").await;
    let b = t.note("Beta", "").await;
    let task = t.task("work").await;
    t.ok(
        "link_add",
        json!({"source": task["id"], "target": b["id"], "kind": "relates_to"}),
    )
    .await;
    let deleted = t.ok("note_delete", json!({"id": "beta"})).await;
    assert_eq!(
        deleted,
        json!({"id": b["id"], "title": "Beta", "deleted": true})
    );
    let e = t.err("note_read", json!({"id": b["id"]})).await;
    assert_error(&e, "not_found", "note_not_found", false);
    let doctor = t.ok("graph_doctor", json!({})).await;
    assert_eq!(doctor["dangling"], json!([]));
    let read = t.ok("note_read", json!({"id": a["id"]})).await;
    assert_eq!(read["unresolved_links"], json!(["beta"]));
}

#[tokio::test]
async fn note_delete_with_stale_version_or_unknown_id_is_refused() {
    let t = cairn();
    let n = t.note("N", "").await;
    let e = t
        .err("note_delete", json!({"id": n["id"], "expected_version": 7}))
        .await;
    assert_error(&e, "conflict", "version_conflict", false);
    assert_eq!(e["details"]["current_version"], 1);
    let e = t.err("note_delete", json!({"id": "ffffffffffff"})).await;
    assert_error(&e, "not_found", "note_not_found", false);
}

#[tokio::test]
async fn note_read_lists_the_notes_its_wiki_links_name_in_content_order() {
    let t = cairn();
    let zeta = t.note("Zeta", "").await;
    let alpha = t.note("Alpha", "").await;
    t.note(
        "Hub",
        "first [[Zeta]], then [[Missing]], [[alpha|the first]], [[zeta]] again, and [[Hub]]",
    )
    .await;
    let read = t.ok("note_read", json!({"id": "hub"})).await;
    let hub_id = read["id"].clone();
    assert_eq!(
        read["links"],
        json!([
            {"id": zeta["id"], "title": "Zeta", "slug": "zeta"},
            {"id": alpha["id"], "title": "Alpha", "slug": "alpha"},
            {"id": hub_id, "title": "Hub", "slug": "hub"},
        ])
    );
    assert_eq!(read["unresolved_links"], json!(["missing"]));
}

#[tokio::test]
async fn a_link_resolves_on_read_once_its_note_is_written_and_unresolves_on_delete() {
    let t = cairn();
    t.note("Hub", "see [[Later]]").await;
    let read = t.ok("note_read", json!({"id": "hub"})).await;
    assert_eq!(read["links"], json!([]));
    let later = t.note("Later", "").await;
    let read = t.ok("note_read", json!({"id": "hub"})).await;
    assert_eq!(
        read["links"],
        json!([{"id": later["id"], "title": "Later", "slug": "later"}])
    );
    assert_eq!(read["unresolved_links"], json!([]));
    t.ok("note_delete", json!({"id": "later"})).await;
    let read = t.ok("note_read", json!({"id": "hub"})).await;
    assert_eq!(read["links"], json!([]));
    assert_eq!(read["unresolved_links"], json!(["later"]));
}

#[tokio::test]
async fn a_short_prefix_of_a_notes_id_is_id_prefix_too_short() {
    let t = cairn();
    t.note_with_id("abc00000000000000000000000000001", "Only")
        .await;
    for key in ["abc", "ABC0", "abc00"] {
        let e = t.err("note_read", json!({"id": key})).await;
        assert_error(&e, "validation", "id_prefix_too_short", false);
        assert_eq!(e["details"]["min_length"], 6);
    }
    assert_eq!(
        t.ok("note_read", json!({"id": "abc000"})).await["title"],
        "Only"
    );
}

#[tokio::test]
async fn a_prefix_two_notes_share_is_ambiguous_with_both_candidates() {
    let t = cairn();
    t.note_with_id("abcdef00000000000000000000000002", "Second")
        .await;
    t.note_with_id("abcdef00000000000000000000000001", "First")
        .await;
    let e = t.err("note_read", json!({"id": "abcdef"})).await;
    assert_error(&e, "validation", "ambiguous_id_prefix", false);
    assert_eq!(
        e["details"]["candidates"],
        json!([
            {"id": "abcdef00000000000000000000000001", "title": "First"},
            {"id": "abcdef00000000000000000000000002", "title": "Second"},
        ])
    );
    let one = t
        .ok(
            "note_read",
            json!({"id": "abcdef00000000000000000000000002"}),
        )
        .await;
    assert_eq!(one["title"], "Second");
}

#[tokio::test]
async fn an_exact_note_id_wins_over_a_slug_and_a_slug_over_a_prefix() {
    let t = cairn();
    // A note whose slug is another note's full id, and one whose slug is a prefix.
    t.note_with_id("abcdef", "Short id").await;
    t.note_with_id("abcdef00000000000000000000000001", "abcdef0")
        .await;
    t.note_with_id("abcdef00000000000000000000000002", "abcdef")
        .await;
    assert_eq!(
        t.ok("note_read", json!({"id": "abcdef"})).await["title"],
        "Short id"
    );
    // `abcdef0` is a prefix of two ids and the slug of one note: the slug wins.
    assert_eq!(
        t.ok("note_read", json!({"id": "abcdef0"})).await["title"],
        "abcdef0"
    );
}
