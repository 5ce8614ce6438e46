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
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rmcp::model::SubscriptionFilter;
use rmcp::service::{SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::json;
use tokio::sync::broadcast::{self, error::RecvError};

use super::resources::Target;
use super::{CairnMcp, Failure};
use crate::store::{ChangeEvent, ChangeKind, ChangeQuery, EntityType, nowait};

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
    /// The feed's head as each `subscriptions/listen` was accepted. The SDK
    /// acknowledges a listen before [`listen`] runs, and a write the client
    /// makes on seeing the acknowledgment must still reach the stream.
    accepted_at: Mutex<Vec<i64>>,
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
            let mut all = lock(&self.watched);
            all.retain(|(u, _, _)| u != &uri);
            all.push((uri, watched, since));
        }
        self.start(mcp, peer);
    }

    pub(super) fn remove(&self, uri: &str) {
        lock(&self.watched).retain(|(u, _, _)| u != uri);
    }

    fn touched(&self, event: &ChangeEvent) -> Vec<String> {
        lock(&self.watched)
            .iter()
            .filter(|(_, w, since)| event.seq > *since && w.touched_by(event))
            .map(|(u, _, _)| u.clone())
            .collect()
    }

    fn all(&self) -> Vec<String> {
        let all = lock(&self.watched);
        all.iter().map(|(u, _, _)| u.clone()).collect()
    }

    /// Notes the feed's `head` as a listen is accepted, before it is acknowledged.
    pub(super) fn accept_listen(&self, head: i64) {
        lock(&self.accepted_at).push(head);
    }

    /// Where a starting listen replays from: the oldest head noted. Which
    /// noted head was its own is not known, so each start takes the newest
    /// away: the heads left are then never newer than those of the listens
    /// still to start, and none replays from after its acknowledgment.
    fn listen_since(&self) -> Option<i64> {
        let mut heads = lock(&self.accepted_at);
        let oldest = heads.iter().copied().min()?;
        let newest = (0..heads.len()).max_by_key(|&i| heads[i])?;
        heads.swap_remove(newest);
        Some(oldest)
    }

    /// Takes the session's place in the feed (at `initialize`).
    pub(super) fn join_feed(&self, mcp: &CairnMcp) {
        let events = mcp.feed.subscribe(&mcp.cairn, &mcp.shutdown);
        *lock(&self.early) = Some(events);
    }

    /// Starts the session's listener, once.
    pub(super) fn start(&self, mcp: &CairnMcp, peer: &Peer<RoleServer>) {
        if self.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let early = lock(&self.early).take();
        let events = early.unwrap_or_else(|| mcp.feed.subscribe(&mcp.cairn, &mcp.shutdown));
        tokio::spawn(session_listener(mcp.clone(), peer.clone(), events));
    }
}

/// A poisoned lock still guards whole values here: nothing panics mid-update.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
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
    // Subscribed to the feed before resolving and replaying, so no write in
    // between is missed.
    let mut events = mcp.feed.subscribe(&mcp.cairn, &mcp.shutdown);
    let since = mcp.session.subscriptions.listen_since();
    let accepted = context.accepted().clone();
    let mut stream = Listen {
        list_changed: accepted.resources_list_changed == Some(true),
        watched: Vec::new(),
        sink: context.sink().clone(),
    };
    for uri in accepted.resource_subscriptions.iter().flatten() {
        // A URI that names nothing (yet) never fires; it was valid syntax.
        if let Ok(w) = resolve(mcp, uri).await {
            stream.watched.push((uri.clone(), w));
        }
    }
    // What was written between the acknowledgment and the subscription above
    // is read from the feed; the broadcast then goes on after it.
    let mut replayed = 0;
    if let Some(since) = since {
        let query = ChangeQuery {
            after: Some(since),
            limit: REPLAY,
            ..ChangeQuery::default()
        };
        let sent = match nowait::read(mcp.cairn.store(), move |s| s.changes(&query)).await {
            Some(Ok(page)) if !page.more => {
                replayed = page.head;
                stream.events(&page.events).await
            }
            // Too much, or the feed unreadable: everything may have changed.
            _ => stream.everything().await,
        };
        if !sent {
            return Ok(());
        }
    }
    loop {
        let sent = tokio::select! {
            () = context.cancelled() => return Ok(()),
            () = mcp.shutdown.cancelled() => return Ok(()),
            received = events.recv() => match received {
                Ok(event) if event.seq <= replayed => true,
                Ok(event) => stream.event(&event).await,
                Err(RecvError::Lagged(_)) => stream.everything().await,
                Err(RecvError::Closed) => return Ok(()),
            },
        };
        if !sent {
            return Ok(());
        }
    }
}

/// Events replayed at the start of a listen; more means it lagged.
const REPLAY: usize = 100;

/// What one `subscriptions/listen` stream watches, and where it sends.
struct Listen {
    list_changed: bool,
    watched: Vec<(String, Watched)>,
    sink: SubscriptionSink,
}

impl Listen {
    /// Sends what `event` touched; `false` when the stream is gone.
    async fn event(&self, event: &ChangeEvent) -> bool {
        let list = self.list_changed && changes_list(event);
        let uris = self.watched.iter().filter(|(_, w)| w.touched_by(event));
        self.send(list, uris.map(|(u, _)| u)).await
    }

    /// Sends what `events` touched, in order; `false` when the stream is gone.
    async fn events(&self, events: &[ChangeEvent]) -> bool {
        for event in events {
            if !self.event(event).await {
                return false;
            }
        }
        true
    }

    /// Says that everything watched may have changed (events were missed).
    async fn everything(&self) -> bool {
        let uris = self.watched.iter().map(|(u, _)| u);
        self.send(self.list_changed, uris).await
    }

    async fn send(&self, list: bool, uris: impl Iterator<Item = &String>) -> bool {
        if list && self.sink.notify_resource_list_changed().await.is_err() {
            return false;
        }
        for uri in uris {
            if self
                .sink
                .notify_resource_updated(uri.clone())
                .await
                .is_err()
            {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listen_replays_from_no_later_than_its_own_acceptance() {
        let subscriptions = Subscriptions::default();
        // Accepted at heads 5 and 7, started in the other order: neither may
        // replay from after the head it was accepted at.
        subscriptions.accept_listen(5);
        subscriptions.accept_listen(7);
        assert_eq!(subscriptions.listen_since(), Some(5));
        subscriptions.accept_listen(9);
        assert_eq!(subscriptions.listen_since(), Some(5));
        assert_eq!(
            subscriptions.listen_since(),
            Some(5),
            "the one accepted at 5, last"
        );
        assert_eq!(
            subscriptions.listen_since(),
            None,
            "every noted head was taken"
        );
    }
}
