//! `changes`: the change feed as pages (`GET /changes`, the `changes_since`
//! tool) and as server-sent events (`GET /events`), live as writes commit.
//!
//! The gateway's [`FeedHub`] (shared with MCP subscriptions) broadcasts new
//! events; each stream replays what it missed from the feed, then forwards
//! the broadcast, each event once. A stream that
//! cannot keep up gets a `reset` event and is closed, so no reader slows a
//! writer.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::envelope::Envelope;
use crate::http::AppState;
use crate::http::openapi::schemas::Success;
use crate::http::semantics::extract::{ApiQuery, Rest};
use crate::http::semantics::response::ApiResponse;
use crate::store::{ChangeEvent, ChangeKind};
use crate::tools::changes::{ChangesPage, ChangesSinceInput};
pub use crate::tools::live::FeedHub;

/// Events read from the feed per page.
const PAGE: usize = 500;
/// Comments on an idle stream, so proxies keep it open.
const HEARTBEAT: Duration = Duration::from_secs(15);

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(changes))
        // A stream, not a JSON answer: served here, documented in the README.
        .route("/api/v1/events", get(events))
}

/// Events after a cursor, oldest first (the `changes_since` tool).
///
/// Keep `next_cursor` and pass it as `cursor` next time: it is there also
/// when nothing is new. A cursor older than the retained history is
/// `cursor_expired`: reload, then follow from a fresh read. A cursor this
/// feed did not issue is `invalid_cursor` (400).
#[utoipa::path(get, path = "/api/v1/changes", tag = "changes", operation_id = "changes_since",
    params(ChangesSinceInput),
    responses((status = 200, description = "Events after the cursor, oldest first", body = Success<ChangesPage>)))]
async fn changes(rest: Rest, query: ApiQuery) -> ApiResponse {
    rest.call_query("changes_since", None, query).await
}

fn sse_event(event: &ChangeEvent) -> Event {
    Event::default()
        .id(event.seq.to_string())
        .event(event.kind.as_str())
        .json_data(event)
        .unwrap_or_else(|_| Event::default().comment("unserializable event"))
}

fn reset_event(reason: &str) -> Event {
    Event::default()
        .event("reset")
        .data(json!({"reason": reason}).to_string())
}

/// Live events: `event:` the kind, `data:` the event, `id:` its `seq`.
/// `Last-Event-ID` (or `?after=SEQ`) resumes after the last one seen;
/// `?kinds=a,b` filters.
async fn events(
    State(state): State<AppState>,
    rest: Rest,
    headers: HeaderMap,
    query: ApiQuery,
) -> Response {
    let mut args = Map::new();
    let mut cursor = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    for (key, value) in query.0 {
        match key.as_str() {
            "after" => cursor = Some(value),
            "kinds" => {
                let kinds: Vec<Value> = value.split(',').map(|k| json!(k.trim())).collect();
                if let Some(all) = args
                    .entry("kinds")
                    .or_insert_with(|| json!([]))
                    .as_array_mut()
                {
                    all.extend(kinds);
                }
            }
            _ => {
                args.insert(key, Value::String(value));
            }
        }
    }
    // Live from now unless asked to resume.
    let cursor = cursor.unwrap_or_else(|| rest.cairn.store().watch_changes().borrow().to_string());
    let kinds: Option<Vec<ChangeKind>> = args
        .get("kinds")
        .and_then(|k| serde_json::from_value(k.clone()).ok());
    args.insert("cursor".into(), Value::String(cursor));
    args.insert("limit".into(), json!(PAGE));

    // Subscribed before the replay, so nothing committed meanwhile is lost.
    let live = state.feed.subscribe(&rest.cairn, &state.settings.shutdown);
    let first = rest
        .cairn
        .call(
            "changes_since",
            Value::Object(args.clone()),
            &rest.request_id,
        )
        .await;
    let first = match page_of(first) {
        Ok(page) => page,
        Err(envelope) => return ApiResponse::new(*envelope).into_response(),
    };
    let (tx, rx) = mpsc::channel(state.settings.sse_buffer.max(1) + 1);
    tokio::spawn(forward(rest, args, first, kinds, live, tx, state));
    Sse::new(ReceiverStream::new(rx).map(Ok::<Event, Infallible>))
        .keep_alive(KeepAlive::new().interval(HEARTBEAT))
        .into_response()
}

fn page_of(envelope: Envelope) -> Result<ChangesPage, Box<Envelope>> {
    match &envelope.outcome {
        Ok(data) => serde_json::from_value(data.clone()).map_err(|_| Box::new(envelope)),
        Err(_) => Err(Box::new(envelope)),
    }
}

/// Queues an event for the reader; `false` (after queueing a `reset`) when
/// the reader has fallen too far behind or is gone.
fn offer(tx: &mpsc::Sender<Event>, event: Event) -> bool {
    if tx.capacity() <= 1 {
        let _ = tx.try_send(reset_event(
            "the stream fell behind; re-read, then reconnect",
        ));
        return false;
    }
    tx.try_send(event).is_ok()
}

/// Replays the pages after the cursor, then forwards live events newer than
/// the last one sent, until the reader goes, falls behind, or the server stops.
async fn forward(
    rest: Rest,
    mut args: Map<String, Value>,
    mut page: ChangesPage,
    kinds: Option<Vec<ChangeKind>>,
    mut live: broadcast::Receiver<Arc<ChangeEvent>>,
    tx: mpsc::Sender<Event>,
    state: AppState,
) {
    let mut last: i64;
    loop {
        for event in &page.events {
            if !offer(&tx, sse_event(event)) {
                return;
            }
        }
        last = page.next_cursor.parse().unwrap_or(0);
        if !page.has_more {
            break;
        }
        args.insert("cursor".into(), Value::String(page.next_cursor.clone()));
        let next = rest
            .cairn
            .call(
                "changes_since",
                Value::Object(args.clone()),
                &rest.request_id,
            )
            .await;
        page = match page_of(next) {
            Ok(page) => page,
            Err(_) => {
                let _ = tx.try_send(reset_event("the feed could not be read; reconnect"));
                return;
            }
        };
    }
    let wanted = |kind: ChangeKind| kinds.as_ref().is_none_or(|k| k.contains(&kind));
    let shutdown = state.settings.shutdown.clone();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tx.closed() => return,
            received = live.recv() => match received {
                Ok(event) => {
                    if event.seq <= last {
                        continue;
                    }
                    last = event.seq;
                    if wanted(event.kind) && !offer(&tx, sse_event(&event)) {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let _ = tx.try_send(reset_event("the stream fell behind; re-read, then reconnect"));
                    return;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
        }
    }
}
