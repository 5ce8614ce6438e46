//! Who is calling: the client a request is made for, and what it may do.
//! The HTTP token check decides it and puts it in the request's extensions,
//! where rate limits, idempotency keys and the scope checks read it.
//! [`tokens`] holds the bearer tokens a server accepts.

pub mod tokens;

use std::sync::Arc;

use crate::envelope::{ErrorCode, ToolError};
use crate::tools::Effect;

/// What a token allows: reading, writing, or everything (the admin routes
/// included). Ordered: each scope allows what the ones before it do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    Read,
    Write,
    Admin,
}

impl Scope {
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Admin => "admin",
        }
    }

    /// The scope a tool call needs: reading tools need `read`, the others `write`.
    pub const fn for_effect(effect: Effect) -> Self {
        match effect {
            Effect::Reads => Scope::Read,
            Effect::Writes | Effect::Deletes => Scope::Write,
        }
    }
}

impl std::str::FromStr for Scope {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read" => Ok(Scope::Read),
            "write" => Ok(Scope::Write),
            "admin" => Ok(Scope::Admin),
            other => Err(format!("`{other}` is not a scope (read, write or admin)")),
        }
    }
}

/// The client behind a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The token's name (never its secret), or `anonymous` when no token is
    /// configured.
    pub name: Arc<str>,
    pub scope: Scope,
}

impl Caller {
    /// The caller when the server requires no token: it may do everything.
    pub fn anonymous() -> Self {
        // One name for every anonymous request, not an allocation each.
        static ANONYMOUS: std::sync::LazyLock<Arc<str>> =
            std::sync::LazyLock::new(|| Arc::from("anonymous"));
        Self {
            name: ANONYMOUS.clone(),
            scope: Scope::Admin,
        }
    }

    /// The caller holding `--token`, the one admin token.
    pub fn default_token() -> Self {
        Self {
            name: Arc::from("default"),
            scope: Scope::Admin,
        }
    }

    /// Whether this caller came without a token (no token is configured).
    pub fn is_anonymous(&self) -> bool {
        &*self.name == "anonymous"
    }

    /// Whether this caller may do what `needed` requires.
    pub fn allows(&self, needed: Scope) -> bool {
        self.scope >= needed
    }

    /// `permission_denied` when this caller may not do what `needed`
    /// requires; `what` names it for the message ("write", "the metrics").
    pub fn check(&self, needed: Scope) -> Result<(), ToolError> {
        if self.allows(needed) {
            return Ok(());
        }
        Err(ToolError::new(
            ErrorCode::PermissionDenied,
            format!(
                "The token `{}` has the `{}` scope; this needs `{}`: use a token with that scope.",
                self.name,
                self.scope.as_str(),
                needed.as_str()
            ),
        )
        .detail("token", &*self.name)
        .detail("scope", self.scope.as_str())
        .detail("required_scope", needed.as_str()))
    }
}
