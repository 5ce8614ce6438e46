//! Projects: every task, note, link, change-feed event and idempotency
//! record belongs to exactly one. Each project's data is a store of its own
//! (a SQLite file beside the first, or a PostgreSQL schema), so no query of
//! one project can see another's; the first store holds the registry of
//! projects and is the `default` project's.

use serde::{Deserialize, Serialize};

/// The project a surface uses when none is named: the one every store made
/// before projects existed holds its data in.
pub const DEFAULT_PROJECT: &str = "default";

/// The longest project key.
pub const KEY_MAX: usize = 64;

/// A project of the registry.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema,
)]
pub struct Project {
    /// The project's slug: lowercase letters, digits and `-`, 1-64 characters.
    /// It names the project in URLs (`/api/v1/projects/{project}/...`), MCP
    /// sessions and the CLI's `--project`; it never changes.
    pub key: String,
    /// A name for people.
    pub name: String,
    /// An archived project answers reads and refuses every write
    /// (`project_archived`).
    pub archived: bool,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// RFC 3339 UTC.
    pub updated_at: String,
}

impl Project {
    /// The `default` project as the registry holds it before anyone renamed it.
    pub fn default_at(now: &str) -> Self {
        Self {
            key: DEFAULT_PROJECT.to_owned(),
            name: "Default".to_owned(),
            archived: false,
            created_at: now.to_owned(),
            updated_at: now.to_owned(),
        }
    }
}

/// What a project update changes; `None` leaves it as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjectPatch {
    pub name: Option<String>,
    pub archived: Option<bool>,
}

/// Why `key` is not a project key, if it is not one.
pub fn key_problem(key: &str) -> Option<&'static str> {
    if key.is_empty() || key.len() > KEY_MAX {
        return Some("must be 1-64 characters");
    }
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    (!key.chars().all(allowed)).then_some("may hold only lowercase letters, digits and `-`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_a_short_lowercase_slug() {
        for good in ["default", "a", "web-2", &"x".repeat(64)] {
            assert_eq!(key_problem(good), None, "{good}");
        }
        for bad in ["", "Web", "a_b", "a/b", "..", "é", &"x".repeat(65)] {
            assert!(key_problem(bad).is_some(), "{bad}");
        }
    }
}
