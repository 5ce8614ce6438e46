//! The change feed as server-sent events, against a running `cairn serve`:
//! live delivery with the `seq` as the event id, resume after a forced
//! disconnect that replays exactly what was missed, kind filters, and the
//! `reset` that ends a stream whose reader stopped reading.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::process_helpers::{Api, Gateway};

/// One server-sent event as received.
#[derive(Debug, Clone)]
pub struct Sse {
    pub id: Option<String>,
    pub event: String,
    pub data: Value,
}

/// An open event stream, read event by event.
pub struct EventStream {
    response: reqwest::Response,
    buffer: String,
}

impl EventStream {
    /// Opens `/api/v1/events` (plus `query`) with optional `Last-Event-ID`.
    pub async fn open(base: &str, query: &str, last_event_id: Option<&str>) -> Self {
        Self::open_url(&format!("{base}/api/v1/events{query}"), last_event_id).await
    }

    /// Opens the stream at `url` (a project's, say).
    pub async fn open_url(url: &str, last_event_id: Option<&str>) -> Self {
        let mut request = reqwest::Client::new()
            .get(url)
            .header("accept", "text/event-stream");
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await.expect("the stream opens");
        if response.status() != 200 {
            let status = response.status();
            panic!(
                "the stream answered {status}: {}",
                response.text().await.unwrap_or_default()
            );
        }
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        Self {
            response,
            buffer: String::new(),
        }
    }

    /// The next event (comments skipped), or `None` when none comes within `wait`.
    pub async fn next(&mut self, wait: Duration) -> Option<Sse> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                if let Some(event) = parse(&block) {
                    return Some(event);
                }
                continue;
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .ok()?
                .expect("the stream reads")?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

fn parse(block: &str) -> Option<Sse> {
    let (mut id, mut event, mut data) = (None, String::from("message"), String::new());
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("id:") {
            id = Some(v.trim().to_owned());
        } else if let Some(v) = line.strip_prefix("event:") {
            event = v.trim().to_owned();
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push_str(v.trim_start());
        }
    }
    (!data.is_empty()).then(|| Sse {
        id,
        event,
        data: serde_json::from_str(&data).unwrap_or(Value::String(data)),
    })
}

const WAIT: Duration = Duration::from_secs(5);

async fn create(api: &Api, title: &str) -> Value {
    let res = api.post("/api/v1/tasks", &json!({"title": title})).await;
    assert_eq!(res.status, 201, "{}", res.body);
    res.body["data"].clone()
}

async fn sqlite_gateway() -> (Gateway, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db").to_string_lossy().into_owned();
    (Gateway::start(&db).await, dir)
}

#[tokio::test]
async fn a_stream_delivers_each_write_live_with_its_seq_as_the_id() {
    let (gateway, _dir) = sqlite_gateway().await;
    create(&gateway.api, "before the stream").await;
    let mut stream = EventStream::open(&gateway.api.base, "", None).await;
    let task = create(&gateway.api, "Watched").await;
    let event = stream.next(WAIT).await.expect("the write arrives live");
    assert_eq!(event.event, "task.created");
    assert_eq!(
        event.id.as_deref(),
        Some("2"),
        "the stream starts live, after seq 1"
    );
    assert_eq!(event.data["seq"], 2);
    assert_eq!(event.data["entity"]["id"], task["id"]);
    assert_eq!(event.data["entity"]["title"], "Watched");
    let claimed = gateway
        .api
        .post(
            &format!("/api/v1/tasks/{}/claim", task["id"].as_str().unwrap()),
            &json!({"agent": "ann"}),
        )
        .await;
    assert_eq!(claimed.status, 200, "{}", claimed.body);
    let event = stream.next(WAIT).await.expect("the claim arrives");
    assert_eq!(event.event, "task.claimed");
    assert_eq!(event.data["agent"], "ann");
}

