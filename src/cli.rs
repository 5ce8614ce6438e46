//! The command line: `serve`, `mcp`, `envelope` and one command per tool.
//! Every command prints exactly one envelope on stdout; logs go to stderr.
//! Exit codes: 0 success, 2 the call is wrong (fix the call), 1 runtime failure.

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use axum::http::HeaderValue;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use serde_json::Value;

use crate::auth::tokens::Tokens;
use crate::envelope::{self, Envelope, ErrorCategory, ErrorCode, Form, Meta, Tier, ToolError};
use crate::http::middleware::rate_limit::RateLimit;
use crate::http::{HostPattern, HttpSettings};
use crate::tools::sets::ToolSet;
use crate::tools::{Cairn, Config, Module};
use logging::LogFormat;

pub mod agents_md;
pub mod completions;
pub mod help;
pub mod log_sink;
pub mod logging;
pub mod output;
pub mod projects;
pub mod remote;
pub mod token;
pub mod tool_command;
pub mod transfer;
pub mod vault;

#[derive(Debug, Parser)]
#[command(
    name = "cairn",
    version,
    about = "A coordination hub for AI agents and the people who watch them."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    /// Print tool answers as compact JSON without nulls (the fewest tokens).
    #[arg(long, global = true)]
    pub dense: bool,
    /// Print tool answers indented (the default on a terminal; compact when piped).
    #[arg(long, global = true, conflicts_with = "dense")]
    pub pretty: bool,
    /// Print help as an envelope even on a terminal (it is one when piped).
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command that opens the store shares.
#[derive(Debug, Clone, clap::Args)]
pub struct GlobalArgs {
    /// The store: a SQLite file (created and migrated on first start) or a
    /// `postgres://user@host:port/database` URL (migrated on first start).
    #[arg(
        long,
        global = true,
        env = "CAIRN_DB",
        default_value = "cairn.db",
        hide_env_values = true
    )]
    pub db: String,
    /// Modules to switch off, comma-separated (their tools answer `module_disabled`).
    #[arg(long, global = true, env = "CAIRN_DISABLE", value_delimiter = ',')]
    pub disable: Vec<Module>,
    /// Call a running cairn at this http:// URL instead of opening a store
    /// (tool commands; the bearer token comes from `$CAIRN_TOKEN`).
    #[arg(long, global = true, env = "CAIRN_URL")]
    pub url: Option<String>,
    /// The project to work in (its key); every store holds `default`.
    /// `serve` serves every project whatever this says.
    #[arg(
        long,
        global = true,
        env = "CAIRN_PROJECT",
        default_value = crate::store::DEFAULT_PROJECT
    )]
    pub project: String,
    /// How log lines on stderr are written: `text` for people, `json` for
    /// collectors (one object per line, with the request's spans).
    #[arg(long, global = true, env = "CAIRN_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

impl GlobalArgs {
    /// Opens (creating and migrating on first start) the store `--db` names.
    pub fn open_store(&self) -> Result<std::sync::Arc<dyn crate::store::Store>, ToolError> {
        crate::store::open(&self.db, &crate::store::StoreOptions::default())
            .map_err(ToolError::from)
    }

    /// Commands that open the store themselves (`dump`, `restore`, `import`,
    /// `export`) refuse `--url` rather than ignore it: the data would
    /// otherwise come from, or land in, the local `--db` while the caller
    /// meant the server.
    pub fn refuse_url(&self, commands: &str) -> Result<(), ToolError> {
        match self.url {
            None => Ok(()),
            Some(_) => Err(ToolError::invalid_input(
                "url",
                format!(
                    "{commands} open a store with --db; they do not call a server (unset CAIRN_URL, or run them where the store is)"
                ),
            )),
        }
    }

    /// Opens the store and builds the application every surface serves,
    /// in the `default` project.
    pub fn open_hub(&self) -> Result<Cairn, ToolError> {
        let store = self.open_store()?;
        let config = Config {
            disabled_modules: self.disable.iter().copied().collect(),
            ..Config::default()
        };
        Ok(Cairn::new(store, config))
    }

