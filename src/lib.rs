//! cairn: a coordination hub for AI agents and the people who watch them.
//!
//! Data flows one way: a surface (`http`, `mcp`, `cli`) calls a tool
//! (`tools`), which uses the store (`store`); `vault` moves notes between
//! the store and Markdown folders; `envelope` is the wire contract
//! all surfaces share.

// stdout is MCP's protocol stream under `cairn mcp`: a stray `print!` would
// corrupt a frame, so the CLI writes it only through `cli::output`.
#![deny(clippy::print_stdout)]

pub mod auth;
pub mod cli;
pub mod envelope;
pub mod http;
pub mod mcp;
pub mod metrics;
pub mod store;
pub mod tools;
pub mod vault;
