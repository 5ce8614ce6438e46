//! The command line: `serve`, `mcp`, `envelope` and one command per tool.
//! Every command prints exactly one envelope on stdout; logs go to stderr.
//! Exit codes: 0 success, 2 the call is wrong (fix the call), 1 runtime failure.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use serde_json::Value;

use crate::envelope::{self, Envelope, ErrorCategory, ErrorCode, Form, Meta, Tier, ToolError};
use crate::tools::{Cairn, Config, Module};

pub mod agents_md;
pub mod fields;
pub mod tool_command;

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
    /// Serve MCP over stdin/stdout (stdout carries only protocol frames; logs go to stderr).
    Mcp,
    /// Call a tool with JSON arguments: `cairn call task_get '{"id": "3f9a1c"}'` (`-` reads stdin).
    Call {
        /// The tool to call.
        tool: String,
        /// The arguments as one JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
        /// Print compact JSON without nulls.
        #[arg(long)]
        dense: bool,
    },
    /// Print AGENTS.md, generated from the tool registry.
    AgentsMd,
    /// `cairn <tool> [--field value ...]`: call one tool (listed below).
    #[command(external_subcommand)]
    Tool(Vec<String>),
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
    let matches = command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    init_logging(&cli.command);
    match cli.command {
        Command::Envelope { tier, tool } => envelope_command(tier.into(), &tool),
        Command::Mcp => mcp_command(&cli.global),
        Command::Call {
            tool,
            arguments,
            dense,
        } => tool_command::run_call_command(&cli.global, dense, &tool, &arguments),
        Command::AgentsMd => {
            tool_command::print_text(&agents_md::render());
            ExitCode::SUCCESS
        }
        Command::Tool(words) => tool_command::run_tool_command(&cli.global, false, &words),
    }
}

/// The clap command, with the registry's tools listed in `--help` and `cairn help`.
pub fn command() -> clap::Command {
    Cli::command().after_help(tool_overview())
}

fn tool_overview() -> String {
    let width = crate::tools::REGISTRY
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(0);
    let mut out = String::from("Tools (`cairn <tool> --help` lists a tool's fields):\n");
    for tool in crate::tools::REGISTRY {
        out.push_str(&format!("  {:width$}  {}\n", tool.name, tool.description));
    }
    out.push_str(
        "\nEvery tool command prints one envelope on stdout; exit 0 success, \
         2 fix the call, 1 fix the store or environment.",
    );
    out
}

/// Logs go to stderr, never stdout: stdout carries the one envelope, or the
/// MCP protocol frames. `CAIRN_LOG` (or `RUST_LOG`) sets the filter.
fn init_logging(command: &Command) {
    let default = match command {
        Command::Mcp => "info",
        _ => "warn",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// `cairn mcp`: MCP over stdio until the client hangs up.
fn mcp_command(global: &GlobalArgs) -> ExitCode {
    let cairn = match global.open_cairn() {
        Ok(cairn) => cairn,
        Err(error) => {
            tracing::error!(%error, "cannot open the store");
            eprintln!("cairn mcp: cannot open the store: {}", error.message);
            return ExitCode::from(1);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cairn mcp: cannot start the async runtime: {error}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(crate::mcp::serve_stdio(cairn)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "MCP over stdio stopped");
            ExitCode::from(1)
        }
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