    /// [`GlobalArgs::open_hub`], in the project `--project` names.
    pub fn open_cairn(&self) -> Result<Cairn, ToolError> {
        self.open_hub()?.in_project_blocking(&self.project)
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the REST gateway with the SPA, Swagger UI (/docs) and MCP (/mcp).
    Serve(ServeArgs),
    /// Print the OpenAPI document (the committed openapi/openapi.json).
    Openapi,
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
    Mcp(ToolsArgs),
    /// Call a tool with JSON arguments: `cairn call task_get '{"id": "3f9a1c"}'` (`-` reads stdin).
    Call {
        /// The tool to call.
        tool: String,
        /// The arguments as one JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
    },
    /// Print the tool manual (docs/tools.md), generated from the tool registry.
    AgentsMd,
    /// Write everything the store holds (tasks with claims, notes, links) as JSON Lines.
    Dump {
        /// Write the dump to this file (the envelope then goes to stdout);
        /// without it the dump goes to stdout and the envelope to stderr.
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// Every project: `--output` is then a new folder, with
        /// `projects.json` and one `KEY.jsonl` per project.
        #[arg(long)]
        all_projects: bool,
    },
    /// Load a dump into an empty store (a missing SQLite file or an empty database is migrated first).
    Restore {
        /// The dump to read; `-` or nothing reads stdin.
        input: Option<PathBuf>,
        /// Add what the store lacks instead of refusing a store that holds data
        /// (records whose id, slug or source it holds are skipped).
        #[arg(long)]
        merge: bool,
        /// A dump of every project (`dump --all-projects`): INPUT is its
        /// folder; projects the store lacks are made.
        #[arg(long)]
        all_projects: bool,
    },
    /// Write every note as Markdown with YAML front matter, and the tasks as one file per status.
    Export {
        /// The folder to write (new or empty): `notes/<title>.md` and `tasks/<status>.md`.
        #[arg(long, value_name = "DIR")]
        markdown: PathBuf,
        /// Every project, each in `DIR/KEY/`.
        #[arg(long)]
        all_projects: bool,
    },
    /// Import a folder of Markdown notes (an Obsidian vault, an export); a second run changes nothing.
    Import {
        /// The folder; nested folders are read, hidden ones (`.obsidian/`) are not.
        dir: PathBuf,
        /// Write a file even when its front matter `version` is not the note's
        /// current one (the file wins); otherwise that file is `version_conflict`.
        #[arg(long)]
        overwrite: bool,
        /// Each folder of DIR named by a project key is that project's
        /// (made when the store lacks it), as `export --all-projects` writes.
        #[arg(long)]
        all_projects: bool,
    },
    /// Print a shell completion script: `cairn completions bash > /etc/bash_completion.d/cairn`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: completions::CompletionShell,
    },
    /// List, create, rename and archive projects.
    Project {
        #[command(subcommand)]
        action: projects::ProjectAction,
    },
    /// Make bearer tokens for `serve --tokens-file` (secrets stored hashed).
    Token {
        #[command(subcommand)]
        action: token::TokenAction,
    },
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

#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on. A non-loopback address requires a token.
    #[arg(long, env = "CAIRN_BIND", default_value = "127.0.0.1:8787")]
    pub bind: SocketAddr,
    /// Bearer token required on /api, /mcp and /metrics: one admin token
    /// (named `default`).
    #[arg(long, env = "CAIRN_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Named tokens with scopes, one `NAME SCOPE sha256:HEX [PROJECTS]` per
    /// line (scope: read, write or admin; PROJECTS: `*` or keys
    /// comma-separated; `cairn token new NAME SCOPE` makes a line).
    #[arg(long, env = "CAIRN_TOKENS_FILE")]
    pub tokens_file: Option<PathBuf>,
    /// Named tokens with scopes as `name:scope:secret,...` (the secret plain
    /// or `sha256:HEX`); prefer the environment variable to the flag.
    #[arg(long, env = "CAIRN_TOKENS", hide_env_values = true)]
    pub tokens: Option<String>,
    /// Requests a second per client (a token, or an address without one); 0
    /// turns limits off. Default: 50 on a non-loopback bind, off on loopback.
    #[arg(long, env = "CAIRN_RATE_LIMIT")]
    pub rate_limit: Option<u32>,
    /// Requests a client may make at once before the per-second rate applies
    /// (default: twice the rate; 100 with the non-loopback default).
    #[arg(long, env = "CAIRN_RATE_LIMIT_BURST", value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit_burst: Option<u32>,
    /// Key calls without a token by the last `X-Forwarded-For` address (the
    /// one the proxy in front appended) instead of the peer address. Only
    /// behind a proxy that sets it: otherwise a client picks its own bucket.
    #[arg(long, env = "CAIRN_TRUST_FORWARDED_FOR")]
    pub trust_forwarded_for: bool,
    /// Browser origins, besides this server's own pages, allowed to call the API and MCP
    /// (comma-separated); none means same-origin only.
    #[arg(long, env = "CAIRN_CORS_ORIGINS", value_delimiter = ',')]
    pub cors_origin: Vec<String>,
    /// Host names this server answers to besides localhost, 127.0.0.1 and [::1]
    /// on its port (comma-separated `name` or `name:port`); a non-loopback bind
    /// answers only to these, so it requires at least one.
    #[arg(long, env = "CAIRN_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,
    /// Seconds a request may take before it answers 503 `timeout`.
    #[arg(long, env = "CAIRN_TIMEOUT_SECS", default_value_t = 30)]
    pub timeout_secs: u64,
    /// Largest request body, in bytes.
    #[arg(long, env = "CAIRN_BODY_LIMIT", default_value_t = 4 * 1024 * 1024)]
    pub body_limit: usize,
    /// Seconds a client may take to send a request's headers (and an idle
    /// keep-alive connection may wait for its next request) before the
    /// connection is closed.
    #[arg(long, env = "CAIRN_HEADER_TIMEOUT_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout_secs: u64,
    /// Events a change-feed stream (/api/v1/events) may queue for a reader
    /// that falls behind before it gets a `reset` and is closed.
    #[arg(long, env = "CAIRN_SSE_BUFFER", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub sse_buffer: u32,
    /// A built SPA to serve at `/` instead of the one in the binary (for SPA
    /// development: `web-client/dist` after `npm run build`).
    #[arg(long, env = "CAIRN_WEB_DIR")]
    pub web_dir: Option<PathBuf>,
    #[command(flatten)]
    pub tools: ToolsArgs,
}

