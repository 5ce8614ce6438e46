//! Totals are counted up to 1,000 (`TOTAL_CAP`): exact below, a lower bound
//! above, on every listing (task list, board columns, note list, search), so
//! that a page costs what it returns, not what the store holds.

use cairn::store::{NewTask, NoteDraft, TOTAL_CAP};
use serde_json::{Value, json};

use crate::tool_helpers::*;

/// `tasks` open tasks and `notes` notes, every one mentioning `kestrel`.
async fn fill(t: &TestCairn, tasks: usize, notes: usize) {
    t.with_store(move |store| {
        let tasks: Vec<NewTask> = (0..tasks)
            .map(|i| NewTask {
                id: cairn::store::new_id(),
                title: format!("kestrel task {i}"),
                description: String::new(),
                tags: vec!["bulk".into()],
                priority: Default::default(),
            })
            .collect();
        let notes: Vec<NoteDraft> = (0..notes)
            .map(|i| NoteDraft {
                id: cairn::store::new_id(),
                title: format!("kestrel note {i}"),
                slug: format!("kestrel-note-{i}"),
                content: "about the kestrel".into(),
                tags: Some(vec!["bulk".into()]),
                source_url: None,
                wiki_links: Vec::new(),
            })
            .collect();
        store
            .bulk_load(
                &tasks,
                &notes,
                &cairn::store::Timestamp::parse("2026-01-01T00:00:00.000000Z").unwrap(),
            )
            .expect("bulk load")
    })
    .await;
}

fn total(page: &Value) -> (u64, bool) {
    (
        page["total"].as_u64().unwrap(),
        page["total_is_lower_bound"].as_bool().unwrap(),
    )
}

#[tokio::test]
async fn totals_below_the_cap_are_exact() {
    let t = cairn();
    fill(&t, 7, 3).await;
    let list = t.ok("task_list", json!({"limit": 2})).await;
    assert_eq!(total(&list), (7, false));
    let board = t.ok("task_board", json!({"limit": 2})).await;
    assert_eq!(total(&board["columns"][0]), (7, false), "open");
    assert_eq!(total(&board["columns"][1]), (0, false), "claimed");
    let notes = t.ok("note_list", json!({"limit": 2})).await;
    assert_eq!(total(&notes), (3, false));
    let hits = t.ok("search", json!({"q": "kestrel", "limit": 2})).await;
    assert_eq!(total(&hits), (10, false));
}

#[tokio::test]
async fn totals_stop_at_the_cap_and_say_they_are_a_lower_bound() {
    let cap = TOTAL_CAP as usize;
    let t = cairn();
    fill(&t, cap + 5, cap).await;
    let list = t.ok("task_list", json!({"limit": 10})).await;
    assert_eq!(total(&list), (TOTAL_CAP, true));
    let filtered = t.ok("task_list", json!({"tag": "bulk", "limit": 10})).await;
    assert_eq!(total(&filtered), (TOTAL_CAP, true));
    let board = t
        .ok("task_board", json!({"columns": ["open"], "limit": 10}))
        .await;
    assert_eq!(total(&board["columns"][0]), (TOTAL_CAP, true));
    // Exactly at the cap is still exact.
    let notes = t.ok("note_list", json!({"limit": 10})).await;
    assert_eq!(total(&notes), (TOTAL_CAP, false));
    let hits = t.ok("search", json!({"q": "kestrel", "limit": 10})).await;
    assert_eq!(total(&hits), (TOTAL_CAP, true));
}

#[tokio::test]
async fn search_pages_past_the_cap_still_know_whether_more_follow() {
    let cap = TOTAL_CAP as usize;
    let t = cairn();
    fill(&t, cap + 30, 0).await;
    // Walk to the page that crosses the cap, then past it to the end.
    let mut cursor: Option<String> = None;
    let mut seen = 0;
    loop {
        let mut args = json!({"q": "kestrel", "limit": 100});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = t.ok("search", args).await;
        seen += page["items"].as_array().unwrap().len();
        let (count, lower_bound) = total(&page);
        assert!(count >= seen as u64 || lower_bound, "{count} of {seen}");
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, cap + 30, "every hit reached through the cursors");
}
