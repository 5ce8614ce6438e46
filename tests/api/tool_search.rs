//! Full-text search: ranking, snippets, paging, hostile queries, a missing index.

use serde_json::json;

use crate::tool_helpers::*;

#[tokio::test]
async fn search_finds_tasks_and_notes_with_marked_snippets() {
    let t = cairn();
    let task = t
        .ok(
            "task_create",
            json!({"title": "Migrate the database", "description": "move rows"}),
        )
        .await;
    let note = t
        .note(
            "Notes",
            "How we migrate: carefully, with a database backup.",
        )
        .await;
    t.task("Unrelated").await;
    let hits = t.ok("search", json!({"q": "database"})).await;
    assert_eq!(hits["total"], 2);
    let items = hits["items"].as_array().unwrap();
    // The title match ranks first (titles weigh more).
    assert_eq!(items[0]["id"], task["id"]);
    assert_eq!(items[0]["kind"], "task");
    assert_eq!(items[1]["id"], note["id"]);
    assert_eq!(items[1]["kind"], "note");
    assert!(
        items[1]["snippet"]
            .as_str()
            .unwrap()
            .contains("<mark>database</mark>")
    );
    assert!(items[0]["score"].as_f64().unwrap() >= items[1]["score"].as_f64().unwrap());
}

#[tokio::test]
async fn search_follows_updates_and_deletes() {
    let t = cairn();
    let task = t.task("alpha").await;
    t.ok("task_update", json!({"id": task["id"], "title": "beta"}))
        .await;
    assert_eq!(t.ok("search", json!({"q": "alpha"})).await["total"], 0);
    assert_eq!(t.ok("search", json!({"q": "beta"})).await["total"], 1);
    // The body alone changes too.
    t.ok(
        "task_update",
        json!({"id": task["id"], "description": "delta"}),
    )
    .await;
    assert_eq!(t.ok("search", json!({"q": "delta"})).await["total"], 1);
    let note = t.note("gamma", "").await;
    t.ok("note_delete", json!({"id": note["id"]})).await;
    assert_eq!(t.ok("search", json!({"q": "gamma"})).await["total"], 0);
}

#[tokio::test]
async fn search_pages_with_a_cursor() {
    let t = cairn();
    for i in 0..5 {
        t.task(&format!("widget {i}")).await;
    }
    let first = t.ok("search", json!({"q": "widget", "limit": 3})).await;
    assert_eq!(first["items"].as_array().unwrap().len(), 3);
    assert_eq!(first["total"], 5);
    let second = t
        .ok(
            "search",
            json!({"q": "widget", "limit": 3, "cursor": first["next_cursor"]}),
        )
        .await;
    assert_eq!(second["items"].as_array().unwrap().len(), 2);
    assert_eq!(second["next_cursor"], json!(null));
}

#[tokio::test]
async fn search_syntax_in_queries_never_leaks_an_fts_error() {
    let t = cairn();
    t.task("quote \"me\" AND NEAR(x)").await;
    for q in [
        "\"", "AND", "NEAR(", "a OR", "title:x", "*", "x*", "(\")", "a - b", "^x", "{a b}",
    ] {
        let envelope = t.call("search", json!({"q": q})).await;
        if envelope["ok"] == false {
            assert_error(&envelope["error"], "validation", "invalid_input", false);
        }
    }
    assert_eq!(t.ok("search", json!({"q": "quo*"})).await["total"], 1);
}

#[tokio::test]
async fn search_without_words_or_with_bad_paging_is_refused() {
    let t = cairn();
    let e = t.err("search", json!({"q": "   "})).await;
    assert_error(&e, "validation", "invalid_input", false);
    assert_eq!(e["details"]["field"], "q");
    let e = t.err("search", json!({"q": "x", "limit": 501})).await;
    assert_error(&e, "validation", "invalid_input", false);
    let e = t.err("search", json!({"q": "x", "cursor": "bad"})).await;
    assert_error(&e, "validation", "invalid_cursor", false);
    let e = t.err("search", json!({})).await;
    assert_error(&e, "validation", "missing_field", false);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    /// Whatever a caller types, search answers hits or `invalid_input`, never an FTS error.
    #[test]
    fn any_query_text_answers_hits_or_invalid_input(q in "[a-zA-Z\"*()^:{}+. -]{0,30}|\\PC{0,20}|[\\x00-\\x1f\\x7fa-z\"*( ]{0,20}") {
        thread_local! {
            static FIXTURE: (tokio::runtime::Runtime, TestCairn) = {
                let rt = tokio::runtime::Runtime::new().unwrap();
                let t = cairn();
                rt.block_on(t.task("quote \"me\" AND NEAR(x) col:umn"));
                (rt, t)
            };
        }
        FIXTURE.with(|(rt, t)| {
            let envelope = rt.block_on(t.call("search", json!({"q": q})));
            if envelope["ok"] == false {
                proptest::prop_assert_eq!(&envelope["error"]["code"], "invalid_input", "{}", envelope);
            }
            Ok(())
        })?;
    }
}

