//! Error categories, the code registry and the error body.
//!
//! The registry (`ErrorCode::spec`) is the one table that decides a code's
//! category, HTTP status and retry default; every surface reads it from here.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What kind of failure happened; decides the recovery. Append-only.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCategory {
    Validation,
    Unauthorized,
    Permission,
    ModuleDisabled,
    NotFound,
    Conflict,
    TooLarge,
    RateLimited,
    Internal,
    Transient,
    Unavailable,
}

impl ErrorCategory {
    pub const ALL: [ErrorCategory; 11] = [
        Self::Validation,
        Self::Unauthorized,
        Self::Permission,
        Self::ModuleDisabled,
        Self::NotFound,
        Self::Conflict,
        Self::TooLarge,
        Self::RateLimited,
        Self::Internal,
        Self::Transient,
        Self::Unavailable,
    ];

    /// The HTTP status a failure of this category answers with.
    pub const fn http_status(self) -> u16 {
        match self {
            Self::Validation => 400,
            Self::Unauthorized => 401,
            Self::Permission | Self::ModuleDisabled => 403,
            Self::NotFound => 404,
            Self::Conflict => 409,
            Self::TooLarge => 413,
            Self::RateLimited => 429,
            Self::Internal => 500,
            Self::Transient | Self::Unavailable => 503,
        }
    }

    /// Whether the same call may succeed later without being changed.
    pub const fn retryable(self) -> bool {
        matches!(
            self,
            Self::RateLimited | Self::Transient | Self::Unavailable
        )
    }

    pub fn as_str(self) -> &'static str {
        ErrorCategory::ALL_NAMES[self as usize]
    }

    const ALL_NAMES: [&'static str; 11] = [
        "validation",
        "unauthorized",
        "permission",
        "module_disabled",
        "not_found",
        "conflict",
        "too_large",
        "rate_limited",
        "internal",
        "transient",
        "unavailable",
    ];
}

/// One row of the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeSpec {
    pub category: ErrorCategory,
    pub http_status: u16,
    pub retryable: bool,
}

macro_rules! error_codes {
    ($( $(#[doc = $doc:literal])* $variant:ident = $name:literal : $category:ident $(, status $status:literal)? ;)*) => {
        /// Stable machine code of a failure; branch on this, never on the message. Append-only.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize,
            utoipa::ToSchema, schemars::JsonSchema,
        )]
        #[serde(rename_all = "snake_case")]
        pub enum ErrorCode {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl ErrorCode {
            /// Every shipped code, in registry order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The registry: code -> category -> HTTP status -> retryable default.
            pub const fn spec(self) -> CodeSpec {
                match self {
                    $(ErrorCode::$variant => {
                        let category = ErrorCategory::$category;
                        #[allow(unused_mut, unused_assignments)]
                        let mut http_status = category.http_status();
                        $( http_status = $status; )?
                        CodeSpec { category, http_status, retryable: category.retryable() }
                    })*
                }
            }

            pub const fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $name,)* }
            }

            /// The registry entry's documentation, one string per line (as
            /// written above each code), for the generated error pages.
            pub const fn doc_lines(self) -> &'static [&'static str] {
                match self { $(ErrorCode::$variant => &[$($doc,)*],)* }
            }
        }
    };
}

