//! cairn: a coordination hub for AI agents and the people who watch them.
//!
//! Data flows one way: a surface (`http`, `mcp`, `cli`) calls a tool
//! (`tools`), which uses the store (`store`); `envelope` is the wire contract
//! all surfaces share.

// ToolError carries details for the caller; it is returned once per call, so
// its size costs nothing measurable and boxing it would only add noise.
#![allow(clippy::result_large_err)]

pub mod cli;
pub mod envelope;
pub mod http;
pub mod mcp;
pub mod store;
pub mod tools;
