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
//!
//! One entity's read (`task_get`, `note_read`) is kept the same way, with the
//! strong `ETag` made of its data when it was read: a read again of a task
//! costs a look at the store's mark, not a connection and a transaction.

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Instant;

use axum::http::HeaderValue;
use parking_lot::Mutex;
use serde_json::{Map, Value};

use crate::envelope::{Envelope, Prerendered, Tier};
use crate::http::semantics::extract::Rest;
use crate::http::semantics::response::ApiResponse;
use crate::store::{ChangeMark, Now, timestamp};

/// How many answers are kept (one per tool and arguments), and how many bytes
/// of JSON at most; when full, those of an older generation go first, then
/// all. An answer larger than all of it is not kept.
const KEPT: usize = 64;
const KEPT_BYTES: usize = 16 << 20;

/// The answers kept, by tool and arguments.
#[derive(Default)]
pub struct ReadCache {
    kept: Mutex<Answers>,
}

#[derive(Default)]
struct Answers {
    by_key: foldhash::HashMap<Key, Kept>,
    /// The JSON of every answer kept, in bytes.
    bytes: usize,
}

impl Answers {
    fn fits(&self, answer: &Kept) -> bool {
        self.by_key.len() < KEPT && self.bytes + answer.answer.bytes() <= KEPT_BYTES
    }

    fn retain(&mut self, keep: impl Fn(&Kept) -> bool) {
        self.by_key.retain(|_, kept| keep(kept));
        self.bytes = self.by_key.values().map(|k| k.answer.bytes()).sum();
    }
}

/// What an answer is kept by: its project, tool and arguments, the
/// arguments compared entry by entry in their order (as their JSON text
/// would be), never written out.
#[derive(Debug)]
struct Key {
    project: &'static str,
    tool: &'static str,
    args: Map<String, Value>,
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.project == other.project
            && self.tool == other.tool
            && self.args.len() == other.args.len()
            && self.args.iter().eq(other.args.iter())
    }
}

impl Eq for Key {}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.project.hash(state);
        self.tool.hash(state);
        state.write_usize(self.args.len());
        for entry in &self.args {
            entry.hash(state);
        }
    }
}

/// A tool whose answer is one entity, with the strong `ETag` of its data.
pub type EntityTag = fn(&Value) -> Option<String>;

#[derive(Clone)]
struct Kept {
    mark: ChangeMark,
    /// The answer of the call that made it; the request id and runtime are
    /// each request's own.
    answer: Arc<Prerendered>,
    /// The entity's strong tag; `None`: the data's weak one.
    tag: Option<HeaderValue>,
}

impl ReadCache {
    fn get(&self, key: &Key, current: &ChangeMark, now: &Now<'_>) -> Option<Kept> {
        let kept = self.kept.lock();
        let found = kept.by_key.get(key)?;
        found
            .mark
            .still_current(current, now)
            .then(|| found.clone())
    }

    fn keep(&self, key: Key, answer: Kept) {
        if answer.answer.bytes() > KEPT_BYTES {
            return;
        }
        let mut kept = self.kept.lock();
        if let Some(replaced) = kept.by_key.remove(&key) {
            kept.bytes -= replaced.answer.bytes();
        }
        if !kept.fits(&answer) {
            let generation = answer.mark.generation;
            kept.retain(|k| k.mark.generation == generation);
            if !kept.fits(&answer) {
                kept.retain(|_| false);
            }
        }
        kept.bytes += answer.answer.bytes();
        kept.by_key.insert(key, answer);
    }
}

