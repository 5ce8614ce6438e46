//! Crash test: a load of creates, updates, claims and note writes runs
//! against `cairn serve`; the process is SIGKILLed at a random moment and
//! restarted, `$CAIRN_CRASH_KILLS` times (default 10; the full run is 50).
//! After every kill: every acknowledged write (a 2xx the client received) is
//! there with at least its acknowledged version (a later write may have
//! committed without its answer arriving), nothing is half-written (title and
//! body of each write carry the same tag), claims acknowledged are held; on
//! SQLite, `PRAGMA integrity_check` is `ok` and the search index agrees with
//! the rows. The same on PostgreSQL, killing the gateway.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::process_helpers::{Gateway, TestDatabase};

/// What the clients were told was written.
#[derive(Default, Clone)]
struct Acked {
    /// task id -> (version, tag of its title and description, claim holder)
    tasks: HashMap<String, (i64, String, Option<String>)>,
    /// note id -> (version, tag of its content)
    notes: HashMap<String, (i64, String)>,
}

fn kills() -> usize {
    std::env::var("CAIRN_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10)
}

/// A small deterministic generator. The seed is printed; `CAIRN_CRASH_SEED`
/// replays its choices (kill delays, operations), not the timing of the kills.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// One worker's writes until the server goes away. Each worker owns its
/// entities, so its acknowledgements are in write order.
async fn worker(base: String, worker: usize, acked: Arc<Mutex<Acked>>, seed: u64) {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let mut rng = Rng(seed);
    let mut mine: Vec<(String, i64)> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for n in 0.. {
        let tag = format!("w{worker}-{seed}-{n}");
        let sent = match rng.below(5) {
            0 | 1 if !mine.is_empty() => {
                let i = rng.below(mine.len() as u64) as usize;
                let (id, version) = mine[i].clone();
                let res = client
                    .patch(format!("{base}/api/v1/tasks/{id}"))
                    .json(&json!({"title": format!("t {tag}"), "description": format!("d {tag}"), "expected_version": version}))
                    .send()
                    .await;
                match res {
                    Ok(r) if r.status() == 200 => {
                        let data = r.json::<Value>().await.map(|b| b["data"].clone());
                        if let Ok(data) = data {
                            let v = data["version"].as_i64().unwrap();
                            mine[i].1 = v;
                            let mut acked = acked.lock().unwrap();
                            let entry = acked.tasks.get_mut(&id).unwrap();
                            entry.0 = v;
                            entry.1 = tag;
                        }
                        true
                    }
                    Ok(_) => true,
                    Err(_) => false,
                }
            }
            2 if !mine.is_empty() => {
                let i = rng.below(mine.len() as u64) as usize;
                let id = mine[i].0.clone();
                let agent = format!("agent-{worker}");
                let res = client
                    .post(format!("{base}/api/v1/tasks/{id}/claim"))
                    .json(&json!({"agent": agent}))
                    .send()
                    .await;
                match res {
                    Ok(r) if r.status() == 200 => {
                        if r.bytes().await.is_ok() {
                            acked.lock().unwrap().tasks.get_mut(&id).unwrap().2 = Some(agent);
                        }
                        true
                    }
                    Ok(_) => true,
                    Err(_) => false,
                }
            }
            3 => {
                let existing = (!notes.is_empty() && rng.below(2) == 0)
                    .then(|| notes[rng.below(notes.len() as u64) as usize].clone());
                let body = json!({"title": format!("note {worker} {}", existing.as_deref().unwrap_or(&tag)), "content": format!("c {tag}")});
                let request = match &existing {
                    Some(id) => client.put(format!("{base}/api/v1/notes/{id}")),
                    None => client.post(format!("{base}/api/v1/notes")),
                };
                match request.json(&body).send().await {
                    Ok(r) if r.status().is_success() => {
                        if let Ok(b) = r.json::<Value>().await {
                            let id = b["data"]["id"].as_str().unwrap().to_owned();
                            let v = b["data"]["version"].as_i64().unwrap();
                            if existing.is_none() {
                                notes.push(id.clone());
                            }
                            acked.lock().unwrap().notes.insert(id, (v, tag));
                        }
                        true
                    }
                    Ok(_) => true,
                    Err(_) => false,
                }
            }
            _ => {
                let res = client
                    .post(format!("{base}/api/v1/tasks"))
                    .json(&json!({"title": format!("t {tag}"), "description": format!("d {tag}")}))
                    .send()
                    .await;
                match res {
                    Ok(r) if r.status() == 201 => {
                        if let Ok(b) = r.json::<Value>().await {
                            let id = b["data"]["id"].as_str().unwrap().to_owned();
                            mine.push((id.clone(), 1));
                            acked.lock().unwrap().tasks.insert(id, (1, tag, None));
                        }
                        true
                    }
                    Ok(_) => true,
                    Err(_) => false,
                }
            }
        };
        if !sent {
            return; // the server is gone
        }
    }
}

fn sigkill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// The file's own checks, with no server running.
fn check_sqlite_file(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let rows = count("SELECT (SELECT count(*) FROM tasks) + (SELECT count(*) FROM notes)");
    assert_eq!(
        count("SELECT count(*) FROM search_index"),
        rows,
        "index entries vs rows"
    );
    let stale_tasks = count(
        "SELECT count(*) FROM tasks t LEFT JOIN search_index s ON s.rowid = t.seq * 2
         WHERE s.rowid IS NULL OR s.title IS NOT t.title OR s.body IS NOT t.description
            OR s.entity_id IS NOT t.id",
    );
    let stale_notes = count(
        "SELECT count(*) FROM notes n LEFT JOIN search_index s ON s.rowid = n.seq * 2 + 1
         WHERE s.rowid IS NULL OR s.title IS NOT n.title OR s.body IS NOT n.content
            OR s.entity_id IS NOT n.id",
    );
    assert_eq!(
        (stale_tasks, stale_notes),
        (0, 0),
        "index entries that disagree with rows"
    );
}

/// Every acknowledged write is there, whole, as the restarted server reads it.
async fn check_acked(gateway: &Gateway, acked: &Acked) {
    for (id, (version, tag, holder)) in &acked.tasks {
        let task = gateway.api.task(id).await;
        let got = task["version"].as_i64().unwrap();
        assert!(
            got >= *version,
            "task {id}: version {got}, acknowledged {version}"
        );
        let title = task["title"].as_str().unwrap();
        let description = task["description"].as_str().unwrap();
        let written = title.strip_prefix("t ").expect("a title this test wrote");
        assert_eq!(
            description,
            format!("d {written}"),
            "task {id} is half-written"
        );
        if got == *version {
            assert_eq!(written, tag, "task {id} at its acknowledged version");
        }
        if let Some(agent) = holder {
            assert_eq!(
                task["claim"]["holder"],
                agent.as_str(),
                "task {id}: claim {}",
                task["claim"]
            );
        }
    }
    for (id, (version, tag)) in &acked.notes {
        let res = gateway.api.get(&format!("/api/v1/notes/{id}")).await;
        assert_eq!(res.status, 200, "note {id}: {}", res.body);
        let note = &res.body["data"];
        let got = note["version"].as_i64().unwrap();
        assert!(
            got >= *version,
            "note {id}: version {got}, acknowledged {version}"
        );
        if got == *version {
            assert_eq!(note["content"], format!("c {tag}"), "note {id}");
        }
    }
}

async fn crash_cycles(db: &str, sqlite: Option<&Path>) {
    let seed = std::env::var("CAIRN_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("crash test seed {seed}, {} kills", kills());
    let mut rng = Rng(seed);
    let acked = Arc::new(Mutex::new(Acked::default()));
    for round in 0..kills() {
        let gateway = Gateway::start(db).await;
        let snapshot = acked.lock().unwrap().clone();
        check_acked(&gateway, &snapshot).await;
        let base = gateway.api.base.clone();
        let workers: Vec<_> = (0..4)
            .map(|w| {
                tokio::spawn(worker(
                    base.clone(),
                    w,
                    acked.clone(),
                    seed ^ (round * 4 + w) as u64,
                ))
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(50 + rng.below(400))).await;
        sigkill(gateway.pid());
        for w in workers {
            w.await.unwrap();
        }
        drop(gateway);
        if let Some(path) = sqlite {
            check_sqlite_file(path);
        }
    }
    let gateway = Gateway::start(db).await;
    let acked = acked.lock().unwrap().clone();
    assert!(
        !acked.tasks.is_empty() && !acked.notes.is_empty(),
        "the load wrote something"
    );
    eprintln!(
        "{} tasks and {} notes acknowledged",
        acked.tasks.len(),
        acked.notes.len()
    );
    check_acked(&gateway, &acked).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_keeps_every_acknowledged_write_through_sigkills() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cairn.db");
    crash_cycles(path.to_str().unwrap(), Some(&path)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_every_acknowledged_write_through_gateway_sigkills() {
    let database = TestDatabase::create();
    crash_cycles(database.url(), None).await;
}
