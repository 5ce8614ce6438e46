//! The wire contract shared by every surface: the envelope and its meta, the
//! error registry (`error`) and the budget trimmer (`budget`).
//!
//! A surface builds an [`Envelope`] from a tool's result and renders it with its
//! [`Tier`]; nothing else decides sizes, categories or statuses.

pub mod budget;
pub mod error;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use budget::{
    Form, Layout, Prerendered, Tier, digest, estimate_tokens, render, render_printed,
    render_structured, rest_data,
};
pub use error::{ErrorBody, ErrorCategory, ErrorCode, ToolError};

/// `meta.api_version`: bumped only for a breaking change of the contract.
pub const API_VERSION: &str = "1";

/// Meta keys only the envelope layer may set; a tool's values for them are dropped.
pub const RESERVED_META_KEYS: [&str; 7] = [
    "tokens_estimated",
    "truncated",
    "trimmed",
    "envelope_unshrinkable",
    "api_version",
    "request_id",
    "runtime_ms",
];

/// Set by the envelope layer on every answer.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema, schemars::JsonSchema,
)]
pub struct Meta {
    /// `"1"`; bumped only for a breaking change of the contract.
    pub api_version: String,
    /// The tool that answered, e.g. `task_get`.
    pub tool: String,
    /// `tasks`, `notes`, `graph`, `search` or `health`.
    pub layer: String,
    /// Correlation id; the same value is in the log line and the `x-request-id` header.
    pub request_id: String,
    /// Time spent in the tool, in milliseconds.
    pub runtime_ms: f64,
    /// Non-fatal remarks; `[]` when none.
    pub warnings: Vec<String>,
    /// Token estimate of the emitted envelope.
    pub tokens_estimated: u64,
    /// True iff the budget removed or shortened something.
    pub truncated: bool,
    /// One entry per cut.
    pub trimmed: Vec<Trim>,
    /// Present (true) only when the envelope exceeds the budget after every rung.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub envelope_unshrinkable: Option<bool>,
    /// Keys a tool documents and contributes (never a reserved key).
    #[serde(flatten)]
    #[schema(ignore)]
    #[schemars(skip)]
    pub extra: Map<String, Value>,
}

impl Meta {
    /// A fresh meta for one answer of `tool`; budget fields are filled at render time.
    pub fn new(tool: &str, layer: &str, request_id: &str) -> Self {
        Self {
            api_version: API_VERSION.to_owned(),
            tool: tool.to_owned(),
            layer: layer.to_owned(),
            request_id: request_id.to_owned(),
            runtime_ms: 0.0,
            warnings: Vec::new(),
            tokens_estimated: 0,
            truncated: false,
            trimmed: Vec::new(),
            envelope_unshrinkable: None,
            extra: Map::new(),
        }
    }

    /// Adds a tool-contributed key; reserved keys and the fixed fields are ignored.
    pub fn contribute(&mut self, key: &str, value: Value) {
        match key {
            "layer" => {
                if let Value::String(layer) = value {
                    self.layer = layer;
                }
            }
            "warnings" => {
                if let Value::Array(items) = value {
                    self.warnings
                        .extend(items.into_iter().filter_map(|w| match w {
                            Value::String(s) => Some(s),
                            _ => None,
                        }));
                }
            }
            "tool" => {}
            k if RESERVED_META_KEYS.contains(&k) => {}
            k => {
                self.extra.insert(k.to_owned(), value);
            }
        }
    }
}

/// One cut the budget made.
#[derive(
    Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema, schemars::JsonSchema,
)]
pub struct Trim {
    /// JSON Pointer into `data` of what was cut.
    pub path: String,
    pub kind: TrimKind,
    /// Length the tool produced (items, or characters for a string).
    pub from: usize,
    /// Length emitted.
    pub to: usize,
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TrimKind {
    List,
    String,
    Subgraph,
}

/// A tool's answer before rendering: success data or an error, with its meta.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    pub outcome: Result<Value, ErrorBody>,
    pub meta: Meta,
}

impl Envelope {
    pub fn success(data: Value, meta: Meta) -> Self {
        Self {
            outcome: Ok(data),
            meta,
        }
    }

    /// A failure; the error is stamped with the meta's request id.
    pub fn failure(error: ToolError, meta: Meta) -> Self {
        let body = error.into_body(&meta.request_id);
        Self {
            outcome: Err(body),
            meta,
        }
    }

    pub fn is_ok(&self) -> bool {
        self.outcome.is_ok()
    }

    /// The HTTP status this envelope unwraps to (200 on success).
    pub fn http_status(&self) -> u16 {
        match &self.outcome {
            Ok(_) => 200,
            Err(e) => e.code.http_status(),
        }
    }
}

/// A fresh correlation id for a request that did not bring one: a random
/// UUID's 32 lowercase hex digits, written without `core::fmt`.
pub fn new_request_id() -> String {
    let mut text = uuid::Uuid::encode_buffer();
    uuid::Uuid::new_v4()
        .simple()
        .encode_lower(&mut text)
        .to_owned()
}
