//! cairn's integration tests, compiled as one binary (one link, shared helpers).

mod budget;
mod budget_cli;
mod budget_props;
mod cli;
mod cli_flags;
mod cli_output;
mod cli_remote;
mod cli_transfer;
mod cli_vault;
mod crash;
mod error_registry;
mod gateway;
mod host_guard;
mod hostile_http;
mod http_helpers;
mod logs;
#[macro_use]
mod mcp;
mod mcp_budget;
// After `mcp`, whose `on_both_transports!` it uses.
mod idempotency;
mod mcp_more;
mod metrics;
mod openapi;
mod openapi_truth;
mod pg_helpers;
mod process_helpers;
mod rest;
mod scale_out;
mod spa;
mod sse;
mod store_outage;
mod store_postgres;
mod tcp_proxy;
mod tool_changes;
mod tool_concurrency;
mod tool_faults;
mod tool_graph;
mod tool_helpers;
mod tool_hostile;
mod tool_idempotency;
mod tool_notes;
mod tool_search;
mod tool_system;
mod tool_tasks;
