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
    /// The projects the token may use.
    pub projects: ProjectAccess,
}

/// The projects a token may use: every one (`*`, and a token without a
/// list), or those named. A project it may not use is answered
/// `project_not_found`, as one that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ProjectAccess {
    #[default]
    All,
    Only(Arc<[String]>),
}

impl ProjectAccess {
    pub fn allows(&self, project: &str) -> bool {
        match self {
            Self::All => true,
            Self::Only(keys) => keys.iter().any(|k| k == project),
        }
    }
}

impl std::str::FromStr for ProjectAccess {
    type Err = String;

    /// `*`, or project keys separated by commas.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "*" {
            return Ok(Self::All);
        }
        let keys: Vec<String> = s.split(',').map(str::to_owned).collect();
        if let Some(bad) = keys.iter().find(|k| crate::store::key_problem(k).is_some()) {
            return Err(format!(
                "`{bad}` is not a project key (lowercase letters, digits and `-`, 1-64 characters; `*` for every project)"
            ));
        }
        Ok(Self::Only(keys.into()))
    }
}

impl std::fmt::Display for ProjectAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::All => f.write_str("*"),
            Self::Only(keys) => f.write_str(&keys.join(",")),
        }
    }
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
            projects: ProjectAccess::All,
        }
    }

    /// The caller holding `--token`, the one admin token.
    pub fn default_token() -> Self {
        Self {
            name: Arc::from("default"),
            scope: Scope::Admin,
            projects: ProjectAccess::All,
        }
    }

    /// Whether this caller came without a token (no token is configured).
    pub fn is_anonymous(&self) -> bool {
        &*self.name == "anonymous"
    }

    /// `project_not_found` when the token may not use `project`.
    pub fn check_project(&self, project: &str) -> Result<(), ToolError> {
        if self.projects.allows(project) {
            Ok(())
        } else {
            Err(crate::tools::projects::not_found(project))
        }
    }

    /// `permission_denied` unless this caller is an admin of every project
    /// (what creating, renaming and archiving projects needs).
    pub fn check_admin_of_all(&self) -> Result<(), ToolError> {
        self.check(Scope::Admin)?;
        if self.projects == ProjectAccess::All {
            return Ok(());
        }
        Err(ToolError::new(
            ErrorCode::PermissionDenied,
            format!(
                "The token `{}` may use only some projects; managing projects needs an admin token on `*`.",
                self.name
            ),
        )
        .detail("token", &*self.name)
        .detail("scope", self.scope.as_str())
        .detail("required_scope", Scope::Admin.as_str()))
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
