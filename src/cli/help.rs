//! Help, for people and for programs: text on a terminal; one envelope when
//! stdout is piped or `--json` is given, so an agent that parses stdout gets
//! the tool list, or a tool's fields with types, bounds and defaults (the data
//! docs/tools.md is made from).

use std::io::IsTerminal;
use std::process::ExitCode;

use serde_json::{Map, Value, json};

use super::output::{print_envelope, print_text};
use crate::envelope::{self, Envelope, Layout, Meta};
use crate::tools::fields::input_fields;
use crate::tools::{REGISTRY, ToolDef};

/// `meta.tool` of a help envelope.
const HELP: &str = "help";

/// Whether help goes out as text: on a terminal, unless `--json` asks otherwise.
pub fn as_text(words: &[String]) -> bool {
    std::io::stdout().is_terminal() && !words.iter().any(|w| w == "--json")
}

/// `cairn <tool> --help` and `cairn help <tool>`.
pub fn print_tool_help(def: &ToolDef, words: &[String], layout: Layout) -> ExitCode {
    if as_text(words) {
        print_text(&tool_text(def));
        return ExitCode::SUCCESS;
    }
    print_help_envelope(tool_data(def), layout)
}

/// `cairn help` and `cairn --help` (`command` is clap's rendering), or the
/// help of a fixed command such as `serve` (`subcommand`).
pub fn print_command_help(
    command: &clap::Command,
    subcommand: Option<&str>,
    layout: Layout,
) -> ExitCode {
    let data = match subcommand.and_then(|name| command.find_subcommand(name)) {
        Some(sub) => command_data(sub),
        None => overview_data(command),
    };
    print_help_envelope(data, layout)
}

fn print_help_envelope(data: Value, layout: Layout) -> ExitCode {
    let meta = Meta::new(HELP, "", &envelope::new_request_id());
    print_envelope(Envelope::success(data, meta), layout)
}

/// The tool list, the other commands, the shared options and the exit codes.
pub fn overview_data(command: &clap::Command) -> Value {
    let tools: Vec<Value> = REGISTRY.iter().map(tool_summary).collect();
    let commands: Vec<Value> = command
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .map(|c| json!({"name": c.get_name(), "description": about(c)}))
        .collect();
    json!({
        "usage": [
            "cairn <tool> [--field value ...]",
            "cairn call <tool> '<json>'",
            "cairn <command> [options]",
        ],
        "tools": tools,
        "commands": commands,
        "options": options(command),
        "exit_codes": exit_codes(),
    })
}

/// A tool: what it does, its effect, and each field with its type, bounds and default.
pub fn tool_data(def: &ToolDef) -> Value {
    let fields: Vec<Value> = input_fields(def)
        .into_iter()
        .map(|f| {
            let mut field = Map::new();
            field.insert("name".into(), f.name.into());
            field.insert("type".into(), f.display.into());
            if let Some(values) = f.values {
                field.insert("enum".into(), Value::Array(values));
            }
            field.insert("required".into(), f.required.into());
            field.insert("description".into(), f.description.into());
            if let Some(default) = f.default.filter(|d| !d.is_null()) {
                field.insert("default".into(), default);
            }
            field.extend(f.bounds);
            Value::Object(field)
        })
        .collect();
    let mut data = tool_summary(def);
    data["usage"] = json!([
        format!("cairn {} [--field value ...]", def.name),
        format!("cairn call {} '<json>'", def.name),
    ]);
    data["fields"] = Value::Array(fields);
    data["exit_codes"] = exit_codes();
    data
}

fn tool_summary(def: &ToolDef) -> Value {
    json!({
        "name": def.name,
        "description": def.description,
        "module": def.module.name(),
        "effect": def.effect.as_str(),
    })
}

/// A fixed command (`serve`, `dump`, ...): what it does and its options.
fn command_data(command: &clap::Command) -> Value {
    json!({
        "name": command.get_name(),
        "description": about(command),
        "options": options(command),
        "exit_codes": exit_codes(),
    })
}

fn about(command: &clap::Command) -> String {
    command
        .get_about()
        .map(|a| a.to_string())
        .unwrap_or_default()
}

/// The options of a command (positionals included), with env and defaults.
fn options(command: &clap::Command) -> Vec<Value> {
    command
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"))
        .map(|a| {
            let mut option = Map::new();
            let name = match a.get_long() {
                Some(long) => format!("--{long}"),
                None => format!("<{}>", a.get_id()),
            };
            option.insert("name".into(), name.into());
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            option.insert("description".into(), help.into());
            if let Some(env) = a.get_env() {
                option.insert("env".into(), env.to_string_lossy().into_owned().into());
            }
            let defaults: Vec<String> = a
                .get_default_values()
                .iter()
                .map(|d| d.to_string_lossy().into_owned())
                .collect();
            if !defaults.is_empty() {
                option.insert("default".into(), defaults.join(",").into());
            }
            option.insert("required".into(), a.is_required_set().into());
            Value::Object(option)
        })
        .collect()
}

/// What each exit code asks of the caller.
fn exit_codes() -> Value {
    json!({
        "0": "success",
        "1": "a runtime failure: fix the store or environment",
        "2": "the call is wrong (validation, not found, conflict, too large): fix the call",
    })
}

/// `cairn <tool> --help` as text: what the tool does and its fields.
pub fn tool_text(def: &ToolDef) -> String {
    let mut out = format!(
        "{}\n\nUsage: cairn {} [--field value ...]\n       cairn call {} '<json>'\n",
        def.description, def.name, def.name
    );
    let fields = input_fields(def);
    if fields.is_empty() {
        out.push_str("\nThis tool takes no fields.\n");
    } else {
        out.push_str("\nFields:\n");
        for f in &fields {
            let required = if f.required { ", required" } else { "" };
            out.push_str(&format!("  --{} <{}{}>", f.name, f.display, required));
            if !f.description.is_empty() {
                out.push_str(&format!("\n      {}", f.description));
            }
            out.push('\n');
        }
    }
    out.push_str(
        "\nOptions: --dense (compact, no nulls), --pretty (indented), --json (help as an envelope),\n\
         --db PATH|URL, --disable MODULES, --url URL (a running cairn).\n\
         Exit codes: 0 success, 2 fix the call, 1 fix the store or environment.\n",
    );
    out
}

/// The tool list under `cairn --help`.
pub fn tool_overview() -> String {
    let width = REGISTRY.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let mut out = String::from("Tools (`cairn <tool> --help` lists a tool's fields):\n");
    for tool in REGISTRY {
        out.push_str(&format!("  {:width$}  {}\n", tool.name, tool.description));
    }
    out.push_str(
        "\nEvery tool command prints one envelope on stdout; exit 0 success, \
         2 fix the call, 1 fix the store or environment. Help is an envelope \
         too when stdout is not a terminal (or with --json).",
    );
    out
}
