//! Resource subscriptions, driven by the change feed (the same broadcast the
//! SSE streams follow, [`crate::tools::live::FeedHub`]): every event naming a
//! subscribed note or task (any task event, for the board) becomes
//! `notifications/resources/updated` with the URI the client subscribed
//! with; creating a task or a note, or deleting a note, becomes
//! `notifications/resources/list_changed`.
//!
//! Two mechanisms, by protocol revision: `resources/subscribe` and
//! `unsubscribe` (2025-06-18, 2025-11-25), where one listener per session
//! sends on the session's stream from `notifications/initialized` on; and
//! `subscriptions/listen` (2026-07-28), where each listen request is its own
//! stream and ends when the client cancels it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::json;
use tokio::sync::broadcast::{self, error::RecvError};

use super::resources::Target;
use super::{CairnMcp, Failure};
use crate::store::{ChangeEvent, ChangeKind, EntityType};

/// How often an idle listener checks that its client is still there.
const LIVENESS: Duration = Duration::from_secs(10);

/// What a subscribed URI watches, resolved once at subscribe time (so a note
/// keeps its subscription when a new title changes its slug).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Watched {
    Task(String),
    Note(String),
    Board,
}

impl Watched {
    fn touched_by(&self, event: &ChangeEvent) -> bool {
        match self {
            Self::Task(id) => event.entity.kind == EntityType::Task && &event.entity.id == id,
            Self::Note(id) => event.entity.kind == EntityType::Note && &event.entity.id == id,
            Self::Board => event.entity.kind == EntityType::Task,
        }
    }
}

/// Whether `event` adds or removes a listed resource.
fn changes_list(event: &ChangeEvent) -> bool {
    match event.kind {
        ChangeKind::TaskCreated | ChangeKind::NoteDeleted => true,
        ChangeKind::NoteWritten => event.changes.get("created") == Some(&json!(true)),
        _ => false,
    }
}

/// Resolves a URI to what it watches; a URI naming nothing is refused with
/// the tool's own failure (`task_not_found`, `ambiguous_id_prefix`, ...).
pub(super) async fn resolve(mcp: &CairnMcp, uri: &str) -> Result<Watched, Failure> {
    let target = Target::parse(uri).map_err(|e| Failure::new("resources/subscribe", e))?;
    let full_id = |data: serde_json::Value| data["id"].as_str().unwrap_or_default().to_owned();
    Ok(match target {
        Target::Task(key) => {
            Watched::Task(full_id(mcp.lookup("task_get", json!({"id": key})).await?))
        }
        Target::Note(key) => {
            Watched::Note(full_id(mcp.lookup("note_read", json!({"id": key})).await?))
        }
        Target::Board(_) => Watched::Board,
    })
}

/// A session's `resources/subscribe` subscriptions: each URI, what it
/// watches, and the feed's head when it was subscribed (earlier writes, which
/// the listener may still be catching up on, are not reported).
#[derive(Default)]
pub(super) struct Subscriptions {
    watched: Mutex<Vec<(String, Watched, i64)>>,
    /// The session's place in the feed, taken at `initialize`, so that a
    /// write made right after the handshake is not missed by a listener
    /// that starts a moment later.
    early: Mutex<Option<broadcast::Receiver<Arc<ChangeEvent>>>>,
    started: AtomicBool,
}

impl Subscriptions {
    /// Subscribes `uri` (again: once) and makes sure the listener runs.
    pub(super) fn add(
        &self,
        uri: String,
        watched: Watched,
        mcp: &CairnMcp,
        peer: &Peer<RoleServer>,
    ) {
        let since = *mcp.cairn.store().watch_changes().borrow();
        {
            let mut all = self.watched.lock().unwrap_or_else(|e| e.into_inner());
            all.retain(|(u, _, _)| u != &uri);
            all.push((uri, watched, since));
        }
        self.start(mcp, peer);
    }

