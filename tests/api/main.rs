//! cairn's integration tests, compiled as one binary (one link, shared helpers).

mod budget;
mod budget_cli;
mod budget_props;
mod cli;
mod cli_flags;
mod error_registry;
mod gateway;
mod host_guard;
mod http_helpers;
mod mcp;
mod mcp_budget;
mod openapi;
mod rest;
mod tool_concurrency;
mod tool_faults;
mod tool_graph;
mod tool_helpers;
mod tool_notes;
mod tool_search;
mod tool_system;
mod tool_tasks;
