//! The command line: `serve`, `mcp`, `envelope` and one command per tool.
//! Every command prints exactly one envelope on stdout; logs go to stderr.
//! Exit codes: 0 success, 2 the call is wrong (fix the call), 1 runtime failure.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use serde_json::Value;

use crate::envelope::{self, Envelope, ErrorCategory, ErrorCode, Form, Meta, Tier, ToolError};
use crate::tools::{Cairn, Config, Module};

#[derive(Debug, Parser)]
#[command(
    name = "cairn",
    version,
    about = "A coordination hub for AI agents and the people who watch them."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command that opens the store shares.
#[derive(Debug, Clone, clap::Args)]
pub struct GlobalArgs {
    /// The SQLite database file (created and migrated on first start).
    #[arg(long, global = true, env = "CAIRN_DB", default_value = "cairn.db")]
    pub db: PathBuf,
    /// Modules to switch off, comma-separated (their tools answer `module_disabled`).
    #[arg(long, global = true, env = "CAIRN_DISABLE", value_delimiter = ',')]
    pub disable: Vec<Module>,
}

impl GlobalArgs {
    /// Opens the store and builds the application every surface serves.
    pub fn open_cairn(&self) -> Result<Cairn, ToolError> {
        let store = crate::store::open_sqlite(&self.db)?;
        let config = Config {
            disabled_modules: self.disable.iter().copied().collect(),
            ..Config::default()
        };
        Ok(Cairn::new(store, config))
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the envelope a surface would emit for the JSON payload on stdin.
    Envelope {
        /// Which budget to apply.
        #[arg(long, value_enum, default_value_t = TierArg::Agent)]
        tier: TierArg,
        /// The tool name to put in `meta.tool`.
        #[arg(long, default_value = "envelope")]
        tool: String,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TierArg {
    Agent,
    Graph,
    None,
}

impl From<TierArg> for Tier {
    fn from(t: TierArg) -> Self {
        match t {
            TierArg::Agent => Tier::Agent,
            TierArg::Graph => Tier::Graph,
            TierArg::None => Tier::None,
        }
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Envelope { tier, tool } => envelope_command(tier.into(), &tool),
    }
}

/// Reads a payload on stdin and prints its envelope.
fn envelope_command(tier: Tier, tool: &str) -> ExitCode {
    let request_id = envelope::new_request_id();
    let meta = Meta::new(tool, "", &request_id);
    let mut input = String::new();
    let envelope = match std::io::stdin().read_to_string(&mut input) {
        Err(_) => Envelope::failure(
            ToolError::new(
                ErrorCode::InvalidJson,
                "Standard input is not valid UTF-8 text.",
            ),
            meta,
        ),
        Ok(_) => match parse_payload(&input) {
            Ok(data) => Envelope::success(data, meta),
            Err(error) => Envelope::failure(error, meta),
        },
    };
    emit(envelope, tier)
}

fn parse_payload(input: &str) -> Result<Value, ToolError> {
    if input.trim().is_empty() {
        return Err(ToolError::new(
            ErrorCode::InvalidJson,
            "Standard input is empty; pipe a JSON payload in.",
        ));
    }
    serde_json::from_str(input).map_err(|e| {
        ToolError::new(ErrorCode::InvalidJson, "Standard input is not valid JSON.")
            .detail("line", e.line())
            .detail("column", e.column())
    })
}

/// Prints one envelope and picks the exit code from its category.
pub fn emit(envelope: Envelope, tier: Tier) -> ExitCode {
    let code = exit_code(&envelope);
    println!("{}", envelope::render(envelope, tier, Form::Envelope));
    code
}

/// 0 on success, 2 when the call must be fixed, 1 when the environment must be.
pub fn exit_code(envelope: &Envelope) -> ExitCode {
    match &envelope.outcome {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => match e.category {
            ErrorCategory::Validation
            | ErrorCategory::NotFound
            | ErrorCategory::Conflict
            | ErrorCategory::TooLarge => ExitCode::from(2),
            _ => ExitCode::from(1),
        },
    }
}
