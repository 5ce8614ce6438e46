//! `health`: what this deployment is and whether its store works.

use serde::{Deserialize, Serialize};

use super::Ctx;
use crate::envelope::ToolError;

#[derive(Debug, Default, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthInput {}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct HealthReport {
    /// `ok`, `degraded` or `unavailable`.
    pub status: String,
    pub version: String,
    pub store: String,
}

pub fn health(ctx: &Ctx, _input: HealthInput) -> Result<HealthReport, ToolError> {
    Ok(HealthReport {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        store: ctx.store.kind().into(),
    })
}
