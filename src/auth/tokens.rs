//! The bearer tokens a server accepts, each with a name and a scope. A
//! secret is kept only as its SHA-256 digest and a presented token is
//! hashed, then compared with every digest in constant time, so neither
//! the set in memory nor the time an answer takes gives a secret away.
//! SHA-256 (not a slow password hash) because tokens are long random
//! strings: there is no dictionary to guess from, and a check runs on every
//! request.
//!
//! Sources: `--token` (one admin token named `default`), a tokens file
//! (`--tokens-file`: one `NAME SCOPE sha256:HEX [PROJECTS]` per line, where
//! PROJECTS is `*` (the default) or project keys separated by commas; `#` comments;
//! `cairn token new` and `cairn token hash` write such lines) and the
//! environment (`CAIRN_TOKENS=name:scope:secret,...`, a secret plain or as
//! `sha256:HEX`).

use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::{Caller, ProjectAccess, Scope};

/// The prefix of a stored secret: its SHA-256 digest in lowercase hex.
pub const HASH_PREFIX: &str = "sha256:";

/// Names a token may not take: they name the callers that come without one
/// (`anonymous`) and with `--token` (`default`).
const RESERVED_NAMES: [&str; 2] = ["anonymous", "default"];

/// One accepted token: who it is and the digest of its secret.
#[derive(Clone)]
struct Entry {
    caller: Caller,
    digest: [u8; 32],
}

/// Every token a server accepts; empty when it requires none.
#[derive(Clone, Default)]
pub struct Tokens {
    entries: Vec<Entry>,
}

impl std::fmt::Debug for Tokens {
    // Names and scopes only: a digest is no secret, but it has no reader either.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(
                self.entries
                    .iter()
                    .map(|e| (&*e.caller.name, e.caller.scope)),
            )
            .finish()
    }
}

impl Tokens {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `--token`: one admin token named `default`.
    pub fn add_default(&mut self, secret: &str) -> Result<(), String> {
        self.push(Caller::default_token(), digest_of(secret))
    }

    /// Adds the lines of a tokens file (`NAME SCOPE sha256:HEX [PROJECTS]`); a line
    /// that is wrong is refused with its number (never its text, which may
    /// hold a secret written there by mistake).
    pub fn add_file(&mut self, text: &str) -> Result<(), String> {
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let entry = match words.as_slice() {
                [name, scope, stored] => self.parse_entry(name, scope, stored, true, "*"),
                [name, scope, stored, projects] => {
                    self.parse_entry(name, scope, stored, true, projects)
                }
                _ => Err("must be `NAME SCOPE sha256:HEX [PROJECTS]`".to_owned()),
            };
            entry.map_err(|reason| format!("line {}: {reason}", index + 1))?;
        }
        Ok(())
    }

    /// Adds `CAIRN_TOKENS`: comma-separated `name:scope:secret` entries,
    /// the secret plain or as `sha256:HEX`.
    pub fn add_env(&mut self, spec: &str) -> Result<(), String> {
        for (index, item) in spec.split(',').enumerate() {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let entry = match item.splitn(3, ':').collect::<Vec<_>>().as_slice() {
                [name, scope, secret] => self.parse_entry(name, scope, secret, false, "*"),
                _ => Err("must be `name:scope:secret`".to_owned()),
            };
            entry.map_err(|reason| format!("entry {}: {reason}", index + 1))?;
        }
        Ok(())
    }

    fn parse_entry(
        &mut self,
        name: &str,
        scope: &str,
        secret: &str,
        hashed_only: bool,
        projects: &str,
    ) -> Result<(), String> {
        let name = parse_name(name)?;
        let scope: Scope = scope.parse()?;
        let projects: ProjectAccess = projects.parse()?;
        let digest = match secret.strip_prefix(HASH_PREFIX) {
            Some(hex) => parse_hex_digest(hex)?,
            None if hashed_only => {
                return Err(format!(
                    "the secret must be stored hashed (`{HASH_PREFIX}HEX`): make the line with `cairn token hash`"
                ));
            }
            None if secret.is_empty() => return Err("the secret is empty".to_owned()),
            None => digest_of(secret),
        };
        self.push(
            Caller {
                name: Arc::from(name),
                scope,
                projects,
            },
            digest,
        )
    }

    fn push(&mut self, caller: Caller, digest: [u8; 32]) -> Result<(), String> {
        if self.entries.iter().any(|e| e.caller.name == caller.name) {
            return Err(format!("the name `{}` is given twice", caller.name));
        }
        if self.entries.iter().any(|e| e.digest == digest) {
            return Err(format!(
                "`{}` has the same secret as another token",
                caller.name
            ));
        }
        self.entries.push(Entry { caller, digest });
        Ok(())
    }

    /// The caller a presented secret belongs to, if any. Every entry is
    /// compared, in constant time, whichever matches.
    pub fn caller_for(&self, presented: &str) -> Option<Caller> {
        let digest = digest_of(presented);
        let mut found = None;
        for entry in &self.entries {
            if constant_time_eq(&entry.digest, &digest) {
                found = Some(&entry.caller);
            }
        }
        found.cloned()
    }
}

