//! cairn: a coordination hub for AI agents and the people who watch them.
//!
//! Data flows one way: a surface (`http`, `mcp`, `cli`) calls a tool
//! (`tools`), which uses the store (`store`); `vault` moves notes between
//! the store and Markdown folders; `envelope` is the wire contract
//! all surfaces share.

// stdout is MCP's protocol stream under `cairn mcp`: a stray `print!` would
// corrupt a frame, so the CLI writes it only through `cli::output`.
#![deny(clippy::print_stdout)]

// No module has a reason for `unsafe` but the store's, whose SQLite backend
// registers a C ranking function (`store::sqlite::rank`); each is forbidden
// it here, where a new module joins the list. The crate denies it besides
// (`[lints]` in Cargo.toml).

#[forbid(unsafe_code)]
pub mod auth;
#[forbid(unsafe_code)]
pub mod cli;
#[forbid(unsafe_code)]
pub mod envelope;
#[forbid(unsafe_code)]
pub mod http;
#[forbid(unsafe_code)]
pub mod mcp;
#[forbid(unsafe_code)]
pub mod metrics;
pub mod store;
#[forbid(unsafe_code)]
pub mod tools;
#[forbid(unsafe_code)]
pub mod vault;
