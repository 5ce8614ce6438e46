//! Idempotency keys (the IETF httpapi `Idempotency-Key` draft): the first final
//! answer to a keyed write, kept for [`RETENTION`] so that a retry gets it
//! again instead of doing the write twice. A key belongs to one client and one
//! route ([`KeyScope`]). The rules are here; each backend holds only the SQL of
//! the three steps: claim the key atomically, then write the answer over the
//! claim, or release it when the answer was not final.

use std::sync::atomic::{AtomicU32, Ordering};

use chrono::{DateTime, Utc};

use super::StoreError;
use super::model::timestamp;

/// How long a final answer is kept (and replayed).
pub const RETENTION: chrono::Duration = chrono::Duration::hours(24);

/// How long a client waits before retrying a key whose first request is still running.
pub const IN_PROGRESS_RETRY_AFTER_MS: u64 = 250;

/// The longest key accepted, in characters.
pub const MAX_KEY_LEN: usize = 255;

/// Who sent a key, and where: a key is only ever compared within its scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyScope {
    /// The client: the token's name, or `anonymous`.
    pub client: String,
    /// The route: `POST /api/v1/tasks/{id}/claim`, or `mcp task_create`.
    pub route: String,
    /// The key as the client sent it.
    pub key: String,
}

/// One attempt to claim a key.
#[derive(Debug, Clone)]
pub struct KeyClaim {
    pub scope: KeyScope,
    /// What the request asked for (a hash of its target and canonical body):
    /// the same key with another fingerprint is `idempotency_key_reused`.
    pub fingerprint: String,
    /// A random token naming this attempt: only the claim's owner may write
    /// its answer or release it (a claim taken over is no longer its own).
    pub owner: String,
    pub now: String,
    /// When the row may be purged: [`RETENTION`] after `now`.
    pub expires_at: String,
    /// A claim still in progress that started before this was left behind by
    /// a request that died (a crashed gateway): it may be taken over.
    pub stale_before: String,
}

impl KeyClaim {
    /// A claim of `scope` at `now`, taking over claims older than `stale_after`.
    pub fn new(
        scope: KeyScope,
        fingerprint: String,
        now: DateTime<Utc>,
        stale_after: std::time::Duration,
    ) -> Self {
        let stale_after = chrono::Duration::from_std(stale_after).unwrap_or(RETENTION);
        Self {
            scope,
            fingerprint,
            owner: super::model::new_id(),
            now: timestamp(now).into(),
            expires_at: timestamp(now + RETENTION).into(),
            stale_before: timestamp(now - stale_after).into(),
        }
    }
}

/// A final answer as stored and replayed: the HTTP status, the headers that
/// matter to a client (see [`KEPT_HEADERS`]) and the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// The response headers an answer keeps; the rest are made afresh per request.
pub const KEPT_HEADERS: [&str; 3] = ["location", "etag", "content-type"];

impl StoredAnswer {
    /// The headers as one JSON text, as the backends store them.
    pub fn headers_json(&self) -> String {
        serde_json::to_string(&self.headers).unwrap_or_else(|_| "[]".to_owned())
    }

    pub fn parse_headers(text: &str) -> Vec<(String, String)> {
        serde_json::from_str(text).unwrap_or_default()
    }
}

/// A claim someone else holds (or held) when ours did not go through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldKey {
    pub fingerprint: String,
    /// `None` while the first request is still running.
    pub answer: Option<StoredAnswer>,
}

/// What a keyed request does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// The key is ours: run the request, then finish or release the claim.
    Run,
    /// The first answer, to send again.
    Replay(StoredAnswer),
    /// Refused: `idempotency_key_reused` or `idempotency_request_in_progress`.
    Refuse(StoreError),
}

/// The rule, once for every backend: a key held for another request is
/// reused; one held for this request answers what it answered, or is still
/// running.
pub fn decide(held: Option<HeldKey>, fingerprint: &str) -> Decision {
    match held {
        None => Decision::Run,
        Some(held) if held.fingerprint != fingerprint => Decision::Refuse(key_reused()),
        Some(HeldKey {
            answer: Some(answer),
            ..
        }) => Decision::Replay(answer),
        Some(HeldKey { answer: None, .. }) => Decision::Refuse(in_progress()),
    }
}

/// Whether an answer is final, so stored: anything but a retryable refusal
/// (busy store, timeout, rate limit) or a server error, which a retry may
/// still turn into a success.
pub fn is_final(status: u16, retryable: bool) -> bool {
    status < 500 && status != 429 && !retryable
}

/// Expired rows are purged by every [`PURGE_EVERY`]th claim, so a claim stays one
/// cheap statement (an expired row is also taken over by the claim that meets it).
pub const PURGE_EVERY: u32 = 64;

/// Whether this claim should purge the expired rows first.
pub fn purge_due() -> bool {
    static CLAIMS: AtomicU32 = AtomicU32::new(0);
    CLAIMS
        .fetch_add(1, Ordering::Relaxed)
        .is_multiple_of(PURGE_EVERY)
}

pub fn key_reused() -> StoreError {
    StoreError::KeyReused
}

pub fn in_progress() -> StoreError {
    StoreError::KeyInProgress
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{ErrorCode, ToolError};

    fn answer() -> StoredAnswer {
        StoredAnswer {
            status: 201,
            headers: vec![("location".into(), "/api/v1/tasks/x".into())],
            body: "{}".into(),
        }
    }

    #[test]
    fn a_free_key_runs() {
        assert_eq!(decide(None, "f"), Decision::Run);
    }

    #[test]
    fn a_key_held_for_another_request_is_reused_even_while_it_runs() {
        for answer in [None, Some(answer())] {
            let held = HeldKey {
                fingerprint: "other".into(),
                answer,
            };
            let Decision::Refuse(e) = decide(Some(held), "f") else {
                panic!("not refused");
            };
            let e = ToolError::from(e);
            assert_eq!(e.code, ErrorCode::IdempotencyKeyReused);
        }
    }

    #[test]
    fn a_running_key_is_retryable_and_a_finished_one_replays() {
        let running = HeldKey {
            fingerprint: "f".into(),
            answer: None,
        };
        let Decision::Refuse(e) = decide(Some(running), "f") else {
            panic!("not refused");
        };
        let e = ToolError::from(e);
        assert_eq!(e.code, ErrorCode::IdempotencyRequestInProgress);
        assert!(e.code.spec().retryable);
        assert_eq!(e.retry_after_ms, Some(IN_PROGRESS_RETRY_AFTER_MS));
        let done = HeldKey {
            fingerprint: "f".into(),
            answer: Some(answer()),
        };
        assert_eq!(decide(Some(done), "f"), Decision::Replay(answer()));
    }

    #[test]
    fn only_final_answers_are_kept() {
        assert!(is_final(201, false));
        assert!(is_final(404, false));
        assert!(is_final(409, false));
        assert!(!is_final(409, true));
        assert!(!is_final(429, true));
        assert!(!is_final(503, true));
        assert!(!is_final(500, false));
    }
}
