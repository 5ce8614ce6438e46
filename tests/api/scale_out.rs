//! The scale-out topology, natively: two `cairn serve` processes on one
//! database with Debian's nginx in front, running the deployment's own
//! forwarding rules. Whatever gateway a request reaches, directly or through
//! nginx, the database decides: one truth, one winner per race.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::sync::Barrier;

use crate::http_helpers::{TestResponse, assert_error};
use crate::process_helpers::{Api, Gateway, Nginx, TestDatabase, mcp_call, mcp_client};

/// Two gateways on `db` and nginx in front of both.
struct Topology {
    a: Gateway,
    b: Gateway,
    nginx: Nginx,
}

impl Topology {
    async fn start(db: &str) -> Self {
        let a = Gateway::start(db).await;
        let b = Gateway::start(db).await;
        let nginx = Nginx::start(&[&a, &b]).await;
        Self { a, b, nginx }
    }

    /// Gateway A or B for the `i`-th of several callers: alternating.
    fn gateway(&self, i: usize) -> &Api {
        if i.is_multiple_of(2) {
            &self.a.api
        } else {
            &self.b.api
        }
    }

    /// The task as each way in reads it (each gateway directly, and nginx),
    /// with the base URL it was read through.
    async fn read_everywhere(&self, id: &str) -> Vec<(String, Value)> {
        let mut views = Vec::new();
        for api in [&self.a.api, &self.b.api, &self.nginx.api] {
            views.push((api.base.clone(), api.task(id).await));
        }
        views
    }
}

/// The database every test of this file runs on (see `process_helpers`).
async fn topology() -> (Topology, TestDatabase) {
    let db = TestDatabase::create();
    (Topology::start(db.url()).await, db)
}

const CALLERS: usize = 16;

/// Sends `CALLERS` requests at once (released together by a barrier), the
/// `i`-th through `t.gateway(i)`; answers in caller order.
async fn all_at_once(
    t: &Topology,
    method: Method,
    path: &str,
    body: impl Fn(usize) -> Value,
) -> Vec<TestResponse> {
    let barrier = Arc::new(Barrier::new(CALLERS));
    let calls = (0..CALLERS).map(|i| {
        let api = t.gateway(i).clone();
        let barrier = barrier.clone();
        let (method, path, body) = (method.clone(), path.to_owned(), body(i));
        tokio::spawn(async move {
            barrier.wait().await;
            api.send_json(method, &path, &body).await
        })
    });
    let mut answers = Vec::new();
    for call in calls.collect::<Vec<_>>() {
        answers.push(call.await.expect("the caller did not panic"));
    }
    answers
}