/// The MCP tool set (`serve` for `/mcp`, `mcp` for stdio).
#[derive(Debug, Clone, clap::Args)]
pub struct ToolsArgs {
    /// The tools MCP sessions list and may call: `all`, `core` (find, claim,
    /// work on and finish tasks; read and write notes), or modules and tool
    /// names separated by commas (`core,graph`). Over HTTP a session may
    /// name its own with `/mcp?tools=SET`.
    #[arg(long = "tools", env = "CAIRN_TOOLS", default_value = "all", value_parser = tool_set)]
    pub set: ToolSet,
}

fn tool_set(text: &str) -> Result<ToolSet, String> {
    text.parse().map_err(|error: ToolError| error.message)
}

impl ServeArgs {
    fn public_bind_requires(&self, field: &str, what: &str) -> ToolError {
        ToolError::invalid_input(
            field,
            format!(
                "binding to the non-loopback address {} requires {what}",
                self.bind
            ),
        )
    }

    /// An explicit `--web-dir` must hold a built SPA: one that does not is
    /// a mistake to report, not a reason to serve no page.
    fn web_dir(&self) -> Result<Option<PathBuf>, ToolError> {
        match &self.web_dir {
            Some(dir) if !dir.join("index.html").is_file() => Err(ToolError::invalid_input(
                "web_dir",
                "--web-dir names a folder without index.html: build the SPA there (`npm run build` in web-client/), or leave --web-dir out to serve the one in the binary",
            )),
            dir => Ok(dir.clone()),
        }
    }