    pub(super) fn remove(&self, uri: &str) {
        self.watched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(u, _, _)| u != uri);
    }

    fn touched(&self, event: &ChangeEvent) -> Vec<String> {
        self.watched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, w, since)| event.seq > *since && w.touched_by(event))
            .map(|(u, _, _)| u.clone())
            .collect()
    }

    fn all(&self) -> Vec<String> {
        let all = self.watched.lock().unwrap_or_else(|e| e.into_inner());
        all.iter().map(|(u, _, _)| u.clone()).collect()
    }

    /// Takes the session's place in the feed (at `initialize`).
    pub(super) fn join_feed(&self, mcp: &CairnMcp) {
        let events = mcp.feed.subscribe(mcp.cairn.store(), &mcp.shutdown);
        *self.early.lock().unwrap_or_else(|e| e.into_inner()) = Some(events);
    }

    /// Starts the session's listener, once.
    pub(super) fn start(&self, mcp: &CairnMcp, peer: &Peer<RoleServer>) {
        if self.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let early = self.early.lock().unwrap_or_else(|e| e.into_inner()).take();
        let events = early.unwrap_or_else(|| mcp.feed.subscribe(mcp.cairn.store(), &mcp.shutdown));
        tokio::spawn(session_listener(mcp.clone(), peer.clone(), events));
    }
}

/// Sends the session's notifications until its client goes or the server stops.
async fn session_listener(
    mcp: CairnMcp,
    peer: Peer<RoleServer>,
    mut events: broadcast::Receiver<Arc<ChangeEvent>>,
) {
    let mut liveness = tokio::time::interval(LIVENESS);
    let subscriptions = &mcp.session.subscriptions;
    loop {
        tokio::select! {
            () = mcp.shutdown.cancelled() => return,
            _ = liveness.tick() => if peer.is_transport_closed() { return },
            received = events.recv() => {
                let sent = match received {
                    Ok(event) => {
                        let list = changes_list(&event).then_some(());
                        notify(&peer, list, subscriptions.touched(&event)).await
                    }
                    // Events were missed: say everything may have changed.
                    Err(RecvError::Lagged(_)) => notify(&peer, Some(()), subscriptions.all()).await,
                    Err(RecvError::Closed) => return,
                };
                if !sent {
                    return;
                }
            }
        }
    }
}

/// `false` when the client is gone.
async fn notify(peer: &Peer<RoleServer>, list_changed: Option<()>, uris: Vec<String>) -> bool {
    if list_changed.is_some() && peer.notify_resource_list_changed().await.is_err() {
        return false;
    }
    for uri in uris {
        let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
        if peer.notify_resource_updated(param).await.is_err() {
            return false;
        }
    }
    true
}

/// What a `subscriptions/listen` request may have: the list's changes and
/// every URI that names a cairn resource.
pub(super) fn acceptable(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let uris: Vec<String> = requested
        .resource_subscriptions
        .iter()
        .flatten()
        .filter(|uri| Target::parse(uri).is_ok())
        .cloned()
        .collect();
    SubscriptionFilter::builder()
        .resources_list_changed()
        .resource_subscriptions(uris)
        .build()
}

/// One `subscriptions/listen` stream, until the client cancels it or the
/// server stops (a graceful end: the final result is sent).
pub(super) async fn listen(mcp: &CairnMcp, context: SubscriptionContext) -> Result<(), McpError> {
    // Subscribed to the feed before resolving, so no write in between is missed.
    let mut events = mcp.feed.subscribe(mcp.cairn.store(), &mcp.shutdown);
    let accepted = context.accepted().clone();
    let list_changed = accepted.resources_list_changed == Some(true);
    let mut watched = Vec::new();
    for uri in accepted.resource_subscriptions.iter().flatten() {
        // A URI that names nothing (yet) never fires; it was valid syntax.
        if let Ok(w) = resolve(mcp, uri).await {
            watched.push((uri.clone(), w));
        }
    }
    let sink = context.sink();
    loop {
        tokio::select! {
            () = context.cancelled() => return Ok(()),
            () = mcp.shutdown.cancelled() => return Ok(()),
            received = events.recv() => {
                let (list, uris): (bool, Vec<&String>) = match &received {
                    Ok(event) => (
                        list_changed && changes_list(event),
                        watched.iter().filter(|(_, w)| w.touched_by(event)).map(|(u, _)| u).collect(),
                    ),
                    Err(RecvError::Lagged(_)) => (list_changed, watched.iter().map(|(u, _)| u).collect()),
                    Err(RecvError::Closed) => return Ok(()),
                };
                if list && sink.notify_resource_list_changed().await.is_err() {
                    return Ok(());
                }
                for uri in uris {
                    if sink.notify_resource_updated(uri.clone()).await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}