impl Rest {
    /// [`Rest::call`] for a read whose answer depends only on its arguments
    /// and the store: served from the cache while the store has not changed.
    /// With `entity_tag`, the answer is one entity and carries that tag.
    pub async fn call_cached(
        &self,
        tool: &'static str,
        args: Map<String, Value>,
        entity_tag: Option<EntityTag>,
    ) -> ApiResponse {
        let started = Instant::now();
        let clock = &self.cairn.config().clock;
        let read = || timestamp(clock.now()).into();
        let now = Now::new(&read);
        let tag_of = |data: &Value| {
            let tag = entity_tag.and_then(|tag_of| tag_of(data))?;
            HeaderValue::try_from(tag).ok()
        };
        let Some(mark) = self.cairn.store().change_mark(&now) else {
            // Boxed, as the miss below: a store with no mark (PostgreSQL)
            // pays for the box; a hit's future, which every caller's future
            // holds and moves, need not carry a tool call's.
            return Box::pin(self.call_tagged(tool, args, tag_of)).await;
        };
        let key = Key {
            project: self.cairn.project(),
            tool,
            args,
        };
        if let Some(Kept { answer, tag, .. }) = self.state.reads.get(&key, &mark, &now) {
            let elapsed = started.elapsed();
            self.cairn.count(tool, "ok", elapsed);
            crate::metrics::count_read_cache(tool, true);
            let runtime_ms = elapsed.as_secs_f64() * 1000.0;
            return ApiResponse::prerendered(answer, &self.request_id, runtime_ms, tag)
                .revalidating(self.if_none_match.clone());
        }
        crate::metrics::count_read_cache(tool, false);
        // Boxed: the hit above is what most requests are, and its future
        // (moved into its caller's, and that into axum's box) need not carry
        // a tool call's.
        let args = Value::Object(key.args.clone());
        let envelope = Box::pin(self.cairn.call(tool, args, &self.request_id)).await;
        let kept = match &envelope.outcome {
            Ok(data) if Tier::browser_for(data) == Tier::None => {
                Prerendered::new(data, &envelope.meta).map(|answer| (answer, tag_of(data)))
            }
            _ => None,
        };
        let Some((answer, tag)) = kept else {
            return self.tagged(envelope, tag_of);
        };
        let answer = Arc::new(answer);
        self.state.reads.keep(
            key,
            Kept {
                mark,
                answer: answer.clone(),
                tag: tag.clone(),
            },
        );
        let Envelope { meta, .. } = envelope;
        ApiResponse::prerendered(answer, &meta.request_id, meta.runtime_ms, tag)
            .revalidating(self.if_none_match.clone())
    }

    /// [`Rest::call`], its success tagged by `tag_of`.
    async fn call_tagged(
        &self,
        tool: &str,
        args: Map<String, Value>,
        tag_of: impl Fn(&Value) -> Option<HeaderValue>,
    ) -> ApiResponse {
        let envelope = self
            .cairn
            .call(tool, Value::Object(args), &self.request_id)
            .await;
        self.tagged(envelope, tag_of)
    }

