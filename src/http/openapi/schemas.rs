//! The two shapes every REST answer has, as OpenAPI schemas: a success
//! (`{data, meta}`) and a failure (`{error}`).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::envelope::{ErrorBody, Meta};

/// A successful REST answer: the tool's data and the envelope meta.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Success<T> {
    pub data: T,
    pub meta: Meta,
}

/// Every failed REST answer, whatever the route: `{"error": ErrorBody}`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ErrorEnvelope {
    pub error: ErrorBody,
}
