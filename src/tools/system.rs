//! `health`: what this deployment is and whether its store works. It never
//! fails: each check reports its own outcome and `status` sums them up.

use serde::{Deserialize, Serialize};

use super::Ctx;
use crate::envelope::{ErrorCode, ToolError};
use crate::store::Counts;

#[derive(Debug, Default, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthInput {}

/// Outcome of one check.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Ok,
    Failed,
}

/// Overall health.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    /// Every check passed.
    Ok,
    /// The store reads but something else failed (writes or search).
    Degraded,
    /// The store cannot be read.
    Unavailable,
}

/// One check: `store_read`, `store_write` or `search`.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct HealthCheck {
    pub name: String,
    pub status: CheckStatus,
    /// The error code when it failed (e.g. `read_only`, `store_busy`).
    pub code: Option<String>,
    /// One sentence when it failed.
    pub message: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct HealthReport {
    /// `ok`, `degraded` or `unavailable`.
    pub status: HealthStatus,
    /// cairn's version.
    pub version: String,
    /// `sqlite` or `postgres`.
    pub store: String,
    /// Applied schema version (null when the store cannot be read).
    pub schema_version: Option<i64>,
    /// Row counts (null when the store cannot be read).
    pub counts: Option<Counts>,
    /// Whether full-text search answers.
    pub search: bool,
    /// Every check, in order.
    pub checks: Vec<HealthCheck>,
}

fn check(name: &str, result: Result<(), ToolError>) -> HealthCheck {
    match result {
        Ok(()) => HealthCheck {
            name: name.to_owned(),
            status: CheckStatus::Ok,
            code: None,
            message: None,
        },
        Err(e) => HealthCheck {
            name: name.to_owned(),
            status: CheckStatus::Failed,
            code: Some(e.code.as_str().to_owned()),
            message: Some(e.message),
        },
    }
}

pub fn health(ctx: &Ctx<'_>, _input: HealthInput) -> Result<HealthReport, ToolError> {
    let schema_version = ctx.store.schema_version();
    let counts = ctx.store.counts();
    let read = match (&schema_version, &counts) {
        (Err(e), _) | (_, Err(e)) => Err(ToolError::from(e.clone())),
        _ => Ok(()),
    };
    let readable = read.is_ok();
    // A store that cannot be reached cannot take writes or searches either;
    // asking would only make the report wait for two more time-outs.
    let unreachable = read
        .as_ref()
        .err()
        .filter(|e| e.code == ErrorCode::StoreUnavailable)
        .cloned();
    let probe = |f: &dyn Fn() -> Result<(), ToolError>| match &unreachable {
        Some(e) => Err(e.clone()),
        None => f(),
    };
    let checks = vec![
        check("store_read", read),
        check("store_write", probe(&|| Ok(ctx.store.probe_write()?))),
        check("search", probe(&|| Ok(ctx.store.probe_search()?))),
    ];
    let search = checks[2].status == CheckStatus::Ok;
    let status = if !readable {
        HealthStatus::Unavailable
    } else if checks.iter().all(|c| c.status == CheckStatus::Ok) {
        HealthStatus::Ok
    } else {
        HealthStatus::Degraded
    };
    Ok(HealthReport {
        status,
        version: env!("CARGO_PKG_VERSION").into(),
        store: ctx.store.kind().into(),
        schema_version: schema_version.ok(),
        counts: counts.ok(),
        search,
        checks,
    })
}
