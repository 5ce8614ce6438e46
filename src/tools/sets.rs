//! Tool sets: which tools an MCP session lists and may call (`cairn mcp
//! --tools SET`, `/mcp?tools=SET`, `CAIRN_TOOLS`). A set is `all` (the
//! default), `core`, or a comma list of those, modules and tool names; it
//! narrows what a session sees, on top of the modules a deployment switches
//! off and the tools a token's scope allows.

use std::collections::BTreeSet;
use std::str::FromStr;
use std::sync::Arc;

use super::registry::{self, Module, REGISTRY, ToolDef};
use crate::envelope::{ErrorCode, ToolError};

/// What an agent needs to find, claim, work on and finish tasks and to read
/// and write notes: the `core` set.
pub const CORE: &[&str] = &[
    "task_list",
    "task_get",
    "task_create",
    "task_update",
    "task_claim",
    "task_renew",
    "task_release",
    "task_complete",
    "note_read",
    "note_write",
    "note_list",
    "search",
];

/// The tools a session lists and may call; shared, as every session of a
/// gateway gets its default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSet(Arc<Named>);

#[derive(Debug, PartialEq, Eq)]
struct Named {
    /// As written (without blanks), for messages: `core`, `core,graph`.
    name: String,
    /// `None` for every tool.
    tools: Option<BTreeSet<&'static str>>,
}

impl Default for ToolSet {
    fn default() -> Self {
        Self(Arc::new(Named {
            name: "all".to_owned(),
            tools: None,
        }))
    }
}

impl ToolSet {
    /// Whether the set holds `def`.
    pub fn contains(&self, def: &ToolDef) -> bool {
        self.0
            .tools
            .as_ref()
            .is_none_or(|tools| tools.contains(def.name))
    }

    /// The set's name as given (`all` by default).
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// `tool_not_in_set` for a call of `def` from a session whose set does
    /// not hold it.
    pub fn refusal(&self, def: &ToolDef) -> ToolError {
        ToolError::new(
            ErrorCode::ToolNotInSet,
            format!(
                "`{}` is not in this session's tool set `{}`; connect with a set that holds it (`--tools all`, `/mcp?tools=all` or `CAIRN_TOOLS`).",
                def.name,
                self.name()
            ),
        )
        .detail("tool", def.name)
        .detail("set", self.name())
    }
}

impl FromStr for ToolSet {
    type Err = ToolError;

    /// `all`, `core`, module names and tool names, separated by commas; an
    /// unknown word is `invalid_input` on `tools` with the nearest names.
    fn from_str(text: &str) -> Result<Self, ToolError> {
        let words: Vec<&str> = text
            .split(',')
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .collect();
        if words.is_empty() {
            return Err(ToolError::invalid_input(
                "tools",
                "must name a tool set: `all`, `core`, or modules and tool names separated by commas",
            ));
        }
        let mut tools = BTreeSet::new();
        let mut every = false;
        for word in &words {
            match *word {
                "all" => every = true,
                "core" => tools.extend(CORE.iter().copied()),
                _ => {
                    if let Some(module) = module_named(word) {
                        tools.extend(
                            REGISTRY
                                .iter()
                                .filter(|def| def.module == module)
                                .map(|def| def.name),
                        );
                    } else if let Some(def) = registry::find(word) {
                        tools.insert(def.name);
                    } else {
                        return Err(unknown_word(word));
                    }
                }
            }
        }
        Ok(Self(Arc::new(Named {
            name: words.join(","),
            tools: (!every).then_some(tools),
        })))
    }
}

fn module_named(word: &str) -> Option<Module> {
    <Module as clap::ValueEnum>::from_str(word, false).ok()
}

/// Every word a set may hold: `all`, `core`, the modules, the tools.
fn words() -> impl Iterator<Item = &'static str> {
    let modules = <Module as clap::ValueEnum>::value_variants()
        .iter()
        .map(|m| m.name());
    ["all", "core"]
        .into_iter()
        .chain(modules)
        .chain(REGISTRY.iter().map(|def| def.name))
}

fn unknown_word(word: &str) -> ToolError {
    let suggestions = registry::nearest(word, words());
    ToolError::invalid_field(
        "tools",
        format!(
            "`{word}` is no tool set, module or tool; a set is `all`, `core`, or modules and tool names separated by commas."
        ),
        format!("unknown tool set word `{word}`"),
    )
    .suggest(suggestions)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(set: &ToolSet) -> Vec<&'static str> {
        REGISTRY
            .iter()
            .filter(|def| set.contains(def))
            .map(|def| def.name)
            .collect()
    }

    #[test]
    fn every_core_tool_is_registered() {
        for name in CORE {
            assert!(registry::find(name).is_some(), "{name} is not a tool");
        }
    }

    #[test]
    fn all_is_every_tool_and_the_default() {
        let all: ToolSet = "all".parse().unwrap();
        assert_eq!(names(&all).len(), REGISTRY.len());
        assert_eq!(all, ToolSet::default());
        assert_eq!(ToolSet::default().name(), "all");
    }

    #[test]
    fn core_modules_and_tools_combine() {
        let set: ToolSet = " core , graph,health ".parse().unwrap();
        assert_eq!(set.name(), "core,graph,health");
        let listed = names(&set);
        for name in CORE {
            assert!(listed.contains(name), "{name}");
        }
        assert!(listed.contains(&"graph_path"));
        assert!(listed.contains(&"health"));
        assert!(!listed.contains(&"task_board"));
        assert!(!listed.contains(&"changes_since"));
    }

    #[test]
    fn an_unknown_word_names_the_nearest() {
        let error = "core,grahp".parse::<ToolSet>().unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidInput);
        assert_eq!(error.details["field"], "tools");
        assert_eq!(error.suggestions.first().map(String::as_str), Some("graph"));
        let error = " , ".parse::<ToolSet>().unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidInput);
    }

    #[test]
    fn a_refusal_names_the_tool_and_the_set() {
        let set: ToolSet = "core".parse().unwrap();
        let def = registry::find("graph_path").unwrap();
        assert!(!set.contains(def));
        let error = set.refusal(def);
        assert_eq!(error.code, ErrorCode::ToolNotInSet);
        assert_eq!(error.details["tool"], "graph_path");
        assert_eq!(error.details["set"], "core");
    }
}
