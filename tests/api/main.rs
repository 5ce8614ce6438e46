//! cairn's integration tests, compiled as one binary (one link, shared helpers).

mod budget;
mod budget_cli;
mod budget_props;
mod cli;
mod cli_flags;
mod error_registry;
mod gateway;
mod http_helpers;
mod mcp;
mod mcp_budget;
mod openapi;
mod pg_helpers;
mod process_helpers;
mod rest;
mod scale_out;
mod store_outage;
mod store_postgres;
mod tcp_proxy;
mod tool_concurrency;
mod tool_faults;
mod tool_graph;
mod tool_helpers;
mod tool_notes;
mod tool_search;
mod tool_system;
mod tool_tasks;
