//! `cairn token new NAME SCOPE` and `cairn token hash NAME SCOPE`: lines for
//! a tokens file (`--tokens-file`), which stores each secret only as its
//! SHA-256 digest. `new` makes a random secret and shows it once; `hash`
//! reads a secret of your own on stdin (never from the command line, where
//! the shell history and the process list would keep it).

use std::io::Read;
use std::process::ExitCode;

use serde_json::json;

use crate::auth::tokens::{Tokens, hash_secret, new_secret};
use crate::envelope::{self, Envelope, Meta, Tier, ToolError};

#[derive(Debug, clap::Subcommand)]
pub enum TokenAction {
    /// Make a fresh random secret: prints it (once) and the tokens-file line that accepts it.
    New {
        /// The token's name (logged with its requests; the secret never is).
        name: String,
        /// What it may do: read, write or admin.
        scope: String,
    },
    /// Print the tokens-file line for a secret read from stdin.
    Hash {
        /// The token's name.
        name: String,
        /// What it may do: read, write or admin.
        scope: String,
    },
}

pub fn token_command(action: &TokenAction) -> ExitCode {
    let meta = Meta::new("token", "", &envelope::new_request_id());
    let envelope = match answer(action) {
        Ok(data) => Envelope::success(data, meta),
        Err(error) => Envelope::failure(error, meta),
    };
    super::emit(envelope, Tier::Agent)
}

fn answer(action: &TokenAction) -> Result<serde_json::Value, ToolError> {
    let (name, scope, secret, shown) = match action {
        TokenAction::New { name, scope } => (name, scope, new_secret(), true),
        TokenAction::Hash { name, scope } => {
            let mut secret = String::new();
            std::io::stdin().read_to_string(&mut secret).map_err(|_| {
                ToolError::invalid_input("secret", "standard input must be UTF-8 text")
            })?;
            let secret = secret.trim_end_matches(['\r', '\n']).to_owned();
            if secret.is_empty() {
                return Err(ToolError::invalid_input(
                    "secret",
                    "must be given on standard input",
                ));
            }
            (name, scope, secret, false)
        }
    };
    let line = format!("{name} {scope} {}", hash_secret(&secret));
    // The line is checked as `serve` will read it.
    Tokens::default().add_file(&line).map_err(|reason| {
        ToolError::invalid_input("token", reason.trim_start_matches("line 1: "))
    })?;
    let mut data = json!({"name": name, "scope": scope, "line": line});
    if shown {
        data["secret"] = json!(secret);
    }
    Ok(data)
}