/// A token name: letters, digits, `-`, `_` and `.`, 1 to 64 of them, not reserved.
fn parse_name(name: &str) -> Result<&str, String> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !valid {
        return Err("a name is 1 to 64 letters, digits, `-`, `_` or `.`".to_owned());
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(format!("the name `{name}` is reserved"));
    }
    Ok(name)
}

/// The stored form of a secret: `sha256:` and its digest in lowercase hex.
pub fn hash_secret(secret: &str) -> String {
    let digest = digest_of(secret);
    let mut out = String::with_capacity(HASH_PREFIX.len() + 64);
    out.push_str(HASH_PREFIX);
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// A fresh secret of 244 random bits (two v4 UUIDs), for `cairn token new`.
pub fn new_secret() -> String {
    format!(
        "cairn_{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

fn digest_of(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

fn parse_hex_digest(hex: &str) -> Result<[u8; 32], String> {
    let invalid = || format!("`{HASH_PREFIX}` must be followed by 64 hex digits");
    if hex.len() != 64 || !hex.is_ascii() {
        return Err(invalid());
    }
    let mut digest = [0u8; 32];
    for (i, byte) in digest.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| invalid())?;
    }
    Ok(digest)
}

fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hashed_file_line_accepts_its_secret_and_no_other() {
        let line = format!("ci read {}\n", hash_secret("s3cret-ci"));
        let mut tokens = Tokens::default();
        tokens.add_file(&format!("# a comment\n\n{line}")).unwrap();
        let caller = tokens.caller_for("s3cret-ci").unwrap();
        assert_eq!((&*caller.name, caller.scope), ("ci", Scope::Read));
        assert!(tokens.caller_for("s3cret-c").is_none());
        assert!(tokens.caller_for("").is_none());
    }

    #[test]
    fn a_file_line_may_name_the_projects_its_token_may_use() {
        let mut tokens = Tokens::default();
        let text = format!(
            "web write {} web,docs\nops admin {} *\nold read {}\n",
            hash_secret("w"),
            hash_secret("o"),
            hash_secret("r")
        );
        tokens.add_file(&text).unwrap();
        let web = tokens.caller_for("w").unwrap();
        assert!(web.projects.allows("web") && web.projects.allows("docs"));
        assert!(!web.projects.allows("default"));
        assert_eq!(web.projects.to_string(), "web,docs");
        assert_eq!(tokens.caller_for("o").unwrap().projects, ProjectAccess::All);
        assert_eq!(tokens.caller_for("r").unwrap().projects, ProjectAccess::All);
        let error = Tokens::default()
            .add_file(&format!("x read {} Web\n", hash_secret("x")))
            .unwrap_err();
        assert!(
            error.starts_with("line 1:") && error.contains("`Web`"),
            "{error}"
        );
    }

    #[test]
    fn a_file_refuses_plain_secrets_without_echoing_them() {
        let error = Tokens::default()
            .add_file("ci read plain-secret\n")
            .unwrap_err();
        assert!(error.starts_with("line 1:"), "{error}");
        assert!(!error.contains("plain-secret"), "{error}");
    }

    #[test]
    fn the_environment_takes_plain_and_hashed_secrets() {
        let mut tokens = Tokens::default();
        let spec = format!("bot:write:abc123,ops:admin:{}", hash_secret("xyz789"));
        tokens.add_env(&spec).unwrap();
        assert_eq!(tokens.caller_for("abc123").unwrap().scope, Scope::Write);
        assert_eq!(tokens.caller_for("xyz789").unwrap().scope, Scope::Admin);
    }

    #[test]
    fn names_are_unique_valid_and_not_reserved() {
        let mut tokens = Tokens::default();
        tokens.add_default("one").unwrap();
        for spec in [
            "default:read:two",
            "bad name:read:two",
            "x:root:two",
            "a:read:one",
        ] {
            assert!(tokens.clone().add_env(spec).is_err(), "{spec}");
        }
        tokens.add_env("a:read:two").unwrap();
        assert!(tokens.add_env("a:write:three").is_err());
    }

    #[test]
    fn a_stored_hash_is_lowercase_hex_of_sha256() {
        assert_eq!(
            hash_secret("abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