#[tokio::test]
async fn search_with_control_bytes_answers_hits_or_invalid_input() {
    let t = cairn();
    t.task("alpha beta").await;
    let mut failed = Vec::new();
    for q in [
        "a\0b",
        "\0",
        "alpha\0",
        "\0alpha",
        "al\u{1}pha",
        "alpha\u{7f}",
        "\u{feff}alpha",
        "a\u{0}*",
        "alpha \"\0\"",
        "NEAR(alpha\0",
        "\u{fffd}",
        "\u{200b}*",
        "²*",
        "ǅ*",
        "alpha\r\nbeta",
    ] {
        let envelope = t.call("search", json!({"q": q})).await;
        if envelope["ok"] == false && envelope["error"]["code"] != "invalid_input" {
            failed.push((q, envelope["error"]["code"].clone()));
        }
    }
    assert!(failed.is_empty(), "{failed:?}");
    // A NUL is refused naming the field; another control character separates
    // words, as a space does.
    let e = t.err("search", json!({"q": "a\0b"})).await;
    assert_error(&e, "validation", "invalid_input", false);
    assert_eq!(e["details"]["field"], "q");
    assert_eq!(
        t.ok("search", json!({"q": "alpha\u{1}beta"})).await["total"],
        1
    );
}

#[tokio::test]
async fn sparse_matches_keep_the_newest_window_first_and_best_first_within_it() {
    // 650 matches among 5,200 tasks (1 in 8): sparse enough that PostgreSQL
    // finds them through the index rather than by walking the newest rows
    // (the test above covers the walk), with the same windows as there.
    let t = cairn();
    let tasks: Vec<_> = (0..5_200)
        .map(|i| {
            let title = match (i % 8, i % 3) {
                (0, 0) => format!("widget widget {i}"),
                (0, _) => format!("widget {i}"),
                _ => format!("gadget {i}"),
            };
            chosen_task(&format!("{i:032x}"), &title)
        })
        .collect();
    t.with_store(move |store| {
        store
            .bulk_load(
                &tasks,
                &[],
                &cairn::store::Timestamp::parse("2026-01-01T00:00:00.000000Z").unwrap(),
            )
            .expect("bulk load")
    })
    .await;
    let (seen, scores) = every_widget_hit(&t, 650).await;
    let seen: Vec<String> = seen
        .iter()
        .map(|id| id.as_str().unwrap().to_owned())
        .collect();
    let number = |id: &String| u64::from_str_radix(id, 16).unwrap();
    assert_eq!(seen.len(), 650);
    // The newest 500 matches are tasks 1200 to 5192.
    assert!(seen[..500].iter().all(|id| number(id) >= 1200), "{seen:?}");
    assert!(seen[500..].iter().all(|id| number(id) < 1200), "{seen:?}");
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 650);
    let descending = |w: &[f64]| w.windows(2).all(|p| p[0] >= p[1]);
    assert!(descending(&scores[..500]), "{:?}", &scores[..500]);
    assert!(descending(&scores[500..]), "{:?}", &scores[500..]);
    assert!(scores[0] > scores[499], "two scores in the window");
}

#[tokio::test]
async fn search_past_one_rank_window_lists_every_match_once_newest_window_first() {
    // 620 matches: more than one rank window (500), so the first pages are
    // the newest 500 best first, then the older 120; paging lists each once
    // (two scores: some titles hold the word twice).
    let t = cairn();
    let mut created = Vec::new();
    for i in 0..620 {
        let words = if i % 3 == 0 {
            "widget widget"
        } else {
            "widget"
        };
        created.push(t.task(&format!("{words} {i}")).await["id"].clone());
    }
    let newest: std::collections::HashSet<_> = created[120..].iter().cloned().collect();
    let (seen, scores) = every_widget_hit(&t, 620).await;
    assert_eq!(seen.len(), 620);
    // The first 500 hits are the newest 500 matches, the last 120 the oldest.
    assert!(seen[..500].iter().all(|id| newest.contains(id)));
    assert!(seen[500..].iter().all(|id| !newest.contains(id)));
    let mut unique = seen.clone();
    unique.sort_by_key(|v| v.to_string());
    unique.dedup();
    assert_eq!(unique.len(), 620);
    // Within each window, best first.
    let descending = |w: &[f64]| w.windows(2).all(|p| p[0] >= p[1]);
    assert!(descending(&scores[..500]), "{:?}", &scores[..500]);
    assert!(descending(&scores[500..]), "{:?}", &scores[500..]);
}

/// Every hit of `widget`, paged 200 at a time: ids and scores in answer
/// order; each page says `total` matches, exactly.
async fn every_widget_hit(t: &TestCairn, total: u64) -> (Vec<serde_json::Value>, Vec<f64>) {
    let mut seen = Vec::new();
    let mut scores = Vec::new();
    let mut cursor = None::<serde_json::Value>;
    loop {
        let mut args = json!({"q": "widget", "limit": 200});
        if let Some(c) = &cursor {
            args["cursor"] = c.clone();
        }
        let page = t.ok("search", args).await;
        assert_eq!(page["total"], total);
        assert_eq!(page["total_is_lower_bound"], false);
        let items = page["items"].as_array().unwrap();
        seen.extend(items.iter().map(|h| h["id"].clone()));
        scores.extend(items.iter().map(|h| h["score"].as_f64().unwrap()));
        if page["next_cursor"].is_null() {
            return (seen, scores);
        }
        cursor = Some(page["next_cursor"].clone());
    }
}