    /// The named tokens of `--tokens-file` and `--tokens`; refused when one
    /// is wrong or collides with `--token`.
    fn tokens(&self, token: Option<&str>) -> Result<Tokens, ToolError> {
        let mut tokens = Tokens::default();
        if let Some(path) = &self.tokens_file {
            let text = std::fs::read_to_string(path).map_err(|_| {
                ToolError::invalid_input("tokens_file", "cannot read the tokens file")
            })?;
            tokens
                .add_file(&text)
                .map_err(|reason| ToolError::invalid_input("tokens_file", reason))?;
        }
        if let Some(spec) = &self.tokens {
            tokens
                .add_env(spec)
                .map_err(|reason| ToolError::invalid_input("tokens", reason))?;
        }
        if let Some(secret) = token {
            tokens
                .clone()
                .add_default(secret)
                .map_err(|reason| ToolError::invalid_input("token", reason))?;
        }
        Ok(tokens)
    }

    /// `--rate-limit` as given, else the public default on a non-loopback bind.
    fn rate_limit(&self, public: bool) -> Option<RateLimit> {
        match self.rate_limit {
            Some(per_second) => RateLimit::new(per_second, self.rate_limit_burst),
            None if public => Some(match self.rate_limit_burst {
                Some(burst) => {
                    RateLimit::new(RateLimit::PUBLIC_DEFAULT.per_second.get(), Some(burst))?
                }
                None => RateLimit::PUBLIC_DEFAULT,
            }),
            None => None,
        }
    }

