//! `cairn token new NAME SCOPE [--projects a,b]` and `cairn token hash NAME
//! SCOPE [--projects a,b]`: lines for
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
        /// The projects it may use: keys separated by commas, or `*` for every one.
        #[arg(long, default_value = "*")]
        projects: String,
    },
    /// Print the tokens-file line for a secret read from stdin.
    Hash {
        /// The token's name.
        name: String,
        /// What it may do: read, write or admin.
        scope: String,
        /// The projects it may use: keys separated by commas, or `*` for every one.
        #[arg(long, default_value = "*")]
        projects: String,
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
    let (name, scope, projects, secret, shown) = match action {
        TokenAction::New {
            name,
            scope,
            projects,
        } => (name, scope, projects, new_secret(), true),
        TokenAction::Hash {
            name,
            scope,
            projects,
        } => {
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
            (name, scope, projects, secret, false)
        }
    };
    // A line without projects means every project, as it always did.
    let line = match projects.as_str() {
        "*" => format!("{name} {scope} {}", hash_secret(&secret)),
        only => format!("{name} {scope} {} {only}", hash_secret(&secret)),
    };
    // The line is checked as `serve` will read it.
    Tokens::default().add_file(&line).map_err(|reason| {
        ToolError::invalid_input("token", reason.trim_start_matches("line 1: "))
    })?;
    let mut data = json!({"name": name, "scope": scope, "projects": projects, "line": line});
    if shown {
        data["secret"] = json!(secret);
    }
    Ok(data)
}