error_codes! {
    /// Bad input: wrong type, out of range. Details: `field`, `reason`.
    InvalidInput = "invalid_input": Validation;
    /// A field the call does not know. Details: `field`; `suggestions` holds the nearest names.
    UnknownField = "unknown_field": Validation;
    /// A required field is absent. Details: `field`.
    MissingField = "missing_field": Validation;
    /// The body is not valid JSON. Details: `line`, `column` when known.
    InvalidJson = "invalid_json": Validation;
    /// The body has the wrong content type. Details: `expected`.
    UnsupportedMediaType = "unsupported_media_type": Validation, status 415;
    /// A pagination cursor that this server did not issue.
    InvalidCursor = "invalid_cursor": Validation;
    /// An id prefix under 6 characters with no exact match. Details: `min_length`.
    IdPrefixTooShort = "id_prefix_too_short": Validation;
    /// An id prefix that matches several entities. Details: `candidates` (up to 5 `{id, title}`).
    AmbiguousIdPrefix = "ambiguous_id_prefix": Validation;
    /// No or wrong credentials.
    Unauthorized = "unauthorized": Unauthorized;
    /// The store is read-only.
    ReadOnly = "read_only": Permission;
    /// The tool's module is switched off. Details: `module`.
    ModuleDisabled = "module_disabled": ModuleDisabled;
    /// The tool is not in the MCP session's tool set. Details: `tool`, `set`.
    ToolNotInSet = "tool_not_in_set": ModuleDisabled;
    /// No task with that id. Details: `id`.
    TaskNotFound = "task_not_found": NotFound;
    /// No note with that id. Details: `id`.
    NoteNotFound = "note_not_found": NotFound;
    /// No link with that id. Details: `id`.
    LinkNotFound = "link_not_found": NotFound;
    /// No task or note with that id (graph ids name either). Details: `id`.
    NodeNotFound = "node_not_found": NotFound;
    /// No route at that path. Details: `path`.
    RouteNotFound = "route_not_found": NotFound;
    /// The route exists but not for this method. Details: `allowed`.
    MethodNotAllowed = "method_not_allowed": NotFound, status 405;
    /// The entity changed since the caller read it. Details: `current_version`.
    VersionConflict = "version_conflict": Conflict;
    /// Another note already holds this source. Details: `duplicate_of` `{id, title, source_url}`.
    Duplicate = "duplicate": Conflict;
    /// The title's slug is taken. Details: `existing_id`.
    SlugCollision = "slug_collision": Conflict;
    /// Another agent holds a live claim. Details: `holder`, `expires_at`.
    ClaimHeld = "claim_held": Conflict;
    /// The caller does not hold the claim. Details: `holder` (or null).
    ClaimNotHeld = "claim_not_held": Conflict;
    /// The task's status does not allow this. Details: `status`, `allowed`.
    InvalidTransition = "invalid_transition": Conflict;
    /// Content over its limit. Details: `limit_bytes`.
    ContentTooLarge = "content_too_large": TooLarge;
    /// Request body over its limit. Details: `limit_bytes`.
    PayloadTooLarge = "payload_too_large": TooLarge;
    /// Too many requests.
    RateLimited = "rate_limited": RateLimited;
    /// The store is busy or locked; retry shortly.
    StoreBusy = "store_busy": Transient;
    /// The request took longer than its time limit.
    Timeout = "timeout": Transient;
    /// The store cannot be opened or is gone.
    StoreUnavailable = "store_unavailable": Unavailable;
    /// The full-text index is missing or off.
    SearchUnavailable = "search_unavailable": Unavailable;
    /// A bug; the log holds the cause under the request id.
    InternalError = "internal_error": Internal;
    /// A change-feed cursor older than the retained history: reload, then
    /// follow from the `next_cursor` of a fresh read. Details: `oldest_cursor`.
    CursorExpired = "cursor_expired": Validation;
    /// The request named a host this server does not answer to (DNS-rebinding guard). Details: `host`.
    HostNotAllowed = "host_not_allowed": Permission;
    /// A browser origin that is neither the server's own nor allowed by `--cors-origin`. Details: `origin`.
    OriginNotAllowed = "origin_not_allowed": Permission;
    /// The cairn server a CLI was pointed at (`--url`) cannot be reached, or
    /// does not answer as cairn does.
    ServerUnavailable = "server_unavailable": Unavailable;
    /// A restore into a store that already holds data (without merge); nothing
    /// was written. Details: `tasks`, `notes`, `links` (what it holds).
    StoreNotEmpty = "store_not_empty": Conflict;
    /// The request's headers are over the gateway's limit (HTTP 431). Details: `limit_bytes`.
    HeadersTooLarge = "headers_too_large": TooLarge, status 431;
    /// The caller's token lacks the scope this needs (a `read` token that
    /// writes, a non-admin token on `/metrics`). Details: `token` (its name),
    /// `scope` (what it has), `required_scope`.
    PermissionDenied = "permission_denied": Permission;
    /// An `Idempotency-Key` (MCP: `idempotency_key`) already used by this
    /// client on this route for a different request (HTTP 422); nothing was run.
    IdempotencyKeyReused = "idempotency_key_reused": Validation, status 422;
    /// The first request with this idempotency key is still running (HTTP
    /// 409); retry after `retry_after_ms` to get its answer.
    IdempotencyRequestInProgress = "idempotency_request_in_progress": Transient, status 409;
    /// An `If-Match` precondition failed: the entity changed since the tag
    /// was read (HTTP 412); nothing was written (on a read, nothing sent).
    /// Details: `current_version`, `current_etag`.
    PreconditionFailed = "precondition_failed": Conflict, status 412;
    /// No project with that key, or one the caller's token may not use (the
    /// two are told apart to nobody). Details: `project`.
    ProjectNotFound = "project_not_found": NotFound;
    /// The project is archived: it answers reads and refuses every write.
    /// Details: `project`.
    ProjectArchived = "project_archived": Permission;
    /// A project with this key exists already. Details: `project`.
    ProjectExists = "project_exists": Conflict;
    /// A `depends_on` or `blocks` edge that would close a cycle of tasks
    /// waiting on each other; nothing was written. Details: `cycle` (the
    /// ids on it, in order: each waits for the next, the last for the first).
    DependencyCycle = "dependency_cycle": Conflict;
}

