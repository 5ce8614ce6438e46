//! cairn's integration tests, compiled as one binary (one link, shared helpers).

mod cli;
mod error_registry;
mod gateway;
mod http_helpers;
mod mcp;
mod openapi;
