//! Answers of read routes served again while the store has not changed: the
//! board (2,000 tasks: four store pages and 110 KB of JSON) costs its queries
//! and its serialization once per change of the store, not once per request.
//!
//! An answer is kept with the store's [`ChangeMark`] read *before* its tool
//! ran, so it holds at least everything committed by then. It is served while
//! the store's mark has the same generation (nothing committed since, through
//! any connection or process) and no claim has lapsed since. A write
//! acknowledged before a request began has moved the mark, so that request
//! reads the store: a cached answer is never older than a write its caller
//! was told about. Only successes with no budget to apply (browser tier
//! `None`) are kept, and only on a store that can tell its mark (SQLite).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use serde_json::{Map, Value};

use super::extract::Rest;
use super::response::ApiResponse;
use crate::envelope::{Envelope, Meta, Serialized, Tier};
use crate::store::{ChangeMark, timestamp};

/// How many answers are kept (one per tool and arguments); when full, those
/// of an older generation go first, then all.
const KEPT: usize = 64;

/// The answers kept, by tool and arguments.
#[derive(Default)]
pub struct ReadCache {
    kept: Mutex<HashMap<String, Kept>>,
}

#[derive(Clone)]
struct Kept {
    mark: ChangeMark,
    data: Arc<Serialized>,
    /// The meta of the call that made it; the request id and runtime are
    /// each request's own.
    meta: Meta,
}

impl ReadCache {
    fn get(&self, key: &str, current: &ChangeMark, now: &str) -> Option<Kept> {
        let kept = self.kept.lock();
        let found = kept.get(key)?;
        found
            .mark
            .still_current(current, now)
            .then(|| found.clone())
    }

    fn keep(&self, key: String, answer: Kept) {
        let mut kept = self.kept.lock();
        if kept.len() >= KEPT && !kept.contains_key(&key) {
            let generation = answer.mark.generation;
            kept.retain(|_, k| k.mark.generation == generation);
            if kept.len() >= KEPT {
                kept.clear();
            }
        }
        kept.insert(key, answer);
    }
}

impl Rest {
    /// [`Rest::call`] for a read whose answer depends only on its arguments
    /// and the store: served from the cache while the store has not changed.
    pub async fn call_cached(&self, tool: &'static str, args: Map<String, Value>) -> ApiResponse {
        let started = Instant::now();
        let now = timestamp(self.cairn.config().clock.now());
        let Some(mark) = self.cairn.store().change_mark(&now) else {
            return self.call(tool, args).await;
        };
        let key = format!("{tool} {}", Value::Object(args.clone()));
        if let Some(Kept { data, mut meta, .. }) = self.reads.get(&key, &mark, &now) {
            let elapsed = started.elapsed();
            self.cairn.count(tool, "ok", elapsed);
            meta.request_id.clone_from(&self.request_id);
            meta.runtime_ms = elapsed.as_secs_f64() * 1000.0;
            crate::metrics::count_read_cache(tool, true);
            return ApiResponse::serialized(data, meta).revalidating(self.if_none_match.clone());
        }
        crate::metrics::count_read_cache(tool, false);
        let envelope = self
            .cairn
            .call(tool, Value::Object(args), &self.request_id)
            .await;
        let data = match &envelope.outcome {
            Ok(data) if Tier::browser_for(data) == Tier::None => Arc::new(Serialized::of(data)),
            _ => return ApiResponse::new(envelope).revalidating(self.if_none_match.clone()),
        };
        let Envelope { meta, .. } = envelope;
        self.reads.keep(
            key,
            Kept {
                mark,
                data: data.clone(),
                meta: meta.clone(),
            },
        );
        ApiResponse::serialized(data, meta).revalidating(self.if_none_match.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(generation: u64, next_lapse: Option<&str>) -> Kept {
        Kept {
            mark: ChangeMark {
                generation,
                next_lapse: next_lapse.map(str::to_owned),
            },
            data: Arc::new(Serialized::of(&Value::Null)),
            meta: Meta::new("task_board", "tasks", "r"),
        }
    }

    fn mark(generation: u64) -> ChangeMark {
        ChangeMark {
            generation,
            next_lapse: None,
        }
    }

    #[test]
    fn an_answer_is_current_until_the_generation_moves_or_a_claim_lapses() {
        let cache = ReadCache::default();
        cache.keep("k".into(), kept(3, Some("2026-12-02T10:00:00.000Z")));
        let before = "2026-12-02T09:59:59.999Z";
        assert!(cache.get("k", &mark(3), before).is_some());
        assert!(cache.get("other", &mark(3), before).is_none());
        assert!(cache.get("k", &mark(4), before).is_none());
        // The expiry itself is a lapse: the claim is over at that instant.
        assert!(
            cache
                .get("k", &mark(3), "2026-12-02T10:00:00.000Z")
                .is_none()
        );
        cache.keep("k".into(), kept(4, None));
        assert!(
            cache
                .get("k", &mark(4), "2030-01-01T00:00:00.000Z")
                .is_some()
        );
    }

    #[test]
    fn a_full_cache_drops_older_generations_first_then_everything() {
        let cache = ReadCache::default();
        for i in 0..KEPT - 1 {
            cache.keep(format!("old {i}"), kept(1, None));
        }
        cache.keep("new".into(), kept(2, None));
        assert_eq!(cache.kept.lock().len(), KEPT);
        cache.keep("newer".into(), kept(2, None));
        assert_eq!(cache.kept.lock().len(), 2);
        assert!(cache.get("new", &mark(2), "now").is_some());

        for i in 0..KEPT - 2 {
            cache.keep(format!("same {i}"), kept(2, None));
        }
        cache.keep("one more".into(), kept(2, None));
        assert_eq!(cache.kept.lock().len(), 1);
        assert!(cache.get("one more", &mark(2), "now").is_some());
        // Replacing a key already kept never evicts.
        for i in 0..KEPT - 1 {
            cache.keep(format!("again {i}"), kept(2, None));
        }
        cache.keep("one more".into(), kept(2, None));
        assert_eq!(cache.kept.lock().len(), KEPT);
    }
}
