//! The session's warnings and errors as `notifications/message`: from the
//! level `logging/setLevel` chose (2025 revisions), or, on 2026-07-28, which
//! dropped setLevel, for the requests whose `_meta` carries
//! `io.modelcontextprotocol/logLevel`. What a client is sent is what
//! the envelope already shows it: tool, request id, code and message, never
//! more, so nothing reaches a log notification that an answer would not carry.
//!
//! Levels: a failure the server caused (`internal`) is `error`; the store
//! being busy or away (`transient`, `unavailable`) and a tool's
//! `meta.warnings` are `warning`; a call the caller must fix is `notice`.
//! Until a 2025 client sets a level, `warning` and above are sent.
#![allow(deprecated)] // logging is deprecated in rmcp because 2026-07-28 dropped it

use std::sync::Mutex;

use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, ProtocolVersion};
use rmcp::service::RequestContext;
use serde_json::json;

use crate::envelope::{Envelope, ErrorCategory};

const LOGGER: &str = "cairn";

/// Whether `version` no longer has `logging/setLevel` (2026-07-28 and later).
pub(super) fn dropped_in(version: Option<&ProtocolVersion>) -> bool {
    version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The minimum level this session is sent.
pub(super) struct SessionLog {
    minimum: Mutex<LoggingLevel>,
}

impl Default for SessionLog {
    fn default() -> Self {
        Self {
            minimum: Mutex::new(LoggingLevel::Warning),
        }
    }
}

impl SessionLog {
    pub(super) fn set_level(&self, level: LoggingLevel) {
        *self.minimum.lock().unwrap_or_else(|e| e.into_inner()) = level;
    }

    /// Sends what `envelope` has to report to the session, if anything.
    pub(super) async fn report(&self, context: &RequestContext<RoleServer>, envelope: &Envelope) {
        // 2026-07-28 dropped setLevel: a request opts in through its `_meta`.
        let minimum = if dropped_in(context.protocol_version().as_ref()) {
            match context.meta.log_level() {
                Some(level) => level,
                None => return,
            }
        } else {
            *self.minimum.lock().unwrap_or_else(|e| e.into_inner())
        };
        let meta = &envelope.meta;
        let mut messages = Vec::new();
        for warning in &meta.warnings {
            messages.push((
                LoggingLevel::Warning,
                json!({"tool": meta.tool, "request_id": meta.request_id, "warning": warning}),
            ));
        }
        if let Err(error) = &envelope.outcome {
            let level = match error.category {
                ErrorCategory::Internal => LoggingLevel::Error,
                ErrorCategory::Transient | ErrorCategory::Unavailable => LoggingLevel::Warning,
                _ => LoggingLevel::Notice,
            };
            messages.push((
                level,
                json!({
                    "tool": meta.tool,
                    "request_id": meta.request_id,
                    "code": error.code,
                    "message": error.message,
                }),
            ));
        }
        for (level, data) in messages {
            if rank(level) >= rank(minimum) {
                let param = LoggingMessageNotificationParam::new(level, data).with_logger(LOGGER);
                // A client that has gone away is not the caller's problem.
                let _ = context.peer.notify_logging_message(param).await;
            }
        }
    }
}