fn id_of(task: &Value) -> String {
    task["id"].as_str().expect("an id").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_through_one_gateway_is_claimed_and_completed_through_the_other() {
    let (t, _db) = topology().await;
    let created = t.a.api.create_task("Ship the scale-out").await;
    let id = id_of(&created);
    let base = format!("/api/v1/tasks/{id}");

    let read = t.b.api.task(&id).await;
    assert_eq!(read["title"], "Ship the scale-out");
    assert_eq!(read["version"], 1);

    // Each step on B, seen the same way through A, B and nginx.
    for (action, status, holder) in [
        ("claim", "claimed", json!("ann")),
        ("complete", "done", Value::Null),
    ] {
        let res =
            t.b.api
                .post(&format!("{base}/{action}"), &json!({"agent": "ann"}))
                .await;
        assert_eq!(res.status, StatusCode::OK, "{action}: {}", res.body);
        for (via, task) in t.read_everywhere(&id).await {
            assert_eq!(task["status"], status, "after {action}, through {via}");
            assert_eq!(
                task["claim"]["holder"], holder,
                "after {action}, through {via}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_through_nginx_is_read_through_each_gateway() {
    let (t, _db) = topology().await;
    let id = id_of(&t.nginx.api.create_task("Through the balancer").await);
    for api in [&t.a.api, &t.b.api] {
        assert_eq!(api.task(&id).await["title"], "Through the balancer");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_spreads_requests_over_both_gateways() {
    let (t, _db) = topology().await;
    let id = id_of(&t.nginx.api.create_task("Read me often").await);
    for _ in 0..6 {
        t.nginx.api.task(&id).await;
    }
    let log = t.nginx.access_log();
    let served_by = |gateway: &Gateway| {
        log.lines()
            .filter(|line| line.starts_with("GET /api/v1/tasks/"))
            .filter(|line| line.ends_with(&format!("127.0.0.1:{}", gateway.port())))
            .count()
    };
    assert!(
        served_by(&t.a) > 0 && served_by(&t.b) > 0,
        "nginx sent reads to both gateways:\n{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_version_is_refused_by_the_other_gateway() {
    let (t, _db) = topology().await;
    let id = id_of(&t.nginx.api.create_task("Versioned").await);
    let path = format!("/api/v1/tasks/{id}");

    let res =
        t.a.api
            .patch(
                &path,
                &json!({"expected_version": 1, "title": "Edited on A"}),
            )
            .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["version"], 2);

    let res =
        t.b.api
            .patch(&path, &json!({"expected_version": 1, "title": "Lost on B"}))
            .await;
    assert_error(&res, StatusCode::CONFLICT, "version_conflict");
    assert_eq!(res.body["error"]["details"]["current_version"], 2);
    for (via, task) in t.read_everywhere(&id).await {
        assert_eq!(task["title"], "Edited on A", "through {via}");
        assert_eq!(task["version"], 2, "through {via}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_claimants_over_both_gateways_leave_one_holder_per_task() {
    let (t, _db) = topology().await;
    for round in 0..20 {
        let id = id_of(&t.nginx.api.create_task(&format!("Race {round}")).await);
        let agent = |i: usize| format!("agent-{round}-{i}");
        let answers = all_at_once(
            &t,
            Method::POST,
            &format!("/api/v1/tasks/{id}/claim"),
            |i| json!({"agent": agent(i), "ttl_minutes": 5}),
        )
        .await;

        let winners: Vec<usize> = (0..CALLERS)
            .filter(|&i| answers[i].status == StatusCode::OK)
            .collect();
        assert_eq!(
            winners.len(),
            1,
            "round {round}: one claim succeeds: {answers:#?}"
        );
        let winner = agent(winners[0]);
        assert_eq!(
            answers[winners[0]].body["data"]["claim"]["holder"],
            winner.as_str()
        );
        for (i, loser) in answers.iter().enumerate().filter(|&(i, _)| i != winners[0]) {
            assert_error(loser, StatusCode::CONFLICT, "claim_held");
            assert_eq!(
                loser.body["error"]["details"]["holder"],
                winner.as_str(),
                "round {round}: claimant {i} is told who holds it"
            );
        }
        for (via, task) in t.read_everywhere(&id).await {
            assert_eq!(task["claim"]["holder"], winner.as_str(), "through {via}");
            assert_eq!(task["version"], 1, "claims never bump the version");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_editors_over_both_gateways_one_write_wins() {
    let (t, _db) = topology().await;
    let id = id_of(&t.nginx.api.create_task("Contended").await);
    let answers = all_at_once(
        &t,
        Method::PATCH,
        &format!("/api/v1/tasks/{id}"),
        |i| json!({"expected_version": 1, "title": format!("Editor {i}")}),
    )
    .await;

    let winners: Vec<usize> = (0..CALLERS)
        .filter(|&i| answers[i].status == StatusCode::OK)
        .collect();
    assert_eq!(winners.len(), 1, "one edit succeeds: {answers:#?}");
    for loser in answers.iter().filter(|a| a.status != StatusCode::OK) {
        assert_error(loser, StatusCode::CONFLICT, "version_conflict");
        assert_eq!(loser.body["error"]["details"]["current_version"], 2);
    }
    for (via, task) in t.read_everywhere(&id).await {
        let title = format!("Editor {}", winners[0]);
        assert_eq!(task["title"], title, "through {via}");
        assert_eq!(task["version"], 2, "through {via}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_session_through_nginx_serves_what_either_gateway_wrote() {
    let (t, _db) = topology().await;
    let from_a = id_of(&t.a.api.create_task("Written on A").await);
    let from_b = id_of(&t.b.api.create_task("Written on B").await);
    let mcp = mcp_client(&t.nginx.api).await;
    // Several calls on one session: each must reach the gateway holding it.
    for _ in 0..3 {
        for (id, title) in [(&from_a, "Written on A"), (&from_b, "Written on B")] {
            let (envelope, _) = mcp_call(&mcp, "task_get", json!({"id": id})).await;
            assert_eq!(envelope["data"]["title"], title, "{envelope}");
        }
    }
    let (envelope, _) = mcp_call(&mcp, "task_create", json!({"title": "Written over MCP"})).await;
    let id = id_of(&envelope["data"]);
    for api in [&t.a.api, &t.b.api] {
        assert_eq!(api.task(&id).await["title"], "Written over MCP");
    }
    mcp.cancel().await.expect("hang up");
}

#[tokio::test]
async fn an_event_stream_on_one_gateway_sees_a_write_made_through_the_other() {
    let (t, _db) = topology().await;
    let mut on_b = crate::sse::EventStream::open(&t.b.api.base, "", None).await;
    let made =
        t.a.api
            .post("/api/v1/tasks", &json!({"title": "Made on A"}))
            .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let event = on_b
        .next(std::time::Duration::from_secs(5))
        .await
        .expect("gateway B streams what gateway A wrote");
    assert_eq!(event.event, "task.created");
    assert_eq!(event.data["entity"]["id"], made.body["data"]["id"]);
    assert_eq!(event.data["entity"]["title"], "Made on A");
}
