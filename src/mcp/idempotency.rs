//! `idempotency_key` on every MCP tool that writes: the same meaning as REST's
//! `Idempotency-Key` (see `http::idempotency`), agents retry too. The client
//! is the session's caller (the token's name over HTTP, `anonymous` on stdio),
//! the route the tool's name, and the stored answer the tool's envelope.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::JsonObject;
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::envelope::{self, Envelope, Form, Tier, ToolError};
use crate::tools::idempotency::{self as keys, Begun, Claimed, KeyScope, StoredAnswer};
use crate::tools::{Cairn, Effect, ToolDef};

/// The argument naming a key.
pub(super) const ARGUMENT: &str = "idempotency_key";

/// What the tool manual (docs/tools.md) says of keys.
pub(super) const AGENTS_MD: &str = "## Safe retries: idempotency keys\n\n\
Every tool that writes or deletes takes an optional `idempotency_key` (1-255 printable \
ASCII characters; over REST, the `Idempotency-Key` header on every `POST`). Send a fresh \
key with each new write and the same key, with the same arguments, when you retry it: \
the first final answer (a success or a refusal; not a retryable error) is kept for 24 \
hours and returned again, so a retried `task_create` never makes a second task. The same \
key with other arguments is `idempotency_key_reused`; while the first call still runs, \
`idempotency_request_in_progress` (retryable: wait `retry_after_ms`). Keys are per client \
(the token's name) and per tool or route.\n\n";

/// A claim left in progress this long belonged to a call that died (MCP
/// calls have no time limit of their own; this is twice the gateway's default).
const STALE_AFTER: Duration = Duration::from_secs(60);

/// Whether `def` takes a key: every tool that writes or deletes.
fn takes_key(def: &ToolDef) -> bool {
    def.effect != Effect::Reads
}

/// Adds `idempotency_key` to a writing tool's input schema (tools/list).
pub(super) fn declare(def: &ToolDef, input: &mut JsonObject) {
    if !takes_key(def) {
        return;
    }
    let properties = input.entry("properties").or_insert_with(|| json!({}));
    if let Some(properties) = properties.as_object_mut() {
        properties.insert(
            ARGUMENT.into(),
            json!({
                "description": "Makes retries safe: the same key and arguments get the first answer again (24 h); e.g. a UUID.",
                "type": "string",
                "minLength": 1,
                "maxLength": crate::store::idempotency::MAX_KEY_LEN,
                "pattern": "^[\\x20-\\x7e]+$",
            }),
        );
    }
}

/// What a call's key asks for.
pub(super) enum Keyed {
    /// No key (or a tool that takes none): just run.
    Unkeyed,
    /// The key is this call's: run, then [`settle`].
    Run(Claimed),
    /// Answer with this envelope (`ok` for a success) without running the
    /// tool.
    Answer { ok: bool, text: String },
}

/// Takes the key out of `args` (so the tool never sees it) and claims it.
pub(super) async fn begin(
    cairn: &Cairn,
    def: &ToolDef,
    args: &mut JsonObject,
    request_id: &str,
    context: &RequestContext<RoleServer>,
) -> Keyed {
    if !takes_key(def) {
        return Keyed::Unkeyed;
    }
    let key = match args.remove(ARGUMENT) {
        None | Some(Value::Null) => return Keyed::Unkeyed,
        Some(key) => key,
    };
    let refuse = |error: ToolError| {
        let meta = crate::envelope::Meta::new(def.name, def.module.layer(), request_id);
        let failure = Envelope::failure(error, meta);
        let text = envelope::render(failure, Tier::Agent, Form::Envelope);
        Keyed::Answer { ok: false, text }
    };
    let key = match key {
        Value::String(key) => match keys::parse_key(ARGUMENT, &key) {
            Ok(key) => key,
            Err(error) => return refuse(error),
        },
        _ => return refuse(ToolError::invalid_input(ARGUMENT, "must be a string")),
    };
    let client = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
        .map_or_else(|| "anonymous".to_owned(), |c| c.name.to_string());
    let scope = KeyScope {
        client,
        route: format!("mcp {}", def.name),
        key,
    };
    let body = Value::Object(args.clone()).to_string();
    let fingerprint = keys::fingerprint(def.name, body.as_bytes());
    let now = cairn.config().clock.now();
    match keys::begin(cairn.store().clone(), scope, fingerprint, now, STALE_AFTER).await {
        Ok(Begun::Run(claimed)) => Keyed::Run(claimed),
        Ok(Begun::Replay(answer)) => {
            // A stored envelope, sent again as it was.
            Keyed::Answer {
                ok: answer.status < 400,
                text: answer.body,
            }
        }
        Ok(Begun::Refuse(error)) | Err(error) => refuse(error),
    }
}

/// What [`settle`] needs of a call's envelope, read before it is rendered.
pub(super) fn outcome_of(envelope: &Envelope) -> (u16, bool) {
    let retryable = envelope.outcome.as_ref().is_err_and(|e| e.retryable);
    (envelope.http_status(), retryable)
}

/// Stores the call's envelope (`text`, as sent) when it is final.
pub(super) async fn settle(claimed: Claimed, (status, retryable): (u16, bool), text: &str) {
    let answer = StoredAnswer {
        status,
        headers: Vec::new(),
        body: text.to_owned(),
    };
    claimed.settle(answer, retryable).await;
}
