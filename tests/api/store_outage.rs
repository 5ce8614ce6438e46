//! A database outage under a running gateway: within 10 s every surface
//! (REST, health, readiness, MCP over HTTP, the CLI) answers
//! `store_unavailable` without naming the database; writes tried meanwhile
//! leave nothing half-written; and within 15 s of the database coming back the
//! same gateway process serves again, with no restart.
//!
//! PostgreSQL is cut off by a TCP proxy between the gateway and the server.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::cli::Run;
use crate::http_helpers::{TestResponse, assert_error};
use crate::process_helpers::{
    Api, Gateway, TestDatabase, cairn_command, mcp_call, mcp_client, within,
};
use crate::tcp_proxy::TcpProxy;

/// How long every surface may take to notice, and to recover (the bounds).
const TO_FAIL: Duration = Duration::from_secs(10);
const TO_RECOVER: Duration = Duration::from_secs(15);

/// PostgreSQL, reached by the gateway through a proxy that can be stopped.
struct Outage {
    proxy: TcpProxy,
    /// The `--db` value that goes through the proxy.
    url: String,
    /// What no answer may contain (compared case-insensitively).
    secrets: Vec<String>,
}

impl Outage {
    async fn prepare(db_url: &str) -> Self {
        let pg = PgUrl::parse(db_url).expect("the outage test runs on a postgres:// database");
        let proxy = TcpProxy::start(pg.server_addr()).await;
        let url = pg.with_server(&format!("127.0.0.1:{}", proxy.port()));
        let secrets = vec![
            pg.user.clone(),
            pg.dbname.clone(),
            pg.host.clone(),
            format!(":{}", pg.port),
            format!(":{}", proxy.port()),
            "postgres".into(),
            "sql".into(),
        ];
        Outage {
            proxy,
            url,
            secrets,
        }
    }

    fn url(&self) -> &str {
        &self.url
    }

    fn secrets(&self) -> Vec<String> {
        self.secrets.clone()
    }

    async fn begin(&mut self) {
        self.proxy.stop().await
    }

    async fn end(&mut self) {
        self.proxy.restart().await
    }
}

/// `postgres://user[:password]@host[:port]/dbname[?params]`.
struct PgUrl {
    scheme: String,
    userinfo: String,
    user: String,
    host: String,
    port: u16,
    dbname: String,
    /// `/dbname?params`, kept as given.
    path: String,
}

impl PgUrl {
    fn parse(url: &str) -> Option<Self> {
        let (scheme, rest) = url.split_once("://")?;
        if scheme != "postgres" && scheme != "postgresql" {
            return None;
        }
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (userinfo, server) = authority.rsplit_once('@').unwrap_or(("", authority));
        let (host, port) = match server.rsplit_once(':') {
            Some((host, port)) => (host, port.parse().expect("a numeric port")),
            None => (server, 5432),
        };
        let dbname = path.trim_start_matches('/');
        let dbname = dbname.split('?').next().unwrap_or_default();
        Some(Self {
            scheme: scheme.to_owned(),
            userinfo: userinfo.to_owned(),
            user: userinfo.split(':').next().unwrap_or_default().to_owned(),
            host: host.to_owned(),
            port,
            dbname: dbname.to_owned(),
            path: path.to_owned(),
        })
    }

    fn server_addr(&self) -> SocketAddr {
        (self.host.as_str(), self.port)
            .to_socket_addrs()
            .expect("resolve the database host")
            .next()
            .expect("an address for the database host")
    }

    /// The same URL with another `host:port`.
    fn with_server(&self, server: &str) -> String {
        let at = if self.userinfo.is_empty() { "" } else { "@" };
        format!(
            "{}://{}{at}{server}{}",
            self.scheme, self.userinfo, self.path
        )
    }
}

/// The answer's text contains none of `secrets`.
fn assert_tells_nothing(surface: &str, text: &str, secrets: &[String]) {
    let lower = text.to_lowercase();
    for secret in secrets {
        assert!(
            !lower.contains(&secret.to_lowercase()),
            "{surface} names `{secret}`: {text}"
        );
    }
}

/// A REST answer that is the outage's: 503, `Retry-After`, `store_unavailable`, retryable.
fn is_unavailable(res: &TestResponse) -> bool {
    res.status == StatusCode::SERVICE_UNAVAILABLE
        && res.body["error"]["code"] == "store_unavailable"
}

fn assert_unavailable(surface: &str, res: &TestResponse, secrets: &[String]) {
    assert_error(res, StatusCode::SERVICE_UNAVAILABLE, "store_unavailable");
    assert_eq!(res.body["error"]["category"], "unavailable", "{surface}");
    assert_eq!(res.body["error"]["retryable"], true, "{surface}");
    let retry_after = res.header("retry-after").expect("a Retry-After header");
    assert!(
        retry_after.parse::<u64>().is_ok(),
        "{surface}: Retry-After {retry_after}"
    );
    assert_tells_nothing(surface, &res.body.to_string(), secrets);
}

