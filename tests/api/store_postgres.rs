//! What only the PostgreSQL backend has to show: migrations that N gateways
//! can run at once, a database newer than the binary refused, and search that
//! finds the same documents as SQLite's on one fixture.

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};

use cairn::store::{
    NewTask, NoteDraft, Priority, SearchTerm, Store, StoreOptions, TaskPatch, open,
};

use crate::pg_helpers::TestSchema;

fn open_store(db: &str) -> Arc<dyn Store> {
    open(db, &StoreOptions::default()).expect("store opens")
}

#[test]
fn eight_gateways_starting_at_once_migrate_the_database_once() {
    let schema = TestSchema::create();
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let url = schema.url().to_owned();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let store = open(&url, &StoreOptions::default())
                    .map_err(|e| cairn::envelope::ToolError::from(e).message)?;
                store
                    .schema_version()
                    .map_err(|e| cairn::envelope::ToolError::from(e).message)
            })
        })
        .collect();
    for handle in handles {
        let version = handle.join().unwrap().expect("every gateway opens");
        assert_eq!(version, cairn::store::postgres::SCHEMA_VERSION);
    }
    let mut admin = postgres::Client::connect(schema.url(), postgres::NoTls).unwrap();
    let applied: i64 = admin
        .query_one("SELECT count(*) FROM cairn_schema_migrations", &[])
        .unwrap()
        .get(0);
    assert_eq!(
        applied,
        cairn::store::postgres::SCHEMA_VERSION,
        "each migration is recorded once"
    );
}

#[test]
fn a_database_migrated_by_a_newer_cairn_is_refused_with_a_clear_envelope() {
    let schema = TestSchema::create();
    drop(open_store(schema.url()));
    let mut admin = postgres::Client::connect(schema.url(), postgres::NoTls).unwrap();
    admin
        .execute(
            "INSERT INTO cairn_schema_migrations (version) VALUES (99)",
            &[],
        )
        .unwrap();
    let error = open(schema.url(), &StoreOptions::default())
        .err()
        .map(cairn::envelope::ToolError::from)
        .expect("a newer schema is refused");
    assert_eq!(error.code.as_str(), "store_unavailable");
    assert!(error.message.contains("newer"), "{}", error.message);
    assert_eq!(error.details["schema_version"], 99);
    assert!(!error.message.contains("127.0.0.1") && !error.message.contains("cairn_t_"));
}

#[test]
fn an_unreachable_server_at_start_is_store_unavailable_without_internals() {
    let url = "postgres://cairn_secret_user@127.0.0.1:1/secret_db?connect_timeout=1";
    let error = open(url, &StoreOptions::default())
        .err()
        .map(cairn::envelope::ToolError::from)
        .expect("nothing listens on port 1");
    assert_eq!(error.code.as_str(), "store_unavailable");
    let body = serde_json::to_string(&error.details).unwrap() + &error.message;
    for secret in [
        "cairn_secret_user",
        "secret_db",
        "127.0.0.1",
        ":1",
        "postgres",
    ] {
        assert!(!body.contains(secret), "`{secret}` leaked: {body}");
    }
}

#[test]
fn a_malformed_url_is_invalid_input_that_does_not_echo_it() {
    let error = open(
        "postgres://us er:pass@@host:port/x",
        &StoreOptions::default(),
    )
    .err()
    .map(cairn::envelope::ToolError::from)
    .expect("refused");
    assert_eq!(error.code.as_str(), "invalid_input");
    assert!(!error.message.contains("pass"), "{}", error.message);
}

/// Words both stemmers (porter on SQLite, Snowball english on PostgreSQL)
/// leave alone or reduce the same way, none of them a stop word.
const WORDS: [&str; 24] = [
    "alpha", "beacon", "cobalt", "delta", "ember", "falcon", "glacier", "harbor", "island",
    "jasper", "kettle", "lantern", "meadow", "nickel", "orchard", "pepper", "quartz", "river",
    "saddle", "timber", "umber", "velvet", "walnut", "zephyr",
];

fn text(seed: &mut u64, words: usize) -> String {
    (0..words)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            WORDS[(*seed >> 33) as usize % WORDS.len()]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// 1,000 tasks and 1,000 notes, the same on every call.
fn fixture() -> (Vec<NewTask>, Vec<NoteDraft>) {
    let mut seed = 7;
    let tasks = (0..1_000)
        .map(|i| NewTask {
            id: format!("{:032x}", i + 1),
            title: text(&mut seed, 3),
            description: text(&mut seed, 12),
            tags: Vec::new(),
            priority: Priority::Normal,
        })
        .collect();
    let notes = (0..1_000)
        .map(|i| NoteDraft {
            id: format!("{:032x}", 0x1000_0000 + i),
            title: format!("{} {i}", text(&mut seed, 3)),
            slug: format!("note-{i}"),
            content: text(&mut seed, 30),
            tags: None,
            source_url: None,
            wiki_links: Vec::new(),
        })
        .collect();
    (tasks, notes)
}

fn hit_set(store: &dyn Store, query: &[(&str, bool)]) -> BTreeSet<String> {
    let terms: Vec<SearchTerm> = query
        .iter()
        .map(|(word, prefix)| SearchTerm {
            word: (*word).to_owned(),
            prefix: *prefix,
        })
        .collect();
    let (hits, total) = store.search(&terms, 5_000, 0).expect("search answers");
    assert_eq!(
        (hits.len() as u64, total.lower_bound),
        (total.count, false),
        "every hit on one page for {query:?}"
    );
    hits.into_iter().map(|h| h.id).collect()
}

#[test]
fn search_finds_the_same_documents_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = open_store(&dir.path().join("parity.db").to_string_lossy());
    let schema = TestSchema::create();
    let postgres = open_store(schema.url());
    let (tasks, notes) = fixture();
    let now = &cairn::store::Timestamp::parse("2026-12-01T00:00:00.000000Z").unwrap();
    sqlite.bulk_load(&tasks, &notes, now).unwrap();
    postgres.bulk_load(&tasks, &notes, now).unwrap();
    let queries: &[&[(&str, bool)]] = &[
        &[("lantern", false)],
        &[("Harbor", false)],
        &[("quartz", false), ("velvet", false)],
        &[("alpha", false), ("beacon", false), ("cobalt", false)],
        &[("lan", true)],
        &[("tim", true), ("river", false)],
        &[("zephyr", false), ("walnut", true)],
        &[("nothing", false)],
    ];
    for query in queries {
        let on_sqlite = hit_set(sqlite.as_ref(), query);
        let on_postgres = hit_set(postgres.as_ref(), query);
        assert_eq!(on_sqlite, on_postgres, "hit sets differ for {query:?}");
        if query[0].0 != "nothing" {
            assert!(!on_sqlite.is_empty(), "{query:?} finds something");
        }
    }
}