    fn settings(&self) -> Result<HttpSettings, ToolError> {
        let token = self.token.clone().filter(|t| !t.is_empty());
        let tokens = self.tokens(token.as_deref())?;
        let public = !self.bind.ip().is_loopback();
        if public && token.is_none() && tokens.is_empty() {
            return Err(self.public_bind_requires(
                "bind",
                "a bearer token: set CAIRN_TOKEN (or --token), CAIRN_TOKENS or CAIRN_TOKENS_FILE",
            ));
        }
        let allowed_hosts = self
            .allowed_hosts
            .iter()
            .map(|h| {
                h.parse()
                    .map_err(|reason| ToolError::invalid_input("allowed_hosts", reason))
            })
            .collect::<Result<Vec<HostPattern>, _>>()?;
        if public && allowed_hosts.is_empty() {
            return Err(self.public_bind_requires(
                "allowed_hosts",
                "the host names clients use to reach it (it answers to no other): set CAIRN_ALLOWED_HOSTS (or --allowed-hosts)",
            ));
        }
        let cors_origins = self
            .cors_origin
            .iter()
            .map(|o| {
                HeaderValue::from_str(o).map_err(|_| {
                    ToolError::invalid_input("cors_origin", format!("`{o}` is not a valid origin"))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(HttpSettings {
            bind: self.bind,
            token,
            tokens,
            rate_limit: self.rate_limit(public),
            trust_forwarded_for: self.trust_forwarded_for,
            cors_origins,
            timeout: Duration::from_secs(self.timeout_secs.max(1)),
            body_limit: self.body_limit,
            sse_buffer: self.sse_buffer as usize,
            web_dir: self.web_dir()?,
            tools: self.tools.set.clone(),
            allowed_hosts,
            connections: crate::http::server::ConnectionLimits {
                header_timeout: Duration::from_secs(self.header_timeout_secs),
            },
            ..HttpSettings::default()
        })
    }
}

pub fn main() -> ExitCode {
    let words: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Some(code) = tool_command::help_for_tool(&words) {
        return code;
    }
    let matches = match command().try_get_matches() {
        Ok(matches) => matches,
        Err(error) => return tool_command::usage_error(error),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => return tool_command::usage_error(error),
    };
    logging::init(cli.global.log_format);
    let layout = tool_command::layout(cli.dense, cli.pretty);
    match cli.command {
        Command::Serve(args) => serve_command(&cli.global, &args),
        Command::Openapi => {
            output::print_text(&crate::http::openapi::document_json());
            ExitCode::SUCCESS
        }
        Command::Envelope { tier, tool } => envelope_command(tier.into(), &tool),
        Command::Mcp(tools) => mcp_command(&cli.global, tools.set),
        Command::Call { tool, arguments } => {
            tool_command::run_call_command(&cli.global, layout, &tool, &arguments)
        }
        Command::AgentsMd => {
            output::print_text(&agents_md::render());
            ExitCode::SUCCESS
        }
        Command::Dump {
            output,
            all_projects: false,
        } => transfer::dump_command(&cli.global, output.as_deref(), layout),
        Command::Dump {
            output,
            all_projects: true,
        } => transfer::dump_all_command(&cli.global, output.as_deref(), layout),
        Command::Restore {
            input,
            merge,
            all_projects,
        } => transfer::restore_command(&cli.global, input.as_deref(), merge, all_projects, layout),
        Command::Export {
            markdown,
            all_projects,
        } => vault::export_command(&cli.global, &markdown, all_projects, layout),
        Command::Import {
            dir,
            overwrite,
            all_projects,
        } => vault::import_command(&cli.global, &dir, overwrite, all_projects, layout),
        Command::Completions { shell } => completions::completions_command(shell),
        Command::Token { action } => token::token_command(&action),
        Command::Project { action } => projects::project_command(&cli.global, action, layout),
        Command::Tool(words) => tool_command::run_tool_command(&cli.global, layout, &words),
    }
}

/// The clap command, with the registry's tools listed in `--help` and `cairn help`.
pub fn command() -> clap::Command {
    Cli::command().after_help(help::tool_overview())
}

/// Threads in the blocking pool, where every tool call runs its store work
/// but a point read answered at once ([`crate::store::nowait`]) and, on
/// SQLite, a task write (on the store's own writer thread,
/// [`crate::store::Store::queue_write`]): the store's connections (the
/// readers and the one writer) and room for the
/// long-lived and file work beside them (stdio, the change-feed pump, the
/// SPA's files). Calls beyond that wait in the pool's queue, not as threads
/// parked on a connection, so a burst of 64 clients does not leave a hundred
/// threads behind.
const BLOCKING_THREADS: usize = crate::store::StoreOptions::DEFAULT_READERS as usize + 1 + 8;

/// The runtime of `serve` and `mcp`.
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
}

/// `cairn mcp`: MCP over stdio until the client hangs up.
fn mcp_command(global: &GlobalArgs, tools: ToolSet) -> ExitCode {
    let cairn = match global.open_cairn() {
        Ok(cairn) => cairn.on(crate::tools::Surface::Mcp),
        Err(error) => {
            tracing::error!(%error, "cannot open the store");
            eprintln!("cairn mcp: cannot open the store: {}", error.message);
            return ExitCode::from(1);
        }
    };
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cairn mcp: cannot start the async runtime: {error}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(crate::mcp::serve_stdio(cairn, tools)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "MCP over stdio stopped");
            ExitCode::from(1)
        }
    }
}

/// Starts the gateway; a store that cannot be opened, or an unsafe bind,
/// stops it before it listens, with one envelope saying why.
fn serve_command(global: &GlobalArgs, args: &ServeArgs) -> ExitCode {
    let startup = |error: ToolError| {
        tracing::error!(code = %error.code, "{}", error.message);
        let meta = Meta::new("serve", "", &envelope::new_request_id());
        emit(Envelope::failure(error, meta), Tier::Agent)
    };
    let settings = match args.settings() {
        Ok(settings) => settings,
        Err(error) => return startup(error),
    };
    let cairn = match global.open_hub() {
        Ok(cairn) => cairn,
        Err(error) => return startup(error),
    };
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(_) => return startup(ToolError::internal()),
    };
    match runtime.block_on(crate::http::serve(cairn, settings)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "cannot listen");
            startup(
                ToolError::invalid_input(
                    "bind",
                    "cannot listen on that address (in use or not permitted)",
                )
                .detail("field", "bind"),
            )
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
    output::print_text(&envelope::render(envelope, tier, Form::Envelope));
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
