//! The one list of tools. The MCP tool list, the CLI, AGENTS.md and the module
//! gate are all made from [`REGISTRY`]; adding a tool is one entry here plus its function.

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::{Ctx, system};
use crate::envelope::{ErrorCode, ToolError};

/// A group of tools that a deployment can switch off as a whole.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum Module {
    Tasks,
    Notes,
    Graph,
    Search,
    System,
}

impl Module {
    /// The `meta.layer` of this module's answers.
    pub const fn layer(self) -> &'static str {
        match self {
            Module::Tasks => "tasks",
            Module::Notes => "notes",
            Module::Graph => "graph",
            Module::Search => "search",
            Module::System => "health",
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Module::Tasks => "tasks",
            Module::Notes => "notes",
            Module::Graph => "graph",
            Module::Search => "search",
            Module::System => "system",
        }
    }

    pub fn disabled_error(self) -> ToolError {
        ToolError::new(
            ErrorCode::ModuleDisabled,
            format!(
                "The `{0}` module is disabled in this deployment; remove `{0}` from CAIRN_DISABLE (or --disable) to enable it.",
                self.name()
            ),
        )
        .detail("module", self.name())
    }
}

/// Type-erased handler: JSON arguments in, JSON data out.
pub type Handler = fn(&Ctx, Value) -> Result<Value, ToolError>;

/// One tool, as every surface sees it.
pub struct ToolDef {
    pub name: &'static str,
    /// One line telling an agent when to use it.
    pub description: &'static str,
    pub module: Module,
    pub input_schema: fn() -> schemars::Schema,
    pub output_schema: fn() -> schemars::Schema,
    pub handler: Handler,
}

/// Declares one registry entry from a typed tool function.
macro_rules! tool {
    ($name:ident, $module:ident, $func:path, $input:ty => $output:ty, $description:literal) => {
        ToolDef {
            name: stringify!($name),
            description: $description,
            module: Module::$module,
            input_schema: || schemars::schema_for!($input),
            output_schema: || schemars::schema_for!($output),
            handler: |ctx, args| {
                let input: $input = decode(args)?;
                encode($func(ctx, input)?)
            },
        }
    };
}

pub static REGISTRY: &[ToolDef] = &[tool!(
    health,
    System,
    system::health,
    system::HealthInput => system::HealthReport,
    "Report version, store kind, schema version, counts and whether search works; use it to check cairn is up."
)];

pub fn find(name: &str) -> Option<&'static ToolDef> {
    REGISTRY.iter().find(|t| t.name == name)
}

/// `invalid_input` for a tool name that is not registered, with the nearest names.
pub fn unknown_tool(name: &str) -> ToolError {
    let suggestions = nearest(name, REGISTRY.iter().map(|t| t.name));
    ToolError::invalid_input("tool", format!("no tool named `{name}`")).suggest(suggestions)
}

/// Up to three candidates closest to `word` by Levenshtein distance.
pub fn nearest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(usize, &str)> = candidates
        .map(|c| (strsim::levenshtein(word, c), c))
        .filter(|(d, c)| *d <= (c.len().max(word.len()) / 2).max(2))
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_owned())
        .collect()
}

fn decode<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| ToolError::invalid_input("arguments", e.to_string()))
}

fn encode<T: Serialize>(output: T) -> Result<Value, ToolError> {
    serde_json::to_value(output).map_err(|_| ToolError::internal())
}