#[test]
fn statements_prepared_before_another_gateways_migration_are_prepared_again() {
    let schema = TestSchema::create();
    let store = open_store(schema.url());
    let now = &cairn::store::Timestamp::parse("2026-12-05T00:00:00.000000Z").unwrap();
    let id = store.task_create(&task("before"), now).unwrap().id;
    // Every statement below is now prepared on the pool's connections.
    for round in 0..3 {
        store
            .task_claim(
                &id,
                "agent-a",
                &cairn::store::Timestamp::parse("2099-01-01T00:00:00.000000Z").unwrap(),
                None,
                now,
            )
            .unwrap();
        store.task_release(&id, "agent-a", None, now).unwrap();
        assert_eq!(store.task_get(&id, now).unwrap().unwrap().id, id, "{round}");
    }
    // Another gateway's migration changes the type of a column every one of
    // them returns: PostgreSQL refuses to run their cached plans.
    crate::pg_helpers::execute(
        schema.url(),
        "ALTER TABLE tasks ALTER COLUMN claim_holder TYPE varchar(200)",
    );
    let claimed = store
        .task_claim(
            &id,
            "agent-b",
            &cairn::store::Timestamp::parse("2099-01-01T00:00:00.000000Z").unwrap(),
            None,
            now,
        )
        .expect("a write prepares its statements again");
    assert_eq!(claimed.claim.map(|c| c.holder).as_deref(), Some("agent-b"));
    let read = store
        .task_get(&id, now)
        .expect("a read prepares its statements again");
    assert_eq!(
        read.unwrap().claim.map(|c| c.holder).as_deref(),
        Some("agent-b")
    );
    let patch = TaskPatch {
        title: Some("after".into()),
        ..TaskPatch::default()
    };
    assert_eq!(
        store.task_update(&id, &patch, None, now).unwrap().title,
        "after"
    );
}

fn task(title: &str) -> NewTask {
    NewTask {
        id: cairn::store::new_id(),
        title: title.to_owned(),
        description: String::new(),
        tags: Vec::new(),
        priority: Priority::Normal,
    }
}

/// Waits up to five seconds for the watched head to reach `seq`.
fn head_reaches(head: &tokio::sync::watch::Receiver<i64>, seq: i64) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::time::Instant::now() < deadline {
        if *head.borrow() >= seq {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

#[test]
fn a_write_through_one_store_wakes_every_store_on_that_schema_and_no_other() {
    let shared = TestSchema::create();
    let elsewhere = TestSchema::create();
    let a = open_store(shared.url());
    let b = open_store(shared.url());
    let other = open_store(elsewhere.url());
    let (b_head, other_head) = (b.watch_changes(), other.watch_changes());
    let now = &cairn::store::Timestamp::parse("2026-12-01T00:00:00.000000Z").unwrap();
    a.task_create(&task("through A"), now).unwrap();
    assert!(head_reaches(&b_head, 1), "B hears of A's write");
    other.task_create(&task("elsewhere"), now).unwrap();
    a.task_create(&task("through A again"), now).unwrap();
    assert!(head_reaches(&b_head, 2));
    assert_eq!(
        *other_head.borrow(),
        1,
        "another schema's writes do not move this head"
    );
}

#[test]
fn statements_gone_stale_under_another_gateways_migration_are_prepared_again() {
    let schema = TestSchema::create();
    // One connection, so the calls after the change meet the statements
    // prepared before it.
    let options = StoreOptions {
        readers: 1,
        ..StoreOptions::default()
    };
    let store = open(schema.url(), &options).expect("store opens");
    let now = &cairn::store::Timestamp::parse("2026-01-01T00:00:00.000000Z").unwrap();
    store.task_create(&task("before"), now).unwrap();
    let open_column = [cairn::store::BoardColumnQuery {
        status: cairn::store::TaskStatus::Open,
        after: None,
    }];
    assert_eq!(
        store.task_board(&open_column, 10, now).unwrap()[0]
            .items
            .len(),
        1
    );
    // What a newer cairn's migration may do: a column its statements
    // return changes type under them.
    let mut admin = postgres::Client::connect(schema.url(), postgres::NoTls).unwrap();
    admin
        .batch_execute("ALTER TABLE tasks ALTER COLUMN priority TYPE varchar(20)")
        .unwrap();
    let board = store
        .task_board(&open_column, 10, now)
        .expect("the board reads");
    assert_eq!(board[0].items[0].title, "before");
    let made = store
        .task_create(&task("after"), now)
        .expect("a create writes");
    assert_eq!(made.title, "after");
    assert_eq!(
        store.task_board(&open_column, 10, now).unwrap()[0]
            .items
            .len(),
        2
    );
}
