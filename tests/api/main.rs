//! cairn's integration tests, compiled as one binary (one link, shared helpers).

mod error_registry;
mod tool_helpers;
mod tool_tasks;
