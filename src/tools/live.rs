//! The change feed, live: one pump per project and process reads each new event once
//! from the store when its head moves (a local commit, or a NOTIFY from
//! another gateway on PostgreSQL) and broadcasts it to every listener: the
//! SSE streams at `/api/v1/events` and MCP resource subscriptions.
//! Listeners that need history replay it from the feed themselves.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use crate::store::{ChangeEvent, ChangeQuery, Store, nowait};

/// Events the pump keeps for listeners that fall behind before they lag.
const BROADCAST_BUFFER: usize = 4_096;
/// Events read from the feed per page.
const PAGE: usize = 500;
/// Events behind the head that the pump reads on its own thread.
const READ_HERE: i64 = 16;

/// The broadcast of each project's new events, started by its first listener.
#[derive(Debug, Default)]
pub struct FeedHub {
    senders: parking_lot::Mutex<HashMap<&'static str, broadcast::Sender<Arc<ChangeEvent>>>>,
}

impl FeedHub {
    /// Events committed from now on in `cairn`'s project. Its pump starts
    /// with the project's first listener and stops when `shutdown` is
    /// cancelled.
    pub fn subscribe(
        &self,
        cairn: &super::Cairn,
        shutdown: &CancellationToken,
    ) -> broadcast::Receiver<Arc<ChangeEvent>> {
        self.senders
            .lock()
            .entry(cairn.project())
            .or_insert_with(|| {
                let store = cairn.store();
                let (sender, _) = broadcast::channel(BROADCAST_BUFFER);
                // The head is read here, not in the task: a write committed
                // before the pump first runs is still broadcast.
                let mut head = store.watch_changes();
                let last = *head.borrow_and_update();
                let pumped = pump(store.clone(), head, last, shutdown.clone(), sender.clone());
                tokio::spawn(pumped);
                sender
            })
            .subscribe()
    }
}

/// Reads every new event once, as the store's head moves, and broadcasts it.
async fn pump(
    store: Arc<dyn Store>,
    mut head: watch::Receiver<i64>,
    mut last: i64,
    shutdown: CancellationToken,
    sender: broadcast::Sender<Arc<ChangeEvent>>,
) {
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            changed = head.changed() => if changed.is_err() { return },
        }
        let newest = *head.borrow_and_update();
        while last < newest {
            let query = ChangeQuery {
                after: Some(last),
                limit: PAGE,
                ..ChangeQuery::default()
            };
            // A few events are read right here when the store answers at
            // once (the common case: one write, one event); a backlog, on
            // the blocking pool, so no worker thread stalls on it.
            let page = if newest - last <= READ_HERE {
                nowait::read(&store, move |store| store.changes(&query)).await
            } else {
                let store = store.clone();
                tokio::task::spawn_blocking(move || store.changes(&query))
                    .await
                    .ok()
            };
            match page {
                Some(Ok(page)) => {
                    last = page.next_seq(last);
                    for event in page.events {
                        // No listener is not an error: the next one replays from the feed.
                        let _ = sender.send(Arc::new(event));
                    }
                    if !page.more {
                        break;
                    }
                }
                _ => {
                    // The store is down: the next head change (or reconnect) retries.
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    break;
                }
            }
        }
    }
}
