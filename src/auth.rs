//! Who is calling: the client a request is made for, and what it may do.
//! The HTTP token check decides it and puts it in the request's extensions,
//! where rate limits, idempotency keys and the scope checks read it.

use std::sync::Arc;

/// What a token allows: reading, writing, or everything (the admin routes
/// included). Ordered: each scope allows what the ones before it do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    Read,
    Write,
    Admin,
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
        Self {
            name: Arc::from("anonymous"),
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

    /// Whether this caller may do what `needed` requires.
    pub fn allows(&self, needed: Scope) -> bool {
        self.scope >= needed
    }
}