/// Polls a REST call until it answers like the outage, within the window.
async fn unavailable_by(
    deadline: Instant,
    surface: &str,
    call: impl AsyncFn() -> TestResponse,
) -> TestResponse {
    loop {
        let res = call().await;
        if is_unavailable(&res) {
            return res;
        }
        if Instant::now() >= deadline {
            panic!(
                "{surface} still answers {} {TO_FAIL:?} into the outage",
                res.body
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn cli(db: &str, args: &[&str]) -> Run {
    Run(cairn_command()
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("the cairn binary runs"))
}

/// A body sent, and the answer if one came.
type Attempt = (Value, Option<TestResponse>);

/// Creates tasks one after another until stopped, remembering each answer.
struct Writer {
    attempts: Arc<Mutex<Vec<Attempt>>>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Writer {
    const MOST: usize = 400;

    fn start(api: Api) -> Self {
        let attempts = Arc::new(Mutex::new(Vec::new()));
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let (attempts, stop) = (attempts.clone(), stop.clone());
            async move {
                for n in 0..Self::MOST {
                    if stop.is_cancelled() {
                        break;
                    }
                    let body = json!({
                        "title": format!("written during the outage {n}"),
                        "description": format!("body {n}: every field or none"),
                        "tags": ["outage", format!("n{n}")],
                    });
                    let answer = api.try_post("/api/v1/tasks", &body).await;
                    attempts.lock().unwrap().push((body, answer));
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        });
        Self {
            attempts,
            stop,
            task,
        }
    }

    /// How many attempts were answered with `status` so far.
    fn answered(&self, status: StatusCode) -> usize {
        let attempts = self.attempts.lock().unwrap();
        let with_status = |(_, a): &&Attempt| a.as_ref().is_some_and(|a| a.status == status);
        attempts.iter().filter(with_status).count()
    }

    async fn finish(self) -> Vec<Attempt> {
        self.stop.cancel();
        self.task.await.expect("the writer did not panic");
        Arc::try_unwrap(self.attempts)
            .expect("the writer is done")
            .into_inner()
            .unwrap()
    }
}

/// Every task, by title (one page: the test writes fewer than 500).
async fn tasks_by_title(api: &Api) -> Map<String, Value> {
    let res = api.get("/api/v1/tasks?limit=500").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["next_cursor"], Value::Null);
    let items = res.body["data"]["items"].as_array().unwrap();
    items
        .iter()
        .map(|t| (t["title"].as_str().unwrap().to_owned(), t.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_rides_out_a_database_outage() {
    let db = TestDatabase::create();
    let mut outage = Outage::prepare(db.url()).await;
    let secrets = outage.secrets();
    let mut gateway = Gateway::start(outage.url()).await;
    let pid = gateway.pid();
    let api = gateway.api.clone();
    let before = api.create_task("written before the outage").await;
    let mcp = mcp_client(&gateway.api).await;

    let writer = Writer::start(api.clone());
    within(Duration::from_secs(10), async || {
        (writer.answered(StatusCode::CREATED) > 0).then_some(())
    })
    .await
    .expect("the writer creates tasks while the database is up");

    outage.begin().await;
    let deadline = Instant::now() + TO_FAIL;

    // REST: reads and writes.
    let id = before["id"].as_str().unwrap();
    let res = unavailable_by(deadline, "GET /api/v1/tasks/{id}", async || {
        api.get(&format!("/api/v1/tasks/{id}")).await
    })
    .await;
    assert_unavailable("GET /api/v1/tasks/{id}", &res, &secrets);
    let res = unavailable_by(deadline, "POST /api/v1/tasks", async || {
        api.post("/api/v1/tasks", &json!({"title": "refused"}))
            .await
    })
    .await;
    assert_unavailable("POST /api/v1/tasks", &res, &secrets);

    // Readiness fails; health still answers 200, with a report that says so.
    let res = unavailable_by(deadline, "/api/v1/health/ready", async || {
        api.get("/api/v1/health/ready").await
    })
    .await;
    assert_unavailable("/api/v1/health/ready", &res, &secrets);
    let mut health = api.get("/api/v1/health").await;
    assert_eq!(health.status, StatusCode::OK, "{}", health.body);
    assert_ne!(health.body["data"]["status"], "ok", "{}", health.body);
    // The report names the kind of store by design; nothing else may leak.
    health.body["data"]["store"].take();
    assert_tells_nothing("/api/v1/health", &health.body.to_string(), &secrets);

    // MCP over HTTP, on a session opened before the outage.
    let (envelope, is_error) = mcp_call(&mcp, "task_list", json!({})).await;
    assert_eq!(is_error, Some(true), "{envelope}");
    assert_eq!(envelope["error"]["code"], "store_unavailable", "{envelope}");
    assert_eq!(envelope["error"]["retryable"], true);
    assert_tells_nothing("MCP task_list", &envelope.to_string(), &secrets);

    // The CLI on the same database: exit 1, fix the environment.
    let run = cli(outage.url(), &["task_list"]);
    assert_eq!(run.code(), 1, "{}", run.stdout());
    assert_eq!(run.error_code(), "store_unavailable");
    assert_tells_nothing("cairn task_list", &run.stdout(), &secrets);
    assert!(
        Instant::now() <= deadline,
        "every surface must fail within {TO_FAIL:?}"
    );

    // The writer has met the outage too.
    let refused = StatusCode::SERVICE_UNAVAILABLE;
    let window = deadline.saturating_duration_since(Instant::now());
    within(window, async || {
        (writer.answered(refused) > 0).then_some(())
    })
    .await
    .expect("a write is tried during the outage");
    let attempts = writer.finish().await;

    outage.end().await;
    let recovered = within(TO_RECOVER, async || {
        let created = api
            .try_post(
                "/api/v1/tasks",
                &json!({"title": "written after the outage"}),
            )
            .await?;
        (created.status == StatusCode::CREATED).then_some(())?;
        let id = created.body["data"]["id"].as_str()?.to_owned();
        let read = api.try_get(&format!("/api/v1/tasks/{id}")).await?;
        (read.status == StatusCode::OK).then_some(())
    })
    .await;
    assert!(
        recovered.is_some(),
        "the gateway does not serve {TO_RECOVER:?} after the database is back:\n{}",
        gateway.log()
    );
    assert!(
        gateway.is_running() && gateway.pid() == pid,
        "the same process serves"
    );
    assert_eq!(api.get("/api/v1/health/ready").await.status, StatusCode::OK);
    let (envelope, _) = mcp_call(&mcp, "task_get", json!({"id": id})).await;
    assert_eq!(
        envelope["ok"], true,
        "the MCP session serves again: {envelope}"
    );
    assert_eq!(cli(outage.url(), &["task_list"]).code(), 0);

    // Writes tried around the outage: each answered 201 and exists whole, or
    // answered store_unavailable and does not exist at all.
    let stored = tasks_by_title(&api).await;
    let (mut created, mut refused) = (0, 0);
    for (sent, answer) in &attempts {
        let title = sent["title"].as_str().unwrap();
        let answer = answer
            .as_ref()
            .unwrap_or_else(|| panic!("no answer to {sent}"));
        if answer.status == StatusCode::CREATED {
            created += 1;
            let task = stored
                .get(title)
                .unwrap_or_else(|| panic!("`{title}` answered 201 but is not stored"));
            assert_eq!(task["id"], answer.body["data"]["id"]);
            assert_eq!(task["description"], sent["description"]);
            assert_eq!(task["tags"], sent["tags"]);
            assert_eq!(task["version"], 1);
        } else {
            refused += 1;
            assert_unavailable("a write during the outage", answer, &secrets);
            // Only a write whose commit was cut off may have been applied, and
            // it says so; then it is stored whole or not at all.
            match stored.get(title) {
                None => {}
                Some(task) => {
                    assert_eq!(
                        answer.body["error"]["details"]["write_outcome"], "unknown",
                        "`{title}` was refused but stored: {}",
                        answer.body
                    );
                    assert_eq!(task["description"], sent["description"]);
                    assert_eq!(task["tags"], sent["tags"]);
                    assert_eq!(task["version"], 1);
                }
            }
        }
    }
    assert!(
        created > 0 && refused > 0,
        "{created} writes stored, {refused} refused"
    );
    mcp.cancel().await.ok();
}

#[test]
fn a_postgres_url_is_rewritten_to_go_through_the_proxy() {
    let pg = PgUrl::parse("postgres://root@127.0.0.1:5432/cairn_test_42?sslmode=disable").unwrap();
    assert_eq!(pg.user, "root");
    assert_eq!(pg.dbname, "cairn_test_42");
    assert_eq!(pg.server_addr(), "127.0.0.1:5432".parse().unwrap());
    assert_eq!(
        pg.with_server("127.0.0.1:40001"),
        "postgres://root@127.0.0.1:40001/cairn_test_42?sslmode=disable"
    );
    let pg = PgUrl::parse("postgresql://ann:secret@localhost/db").unwrap();
    assert_eq!((pg.user.as_str(), pg.port), ("ann", 5432));
    assert_eq!(
        pg.with_server("127.0.0.1:1"),
        "postgresql://ann:secret@127.0.0.1:1/db"
    );
    assert!(PgUrl::parse("/tmp/cairn.db").is_none());
}