impl ErrorCode {
    /// The code named `name`, if the registry has it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.as_str() == name)
    }

    /// The registry entry's documentation as one paragraph.
    pub fn description(self) -> String {
        self.doc_lines()
            .iter()
            .map(|line| line.trim())
            .collect::<Vec<_>>()
            .join(" ")
    }

    pub const fn category(self) -> ErrorCategory {
        self.spec().category
    }

    pub const fn http_status(self) -> u16 {
        self.spec().http_status
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `error` object of a failure envelope.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema, schemars::JsonSchema,
)]
pub struct ErrorBody {
    /// What kind of failure; decides the recovery.
    pub category: ErrorCategory,
    /// Stable machine code; branch on this, never on `message`.
    pub code: ErrorCode,
    /// One human sentence; may be reworded in any release.
    pub message: String,
    /// True when the same call may succeed later without changing it.
    pub retryable: bool,
    /// A hint of how long to wait before retrying, when the server knows one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// Correlation id; the log line has the details.
    pub request_id: String,
    /// Code-specific fields a caller can act on; `{}` when none.
    #[schema(value_type = Object)]
    #[schemars(with = "Map<String, Value>")]
    pub details: Map<String, Value>,
    /// Next steps a caller can take; `[]` when none.
    pub suggestions: Vec<String>,
}

/// A failure as a tool (or a surface) raises it, before the envelope layer
/// gives it a request id. Category, status and retry flag come from the registry.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    /// Boxed: most errors carry few details, and a small `ToolError` keeps
    /// every `Result` that can fail with one small too.
    pub details: Box<Map<String, Value>>,
    pub suggestions: Vec<String>,
    pub retry_after_ms: Option<u64>,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let retry_after_ms = code.spec().retryable.then_some(DEFAULT_RETRY_AFTER_MS);
        Self {
            code,
            message: message.into(),
            details: Box::default(),
            suggestions: Vec::new(),
            retry_after_ms,
        }
    }

    /// Adds one entry to `details`.
    pub fn detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    pub fn suggest(mut self, suggestions: impl IntoIterator<Item = String>) -> Self {
        self.suggestions.extend(suggestions);
        self
    }

    pub fn retry_after(mut self, ms: u64) -> Self {
        self.retry_after_ms = Some(ms);
        self
    }

    /// The catch-all for bugs: says only that, never the cause (which goes to the log).
    pub fn internal() -> Self {
        Self::new(
            ErrorCode::InternalError,
            "Internal error; the server log has the cause under this request id.",
        )
    }

    /// `invalid_input` for `field`; a reason that reads as a predicate
    /// ("must ...", "only applies ...") becomes the sentence "`field` must ...".
    pub fn invalid_input(field: &str, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        let sentence = reason.trim_end_matches('.');
        let message = if reason.starts_with("must ") || reason.starts_with("only ") {
            format!("`{field}` {sentence}.")
        } else {
            format!("Invalid `{field}`: {sentence}.")
        };
        Self::invalid_field(field, message, reason)
    }

    /// `invalid_input` with a message of its own (one plain sentence); the
    /// `reason` in details may stay technical.
    pub fn invalid_field(
        field: &str,
        message: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Self::new(ErrorCode::InvalidInput, message)
            .detail("field", field)
            .detail("reason", reason.into())
    }

    pub fn category(&self) -> ErrorCategory {
        self.code.category()
    }

    pub fn http_status(&self) -> u16 {
        self.code.http_status()
    }

    /// The wire body, stamped with the request id.
    pub fn into_body(self, request_id: &str) -> ErrorBody {
        let spec = self.code.spec();
        ErrorBody {
            category: spec.category,
            code: self.code,
            message: self.message,
            retryable: spec.retryable,
            retry_after_ms: self.retry_after_ms,
            request_id: request_id.to_owned(),
            details: *self.details,
            suggestions: self.suggestions,
        }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

/// The retry hint given with transient and unavailable failures when nothing better is known.
pub const DEFAULT_RETRY_AFTER_MS: u64 = 1000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_serde() {
        for code in ErrorCode::ALL {
            assert_eq!(
                serde_json::to_value(code).unwrap(),
                Value::String(code.as_str().into())
            );
        }
        for category in ErrorCategory::ALL {
            assert_eq!(
                serde_json::to_value(category).unwrap(),
                Value::String(category.as_str().into())
            );
        }
    }
}