#[tokio::test]
async fn last_event_id_replays_exactly_the_missed_events_once() {
    let (gateway, _dir) = sqlite_gateway().await;
    let mut stream = EventStream::open(&gateway.api.base, "", None).await;
    for i in 0..3 {
        create(&gateway.api, &format!("seen {i}")).await;
    }
    let mut last = String::new();
    for _ in 0..3 {
        last = stream.next(WAIT).await.expect("seen live").id.unwrap();
    }
    drop(stream); // a forced disconnect
    for i in 0..5 {
        create(&gateway.api, &format!("missed {i}")).await;
    }
    let mut resumed = EventStream::open(&gateway.api.base, "", Some(&last)).await;
    let mut titles = Vec::new();
    for _ in 0..5 {
        let event = resumed
            .next(WAIT)
            .await
            .expect("a missed event is replayed");
        titles.push(event.data["entity"]["title"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        titles,
        ["missed 0", "missed 1", "missed 2", "missed 3", "missed 4"]
    );
    create(&gateway.api, "after the resume").await;
    let live = resumed.next(WAIT).await.expect("then live again");
    assert_eq!(live.data["entity"]["title"], "after the resume");
    assert_eq!(live.data["seq"], 9);
    assert!(
        resumed.next(Duration::from_millis(500)).await.is_none(),
        "each event once"
    );
    // ?after= resumes the same way (for a page that reloads).
    let mut again = EventStream::open(&gateway.api.base, "?after=7", None).await;
    assert_eq!(again.next(WAIT).await.unwrap().data["seq"], 8);
    assert_eq!(again.next(WAIT).await.unwrap().data["seq"], 9);
}

#[tokio::test]
async fn kinds_filter_the_stream_and_bad_cursors_are_envelopes() {
    let (gateway, _dir) = sqlite_gateway().await;
    let mut claims = EventStream::open(&gateway.api.base, "?kinds=task.claimed", None).await;
    let task = create(&gateway.api, "Filtered").await;
    let id = task["id"].as_str().unwrap();
    gateway
        .api
        .post(
            &format!("/api/v1/tasks/{id}/claim"),
            &json!({"agent": "ann"}),
        )
        .await;
    let event = claims.next(WAIT).await.expect("the claim arrives");
    assert_eq!(event.event, "task.claimed");
    for (query, code) in [
        ("?after=x", "invalid_cursor"),
        ("?after=999", "invalid_cursor"),
        ("?kinds=task.exploded", "invalid_input"),
    ] {
        let res = gateway.api.get(&format!("/api/v1/events{query}")).await;
        assert_eq!(res.status, 400, "{query}: {}", res.body);
        assert_eq!(res.body["error"]["code"], code, "{query}");
    }
}

#[tokio::test]
async fn a_reader_that_stops_reading_gets_a_reset_and_is_closed_while_writes_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cairn.db").to_string_lossy().into_owned();
    let gateway = Gateway::start_with(&db, &["--sse-buffer", "16"]).await;
    let port = gateway.port();
    // A small receive window, so the kernel does not buffer the stream for it.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4_096).unwrap();
    let mut socket = socket.connect(([127, 0, 0, 1], port).into()).await.unwrap();
    socket
        .write_all(
            format!(
                "GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    // Writers are never held up by the reader that does not read. Events
    // carry the title: as long as one may be (300 characters), of 4-byte
    // ones, and enough of them (about 7 MB) to overflow what the kernel
    // buffers for the connection (its send buffer grows to 4 MB).
    const WRITES_EACH: usize = 600;
    let long = "\u{1D11E}".repeat(290);
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let api = gateway.api.clone();
            let long = long.clone();
            tokio::spawn(async move {
                for i in 0..WRITES_EACH {
                    let res = api
                        .post(
                            "/api/v1/tasks",
                            &json!({"title": format!("{w}-{i} {long}")}),
                        )
                        .await;
                    assert_eq!(res.status, 201);
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    // Now read what the server sent: a reset, then the end of the stream.
    let mut received = Vec::new();
    let read_all =
        tokio::time::timeout(Duration::from_secs(8), socket.read_to_end(&mut received)).await;
    let text = String::from_utf8_lossy(&received);
    assert!(
        read_all.is_ok(),
        "the server closes the stream; got {} bytes, {} events, ending {:?}",
        received.len(),
        text.matches("event: task.created").count(),
        text.chars()
            .skip(text.chars().count().saturating_sub(300))
            .collect::<String>()
    );
    assert!(text.contains("event: reset"), "a reset is sent");
    let events = text.matches("event: task.created").count();
    assert!(
        events < 8 * WRITES_EACH,
        "the stream was cut ({events} events sent)"
    );
}

#[tokio::test]
async fn a_projects_stream_carries_that_projects_events_only() {
    let (gateway, _dir) = sqlite_gateway().await;
    let api = &gateway.api;
    let made = api.post("/api/v1/projects", &json!({"key": "alpha"})).await;
    assert_eq!(made.status, 201, "{}", made.body);
    for title in ["default one", "default two", "default three"] {
        create(api, title).await;
    }
    let url = format!("{}/api/v1/projects/alpha/events?after=0", api.base);
    let mut stream = EventStream::open_url(&url, None).await;
    let written = api
        .post(
            "/api/v1/projects/alpha/tasks",
            &json!({"title": "alpha one"}),
        )
        .await;
    assert_eq!(written.status, 201);
    let first = stream.next(WAIT).await.expect("alpha's event comes");
    assert_eq!(
        first.data["entity"]["title"], "alpha one",
        "no event of default's first"
    );
    assert_eq!(
        first.id.as_deref(),
        Some("1"),
        "alpha's feed counts its own"
    );

    // Resuming from alpha's own cursor: nothing of default's follows.
    create(api, "default four").await;
    api.post(
        "/api/v1/projects/alpha/tasks",
        &json!({"title": "alpha two"}),
    )
    .await;
    let mut resumed = EventStream::open_url(
        &format!("{}/api/v1/projects/alpha/events", api.base),
        Some("1"),
    )
    .await;
    let next = resumed.next(WAIT).await.expect("the missed event comes");
    assert_eq!(next.data["entity"]["title"], "alpha two");
    assert!(resumed.next(Duration::from_millis(300)).await.is_none());
}