    fn tagged(
        &self,
        envelope: Envelope,
        tag_of: impl Fn(&Value) -> Option<HeaderValue>,
    ) -> ApiResponse {
        let tag = envelope.outcome.as_ref().ok().and_then(tag_of);
        let answer = ApiResponse::new(envelope).revalidating(self.if_none_match.clone());
        match tag {
            Some(tag) => answer.with_header(axum::http::header::ETAG, tag),
            None => answer,
        }
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
            answer: prerendered(&Value::Null),
            tag: None,
        }
    }

    fn prerendered(data: &Value) -> Arc<Prerendered> {
        let meta = crate::envelope::Meta::new("task_board", "tasks", "r");
        Arc::new(Prerendered::new(data, &meta).expect("a meta always comes apart"))
    }

    /// The key of a board read with `page` as its one argument.
    fn key(page: impl Into<Value>) -> Key {
        let mut args = Map::new();
        args.insert("page".into(), page.into());
        Key {
            project: "default",
            tool: "task_board",
            args,
        }
    }

    impl ReadCache {
        /// [`ReadCache::get`] at the time `now`.
        fn get_at(&self, key: &Key, current: &ChangeMark, now: &str) -> Option<Kept> {
            let read = || now.to_owned();
            self.get(key, current, &Now::new(&read))
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
        cache.keep(key("k"), kept(3, Some("2026-12-02T10:00:00.000Z")));
        let before = "2026-12-02T09:59:59.999Z";
        assert!(cache.get_at(&key("k"), &mark(3), before).is_some());
        assert!(cache.get_at(&key("other"), &mark(3), before).is_none());
        assert!(cache.get_at(&key("k"), &mark(4), before).is_none());
        // The expiry itself is a lapse: the claim is over at that instant.
        assert!(
            cache
                .get_at(&key("k"), &mark(3), "2026-12-02T10:00:00.000Z")
                .is_none()
        );
        cache.keep(key("k"), kept(4, None));
        assert!(
            cache
                .get_at(&key("k"), &mark(4), "2030-01-01T00:00:00.000Z")
                .is_some()
        );
    }

    #[test]
    fn an_answer_with_no_claim_to_lapse_is_served_without_reading_the_clock() {
        let cache = ReadCache::default();
        cache.keep(key("k"), kept(3, None));
        let read = || -> String { panic!("the clock was read") };
        assert!(cache.get(&key("k"), &mark(3), &Now::new(&read)).is_some());
        let reads = std::sync::atomic::AtomicUsize::new(0);
        let read = || {
            reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            "2026-12-02T09:59:59.999Z".to_owned()
        };
        let now = Now::new(&read);
        cache.keep(key("k"), kept(3, Some("2026-12-02T10:00:00.000Z")));
        assert!(cache.get(&key("k"), &mark(3), &now).is_some());
        assert!(cache.get(&key("k"), &mark(3), &now).is_some());
        assert_eq!(reads.into_inner(), 1, "read once, when a lapse is compared");
    }

    #[test]
    fn a_key_is_its_tool_and_its_arguments_in_their_order() {
        let cache = ReadCache::default();
        let args = |pairs: &[(&str, Value)]| {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect::<Map<String, Value>>()
        };
        let board = |pairs: &[(&str, Value)]| Key {
            project: "default",
            tool: "task_board",
            args: args(pairs),
        };
        let a = ("limit", Value::from(5));
        let b = ("status", Value::from("open"));
        cache.keep(board(&[a.clone(), b.clone()]), kept(1, None));
        assert!(
            cache
                .get_at(&board(&[a.clone(), b.clone()]), &mark(1), "now")
                .is_some()
        );
        // Another tool, another value, another order: another answer.
        let list = Key {
            project: "default",
            tool: "task_list",
            args: args(&[a.clone(), b.clone()]),
        };
        assert!(cache.get_at(&list, &mark(1), "now").is_none());
        // The same read in another project: another answer.
        let elsewhere = Key {
            project: "web",
            ..board(&[a.clone(), b.clone()])
        };
        assert!(cache.get_at(&elsewhere, &mark(1), "now").is_none());
        assert!(
            cache
                .get_at(
                    &board(&[a.clone(), ("status", Value::from("done"))]),
                    &mark(1),
                    "now"
                )
                .is_none()
        );
        assert!(
            cache
                .get_at(&board(&[b, a.clone()]), &mark(1), "now")
                .is_none()
        );
        assert!(cache.get_at(&board(&[a]), &mark(1), "now").is_none());
    }

    /// An answer of `bytes` bytes in all: a string of data, less the
    /// frame and meta around it.
    fn sized(generation: u64, bytes: usize) -> Kept {
        let around = prerendered(&Value::String(String::new())).bytes();
        let answer = prerendered(&Value::String("x".repeat(bytes - around)));
        assert_eq!(answer.bytes(), bytes);
        Kept {
            answer,
            ..kept(generation, None)
        }
    }

    #[test]
    fn the_cache_holds_at_most_its_bytes() {
        let cache = ReadCache::default();
        let half = KEPT_BYTES / 2;
        cache.keep(key("a"), sized(1, half));
        cache.keep(key("b"), sized(1, half));
        assert_eq!(cache.kept.lock().by_key.len(), 2);
        // A third of the same size does not fit beside them: all go.
        cache.keep(key("c"), sized(1, half));
        assert_eq!(cache.kept.lock().by_key.len(), 1);
        assert_eq!(cache.kept.lock().bytes, half);
        // Replacing an answer counts its bytes once.
        cache.keep(key("c"), sized(1, 1_000));
        assert_eq!(cache.kept.lock().bytes, 1_000);
        // One larger than the whole cache is not kept, and evicts nothing.
        cache.keep(key("huge"), sized(1, KEPT_BYTES + 1));
        assert!(cache.get_at(&key("huge"), &mark(1), "now").is_none());
        assert!(cache.get_at(&key("c"), &mark(1), "now").is_some());
    }

    #[test]
    fn a_full_cache_drops_older_generations_first_then_everything() {
        let cache = ReadCache::default();
        for i in 0..KEPT - 1 {
            cache.keep(key(format!("old {i}")), kept(1, None));
        }
        cache.keep(key("new"), kept(2, None));
        assert_eq!(cache.kept.lock().by_key.len(), KEPT);
        cache.keep(key("newer"), kept(2, None));
        assert_eq!(cache.kept.lock().by_key.len(), 2);
        assert!(cache.get_at(&key("new"), &mark(2), "now").is_some());

        for i in 0..KEPT - 2 {
            cache.keep(key(format!("same {i}")), kept(2, None));
        }
        cache.keep(key("one more"), kept(2, None));
        assert_eq!(cache.kept.lock().by_key.len(), 1);
        assert!(cache.get_at(&key("one more"), &mark(2), "now").is_some());
        // Replacing a key already kept never evicts.
        for i in 0..KEPT - 1 {
            cache.keep(key(format!("again {i}")), kept(2, None));
        }
        cache.keep(key("one more"), kept(2, None));
        assert_eq!(cache.kept.lock().by_key.len(), KEPT);
    }
}
