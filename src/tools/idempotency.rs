//! Idempotent retries, for every surface that takes a key (REST's
//! `Idempotency-Key`, MCP's `idempotency_key`): fingerprint the request,
//! claim the key in the store, and after the request settle the claim with
//! its answer. The store calls run on the blocking pool, as tools do.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::envelope::ToolError;
use crate::store::Store;
use crate::store::idempotency::MAX_KEY_LEN;
use crate::store::idempotency::{Decision, KeyClaim, decide, is_final};
pub use crate::store::idempotency::{KeyScope, StoredAnswer};

/// What a keyed request does, once its key is claimed or found held.
pub enum Begun {
    /// The request is ours to run; settle the claim with its answer.
    Run(Claimed),
    /// The first answer, to send again.
    Replay(StoredAnswer),
    /// `idempotency_key_reused` or `idempotency_request_in_progress`.
    Refuse(ToolError),
}

/// A key this request holds until it is settled.
pub struct Claimed {
    store: Arc<dyn Store>,
    scope: KeyScope,
    owner: String,
}

/// Claims `scope` for a request with `fingerprint`. A claim left in progress
/// for longer than `stale_after` (its request died with its gateway) is taken
/// over. A store failure is answered as it is: nothing ran.
pub async fn begin(
    store: Arc<dyn Store>,
    scope: KeyScope,
    fingerprint: String,
    now: DateTime<Utc>,
    stale_after: Duration,
) -> Result<Begun, ToolError> {
    let claim = KeyClaim::new(scope, fingerprint, now, stale_after);
    let (store, claim, held) = blocking(move || {
        let held = store.idempotency_claim(&claim);
        (store, claim, held)
    })
    .await?;
    Ok(match decide(held?, &claim.fingerprint) {
        Decision::Run => Begun::Run(Claimed {
            store,
            scope: claim.scope,
            owner: claim.owner,
        }),
        Decision::Replay(answer) => Begun::Replay(answer),
        Decision::Refuse(error) => Begun::Refuse(error.into()),
    })
}

impl Claimed {
    /// Stores `answer` when it is final (see
    /// [`is_final`](crate::store::idempotency::is_final)); otherwise releases
    /// the key so that a retry runs again. A store that fails here is logged:
    /// the caller still gets its answer, and the claim is taken over once stale.
    pub async fn settle(self, answer: StoredAnswer, retryable: bool) {
        let Self {
            store,
            scope,
            owner,
        } = self;
        let keep = is_final(answer.status, retryable);
        let outcome = blocking(move || {
            let result = if keep {
                store.idempotency_finish(&scope, &owner, &answer)
            } else {
                store.idempotency_release(&scope, &owner)
            };
            (scope, result)
        })
        .await;
        match outcome {
            Ok((_, Ok(()))) => {}
            Ok((scope, Err(error))) => tracing::warn!(
                client = scope.client,
                route = scope.route,
                code = %ToolError::from(error).code,
                kept = keep,
                "an idempotency key could not be settled"
            ),
            Err(_) => tracing::error!("settling an idempotency key panicked"),
        }
    }

    /// Releases the key: the request ended without an answer (it panicked).
    pub async fn abandon(self) {
        let answer = StoredAnswer {
            status: 500,
            headers: Vec::new(),
            body: String::new(),
        };
        self.settle(answer, true).await;
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        tracing::error!(error = %e, "an idempotency key operation panicked");
        ToolError::internal()
    })
}

/// What a request asks for, as compared between a key's uses: a SHA-256 over
/// its target (method, path and query, or tool name) and its body, the body
/// as canonical JSON (keys sorted, no whitespace) when it is JSON, so that
/// key order and spacing do not make two retries differ.
pub fn fingerprint(target: &str, body: &[u8]) -> String {
    let mut hash = Sha256::new();
    hash.update(target.as_bytes());
    hash.update([0]);
    match serde_json::from_slice::<Value>(body) {
        Ok(value) => hash.update(canonical_json(&value).as_bytes()),
        Err(_) => hash.update(body),
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// `value` as compact JSON with every object's keys in sorted order.
pub fn canonical_json(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.clone(), sorted(v)))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// Checks a key: 1-255 printable ASCII characters (RFC 8941 string bytes).
pub fn parse_key(field: &str, key: &str) -> Result<String, ToolError> {
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return Err(ToolError::invalid_input(
            field,
            format!("must be 1-{MAX_KEY_LEN} characters long"),
        ));
    }
    if !key.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Err(ToolError::invalid_input(
            field,
            "must be printable ASCII characters only",
        ));
    }
    Ok(key.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::ErrorCode;

    #[test]
    fn key_order_and_spacing_do_not_change_the_fingerprint() {
        let a = fingerprint(
            "POST /t",
            br#"{"title": "x", "tags": ["a"], "n": {"b": 1, "a": 2}}"#,
        );
        let b = fingerprint(
            "POST /t",
            br#"{"n":{"a":2,"b":1},"tags":["a"],"title":"x"}"#,
        );
        assert_eq!(a, b);
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn another_body_or_target_changes_the_fingerprint() {
        let a = fingerprint("POST /t", br#"{"title": "x"}"#);
        assert_ne!(a, fingerprint("POST /t", br#"{"title": "y"}"#));
        assert_ne!(a, fingerprint("POST /u", br#"{"title": "x"}"#));
        assert_ne!(a, fingerprint("POST /t", br#"{"tags": ["a","b"]}"#));
        assert_ne!(
            fingerprint("POST /t", br#"{"tags": ["a","b"]}"#),
            fingerprint("POST /t", br#"{"tags": ["b","a"]}"#)
        );
    }

    #[test]
    fn a_body_that_is_not_json_is_hashed_as_it_is() {
        assert_eq!(fingerprint("t", b"{oops"), fingerprint("t", b"{oops"));
        assert_ne!(fingerprint("t", b"{oops"), fingerprint("t", b"{oops "));
    }

    #[test]
    fn keys_are_printable_ascii_of_1_to_255() {
        assert!(parse_key("k", "a").is_ok());
        assert!(parse_key("k", &"a".repeat(255)).is_ok());
        assert!(parse_key("k", "8e03978e-40d5-43e8-bc93-6894a57f9324 ~!").is_ok());
        for bad in ["", &"a".repeat(256), "tab\there", "é", "nul\0"] {
            let e = parse_key("Idempotency-Key", bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidInput);
            assert_eq!(e.details["field"], "Idempotency-Key");
        }
    }
}
