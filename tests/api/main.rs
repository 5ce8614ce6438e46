//! cairn's integration tests, compiled as one binary (one link, shared helpers).

mod error_registry;
mod gateway;
mod http_helpers;
mod openapi;
