//! The store's idempotency keys, on every backend: a claim is atomic (one
//! winner among concurrent claims), only its owner settles it, an answer is
//! kept until it expires, and a claim left in progress is taken over once stale.

use std::time::Duration;

use cairn::store::Store;
use cairn::store::idempotency::{HeldKey, KeyClaim, KeyScope, StoredAnswer};
use chrono::Utc;

use crate::tool_helpers::*;

fn scope(client: &str, route: &str, key: &str) -> KeyScope {
    KeyScope {
        client: client.into(),
        route: route.into(),
        key: key.into(),
    }
}

fn claim_of(scope: &KeyScope, fingerprint: &str, at: chrono::DateTime<Utc>) -> KeyClaim {
    KeyClaim::new(
        scope.clone(),
        fingerprint.into(),
        at,
        Duration::from_secs(30),
    )
}

fn answer(status: u16) -> StoredAnswer {
    StoredAnswer {
        status,
        headers: vec![
            ("location".into(), "/api/v1/tasks/abc".into()),
            ("content-type".into(), "application/json".into()),
        ],
        body: r#"{"data":{"title":"é"},"meta":{}}"#.into(),
    }
}

async fn on_store<T: Send + 'static>(
    t: &TestCairn,
    f: impl FnOnce(&dyn Store) -> T + Send + 'static,
) -> T {
    t.with_store(f).await
}

#[tokio::test]
async fn tool_idempotency_a_free_key_is_claimed_then_held_in_progress() {
    let t = cairn();
    let s = scope("ada", "POST /api/v1/tasks", "k");
    let first = claim_of(&s, "f", Utc::now());
    let second = claim_of(&s, "f", Utc::now());
    let (a, b) = on_store(&t, move |store| {
        (
            store.idempotency_claim(&first).unwrap(),
            store.idempotency_claim(&second).unwrap(),
        )
    })
    .await;
    assert_eq!(a, None, "the first claim takes the key");
    assert_eq!(
        b,
        Some(HeldKey {
            fingerprint: "f".into(),
            answer: None
        })
    );
}

#[tokio::test]
async fn tool_idempotency_the_owners_answer_is_kept_and_another_owners_is_not() {
    let t = cairn();
    let s = scope("ada", "POST /api/v1/tasks", "k");
    let claim = claim_of(&s, "f", Utc::now());
    let held = on_store(&t, move |store| {
        assert_eq!(store.idempotency_claim(&claim).unwrap(), None);
        // Someone who does not own the claim cannot settle it.
        store
            .idempotency_finish(&claim.scope, "not-the-owner", &answer(500))
            .unwrap();
        store
            .idempotency_release(&claim.scope, "not-the-owner")
            .unwrap();
        store
            .idempotency_finish(&claim.scope, &claim.owner, &answer(201))
            .unwrap();
        // Once final, the answer stays: a release no longer drops it.
        store
            .idempotency_release(&claim.scope, &claim.owner)
            .unwrap();
        store
            .idempotency_claim(&claim_of(&claim.scope, "other", Utc::now()))
            .unwrap()
    })
    .await;
    assert_eq!(
        held,
        Some(HeldKey {
            fingerprint: "f".into(),
            answer: Some(answer(201)),
        })
    );
}

#[tokio::test]
async fn tool_idempotency_a_released_key_is_free_again() {
    let t = cairn();
    let s = scope("ada", "mcp task_create", "k");
    let claim = claim_of(&s, "f", Utc::now());
    let again = on_store(&t, move |store| {
        assert_eq!(store.idempotency_claim(&claim).unwrap(), None);
        store
            .idempotency_release(&claim.scope, &claim.owner)
            .unwrap();
        store
            .idempotency_claim(&claim_of(&claim.scope, "f", Utc::now()))
            .unwrap()
    })
    .await;
    assert_eq!(again, None);
}

#[tokio::test]
async fn tool_idempotency_keys_are_scoped_by_client_and_route() {
    let t = cairn();
    let claims = [
        scope("ada", "POST /api/v1/tasks", "k"),
        scope("bob", "POST /api/v1/tasks", "k"),
        scope("ada", "POST /api/v1/notes", "k"),
        scope("ada", "POST /api/v1/tasks", "K"),
    ];
    let held = on_store(&t, move |store| {
        claims
            .iter()
            .map(|s| {
                store
                    .idempotency_claim(&claim_of(s, "f", Utc::now()))
                    .unwrap()
            })
            .collect::<Vec<_>>()
    })
    .await;
    assert_eq!(held, vec![None, None, None, None]);
}

#[tokio::test]
async fn tool_idempotency_a_stale_claim_is_taken_over_and_its_owner_loses_it() {
    let t = cairn();
    let s = scope("ada", "POST /api/v1/tasks", "k");
    let start = Utc::now();
    let dead = claim_of(&s, "f", start);
    let early = claim_of(&s, "f", start + chrono::Duration::seconds(29));
    let late = claim_of(&s, "f", start + chrono::Duration::seconds(31));
    let after = claim_of(&s, "f", start + chrono::Duration::seconds(32));
    let held = on_store(&t, move |store| {
        assert_eq!(store.idempotency_claim(&dead).unwrap(), None);
        assert!(store.idempotency_claim(&early).unwrap().is_some());
        assert_eq!(store.idempotency_claim(&late).unwrap(), None, "taken over");
        // The dead request's late answer is not the key's any more.
        store
            .idempotency_finish(&dead.scope, &dead.owner, &answer(500))
            .unwrap();
        store
            .idempotency_finish(&late.scope, &late.owner, &answer(201))
            .unwrap();
        store.idempotency_claim(&after).unwrap()
    })
    .await;
    assert_eq!(held.unwrap().answer, Some(answer(201)));
}

#[tokio::test]
async fn tool_idempotency_an_answer_expires_after_24_hours() {
    let t = cairn();
    let s = scope("ada", "POST /api/v1/tasks", "k");
    let start = Utc::now();
    let first = claim_of(&s, "f", start);
    let day_later = claim_of(&s, "other", start + chrono::Duration::hours(24));
    let after = claim_of(&s, "f", start + chrono::Duration::hours(25));
    let held = on_store(&t, move |store| {
        assert_eq!(store.idempotency_claim(&first).unwrap(), None);
        store
            .idempotency_finish(&first.scope, &first.owner, &answer(201))
            .unwrap();
        assert_eq!(
            store.idempotency_claim(&day_later).unwrap(),
            None,
            "expired: free for another request"
        );
        store
            .idempotency_finish(&day_later.scope, &day_later.owner, &answer(200))
            .unwrap();
        store.idempotency_claim(&after).unwrap()
    })
    .await;
    let held = held.unwrap();
    assert_eq!(held.fingerprint, "other");
    assert_eq!(held.answer, Some(answer(200)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tool_idempotency_of_20_concurrent_claims_exactly_one_wins() {
    let t = cairn();
    let s = scope("ada", "POST /api/v1/tasks", "race");
    let mut racers = Vec::new();
    for _ in 0..20 {
        let store = t.cairn.store().clone();
        let claim = claim_of(&s, "f", Utc::now());
        racers.push(tokio::task::spawn_blocking(move || {
            store.idempotency_claim(&claim).unwrap()
        }));
    }
    let mut winners = 0;
    for racer in racers {
        if racer.await.unwrap().is_none() {
            winners += 1;
        }
    }
    assert_eq!(winners, 1);
}
