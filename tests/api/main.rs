//! cairn's integration tests, compiled as one binary (one link, shared helpers).

mod budget;
mod budget_cli;
mod budget_props;
mod error_registry;
