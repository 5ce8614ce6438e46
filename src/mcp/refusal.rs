//! Refusals made for MCP before a request reaches the server (the
//! gateway's rate limit), and scope refusals inside it, in the shape an MCP
//! client reads: a refused `tools/call` is a tool result with `isError` and
//! the failure envelope (an agent reads `retry_after_ms` there), any other
//! request a JSON-RPC error whose `data` is the envelope.

use rmcp::model::{CallToolResult, ContentBlock, ErrorCode as RpcErrorCode};
use serde_json::{Value, json};

use super::Failure;
use crate::auth::{Caller, Scope};
use crate::envelope::{self, Envelope, Form, Meta, Tier, ToolError};
use crate::tools::{REGISTRY, ToolDef, registry};

/// The JSON-RPC response refusing `message` (one request as sent) with
/// `error`; `None` when `message` is not a request (a notification, a
/// response), which gets no JSON-RPC answer.
pub fn refuse_request(message: &Value, error: ToolError) -> Option<Value> {
    let id = message.get("id").filter(|id| !id.is_null())?.clone();
    let method = message.get("method")?.as_str()?;
    if method == "tools/call" {
        let tool = message
            .pointer("/params/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let result = refused_call(tool, error);
        return Some(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }
    let rpc = Failure::new(method, error).into_rpc(RpcErrorCode::INTERNAL_ERROR);
    Some(json!({"jsonrpc": "2.0", "id": id, "error": rpc}))
}

/// A tool result with `isError` carrying the failure envelope of `error`.
pub(crate) fn refused_call(tool: &str, error: ToolError) -> CallToolResult {
    let layer = registry::find(tool).map_or("", |def| def.module.layer());
    let meta = Meta::new(tool, layer, &envelope::new_request_id());
    let text = envelope::render(Envelope::failure(error, meta), Tier::Agent, Form::Envelope);
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// Whether `caller` may call `def`; no caller (stdio, a local process) may call every tool.
pub(crate) fn scope_check(caller: Option<&Caller>, def: &ToolDef) -> Result<(), ToolError> {
    caller.map_or(Ok(()), |c| c.check(Scope::for_effect(def.effect)))
}

/// The registry entries `caller` may call, in registry order.
pub(crate) fn callable(caller: Option<&Caller>) -> impl Iterator<Item = (usize, &'static ToolDef)> {
    REGISTRY
        .iter()
        .enumerate()
        .filter(move |(_, def)| scope_check(caller, def).is_ok())
}
