//! `Idempotency-Key` on REST `POST`s (the IETF httpapi draft): the first final
//! answer for a client's key on a route is stored and sent again, marked
//! `Idempotent-Replayed: true`, to every retry of the same request; the same
//! key for another request is `idempotency_key_reused` (422), and a retry while
//! the first still runs is `idempotency_request_in_progress` (409, retryable).
//! The request runs in a task of its own, so that its answer is stored even
//! when the client gives up or the time limit answers first.

use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header, response::Parts};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tower::{Service, ServiceExt};
use tracing::Instrument;

use crate::auth::Caller;
use crate::envelope::{ErrorCode, ToolError};
use crate::http::AppState;
use crate::http::semantics::extract::{payload_too_large, project_cairn, request_id_of};
use crate::http::semantics::response::ApiResponse;
use crate::store::idempotency::{IN_PROGRESS_RETRY_AFTER_MS, KEPT_HEADERS};
use crate::tools::idempotency::{self as keys, Begun, KeyScope, StoredAnswer};

/// The request header naming a key.
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
/// The response header of an answer sent again.
pub const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");
/// The header's name as a refusal names the field.
pub const FIELD: &str = "Idempotency-Key";

/// Whether a request may be one [`keyed_posts`] takes: a `POST` with a key.
/// Every other request goes straight to its route.
pub fn may_be_keyed(req: &Request) -> bool {
    req.method() == Method::POST && req.headers().contains_key(IDEMPOTENCY_KEY)
}

/// Inside the router (it needs the matched route; run by
/// [`crate::http::middleware::metrics::TagRoute`] on what [`may_be_keyed`] lets through) and
/// inside the token check (it needs the [`Caller`]): a keyed `POST` to an
/// API route is claimed, replayed or refused; every other request goes to
/// `route` untouched.
pub async fn keyed_posts<S>(state: &AppState, req: Request, route: S) -> Response
where
    S: Service<Request, Response = Response, Error = Infallible> + Send + 'static,
    S::Future: Send + 'static,
{
    if !may_be_keyed(&req) {
        return run(route, req).await;
    }
    let Some(template) = req
        .extensions()
        .get::<MatchedPath>()
        .filter(|m| m.as_str().starts_with("/api/"))
        .map(|m| format!("POST {}", m.as_str()))
    else {
        return run(route, req).await;
    };
    let request_id = request_id_of(req.headers());
    let refuse = |error: ToolError| ApiResponse::error(error, &request_id).into_response();
    let key = match read_key(req.headers()) {
        Ok(key) => key,
        Err(error) => return refuse(error),
    };
    let client = req
        .extensions()
        .get::<Caller>()
        .map_or_else(|| "anonymous".to_owned(), |c| c.name.to_string());
    let target = req
        .uri()
        .path_and_query()
        .map_or_else(|| req.uri().path().to_owned(), |p| p.as_str().to_owned());
    let (parts, body) = req.into_parts();
    let limit = state.settings.body_limit;
    let Ok(body) = axum::body::to_bytes(body, limit).await else {
        return refuse(payload_too_large(limit));
    };
    // A precondition is part of what the request asks: the same key with
    // another `If-Match` is another request (without one, as it always was).
    let condition = parts
        .headers
        .get_all(axum::http::header::IF_MATCH)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect::<Vec<_>>();
    let target = match condition.as_slice() {
        [] => format!("POST {target}"),
        lines => format!("POST {target}\nIf-Match: {}", lines.join(", ")),
    };
    let fingerprint = keys::fingerprint(&target, &body);
    let scope = KeyScope {
        client,
        route: template,
        key,
    };
    // The project's own store keeps its keys: a key used in one project is
    // unknown in another.
    let cairn = match project_cairn(&state.cairn, &parts.extensions).await {
        Ok(cairn) => cairn,
        Err(error) => return refuse(error),
    };
    let begun = keys::begin(
        cairn.store().clone(),
        scope,
        fingerprint,
        cairn.config().clock.now(),
        stale_after(state.settings.timeout),
    )
    .await;
    match begun {
        Err(error) | Ok(Begun::Refuse(error)) => {
            let in_progress = error.code == ErrorCode::IdempotencyRequestInProgress;
            let mut response = refuse(error);
            if in_progress {
                // Retryable, so `Retry-After` as on a 503, though the status is 409.
                let seconds = IN_PROGRESS_RETRY_AFTER_MS.div_ceil(1000).max(1);
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
            }
            response
        }
        Ok(Begun::Replay(answer)) => replay(answer),
        Ok(Begun::Run(claimed)) => {
            let req = Request::from_parts(parts, Body::from(body));
            let settled = async move {
                match tokio::spawn(run(route, req)).await {
                    Ok(response) => {
                        let (parts, body) = response.into_parts();
                        let body = axum::body::to_bytes(body, usize::MAX)
                            .await
                            .unwrap_or_default();
                        let (answer, retryable) = answer_of(&parts, &body);
                        claimed.settle(answer, retryable).await;
                        Ok((parts, body))
                    }
                    Err(panicked) => {
                        claimed.abandon().await;
                        Err(panicked)
                    }
                }
            };
            match tokio::spawn(settled.instrument(tracing::Span::current())).await {
                Ok(Ok((parts, body))) => Response::from_parts(parts, Body::from(body)),
                // The panic goes on to the panic layer, which answers it.
                Ok(Err(join)) | Err(join) if join.is_panic() => {
                    std::panic::resume_unwind(join.into_panic())
                }
                _ => refuse(ToolError::internal()),
            }
        }
    }
}

/// The route's answer to a request (a route never fails: its error is
/// `Infallible`).
async fn run<S>(route: S, req: Request) -> Response
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    match route.oneshot(req).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// How old a claim still in progress must be before another request takes
/// it over: twice the time limit, since a keyed request runs on after the
/// limit has answered its client (so that its answer is kept), and only a
/// request whose gateway died leaves a claim for longer.
fn stale_after(timeout: std::time::Duration) -> std::time::Duration {
    timeout.saturating_mul(2)
}

fn read_key(headers: &axum::http::HeaderMap) -> Result<String, ToolError> {
    let mut values = headers.get_all(IDEMPOTENCY_KEY).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return Err(ToolError::invalid_input(FIELD, "must be given once"));
    };
    let text = value
        .to_str()
        .map_err(|_| ToolError::invalid_input(FIELD, "must be printable ASCII characters only"))?;
    keys::parse_key(FIELD, text)
}

/// The answer as it is stored, and whether it said to retry.
fn answer_of(parts: &Parts, body: &Bytes) -> (StoredAnswer, bool) {
    let headers = KEPT_HEADERS
        .iter()
        .filter_map(|name| {
            let value = parts.headers.get(*name)?.to_str().ok()?;
            Some(((*name).to_owned(), value.to_owned()))
        })
        .collect();
    let retryable = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/retryable").and_then(Value::as_bool))
        .unwrap_or(false);
    let answer = StoredAnswer {
        status: parts.status.as_u16(),
        headers,
        body: String::from_utf8_lossy(body).into_owned(),
    };
    (answer, retryable)
}

fn replay(answer: StoredAnswer) -> Response {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, answer.body).into_response();
    let headers = response.headers_mut();
    for (name, value) in &answer.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::try_from(name.as_str()),
            HeaderValue::try_from(value.as_str()),
        ) {
            headers.insert(name, value);
        }
    }
    headers.insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
    response
}
