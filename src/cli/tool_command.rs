//! `cairn <tool> [--field value ...]` and `cairn call <tool> '<json>'`: turn
//! the command line into tool arguments, call the tool, print one envelope.
//!
//! A call that is wrong (unknown tool or flag, bad value) is answered before
//! the store is opened, so it exits 2 even where the store is broken.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::ValueEnum;
use serde_json::{Map, Value};

use super::output::print_envelope;
use super::remote::Remote;
use super::{GlobalArgs, help};
use crate::envelope::{self, Envelope, ErrorCode, Layout, Meta, ToolError};
use crate::tools::fields::{InputField, Shape, input_fields};
use crate::tools::{Module, ToolDef, registry};

/// Options recognised after the tool name too (`cairn task_get --id x --dense`).
pub const GLOBAL_FLAGS: [&str; 6] = ["dense", "pretty", "json", "db", "disable", "url"];

/// How the one envelope is printed: `--dense` (compact, no nulls) or
/// `--pretty` when asked; otherwise indented on a terminal and compact when
/// piped. The budget is measured on whichever text is printed.
pub fn layout(dense: bool, pretty: bool) -> Layout {
    if dense {
        Layout::Dense
    } else if pretty || std::io::stdout().is_terminal() {
        Layout::Pretty
    } else {
        Layout::Compact
    }
}

/// `--dense` / `--pretty` anywhere on the command line (for answers given
/// before the line is parsed).
pub fn layout_from_args() -> Layout {
    let has = |flag: &str| std::env::args_os().any(|a| a == flag);
    layout(has("--dense"), has("--pretty"))
}

/// What `cairn <tool> ...` asked for.
pub struct Invocation {
    pub tool: &'static ToolDef,
    pub arguments: Map<String, Value>,
    pub dense: bool,
    pub pretty: bool,
    pub db: Option<String>,
    pub disable: Option<Vec<Module>>,
    pub url: Option<String>,
}

impl std::fmt::Debug for Invocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Invocation")
            .field("tool", &self.tool.name)
            .field("arguments", &self.arguments)
            .field("dense", &self.dense)
            .field("pretty", &self.pretty)
            .field("db", &self.db.as_ref().map(|_| "…"))
            .field("disable", &self.disable)
            .field("url", &self.url)
            .finish()
    }
}

/// `cairn <tool> [--field value ...]`.
pub fn run_tool_command(global: &GlobalArgs, layout: Layout, words: &[String]) -> ExitCode {
    let Some((name, rest)) = words.split_first() else {
        let error = ToolError::invalid_input("tool", "no tool given");
        return print_envelope(failure("", error), layout);
    };
    if rest.iter().any(|w| w == "--help" || w == "-h")
        && let Some(def) = registry::find(name)
    {
        return help::print_tool_help(def, rest, layout);
    }
    match parse_invocation(name, rest) {
        Err(error) => {
            // The line did not parse, but its `--dense` / `--pretty` still count.
            let has = |flag: &str| rest.iter().any(|w| w == flag);
            let layout = match layout {
                Layout::Dense => Layout::Dense,
                _ if has("--dense") => Layout::Dense,
                _ if has("--pretty") => Layout::Pretty,
                other => other,
            };
            print_envelope(failure(name, error), layout)
        }
        Ok(call) => {
            let mut global = global.clone();
            if let Some(db) = call.db {
                global.db = db;
            }
            if let Some(disable) = call.disable {
                global.disable = disable;
            }
            if let Some(url) = call.url {
                global.url = Some(url);
            }
            let layout = match layout {
                Layout::Dense => Layout::Dense,
                _ if call.dense => Layout::Dense,
                _ if call.pretty => Layout::Pretty,
                other => other,
            };
            run(&global, call.tool, Value::Object(call.arguments), layout)
        }
    }
}

/// `cairn help <tool>`: the tool's help (clap only knows the fixed subcommands).
pub fn help_for_tool(args: &[String]) -> Option<ExitCode> {
    let mut words = args.iter().skip(1);
    let mut command = None;
    while let Some(word) = words.next() {
        match word.as_str() {
            "--db" | "--disable" | "--url" => {
                words.next();
            }
            w if w.starts_with('-') => {}
            w => {
                command = Some(w);
                break;
            }
        }
    }
    if command != Some("help") {
        return None;
    }
    let def = registry::find(words.next()?)?;
    Some(help::print_tool_help(def, args, layout_from_args()))
}

/// A command line clap rejects: help and version print as text; anything
/// else is one envelope (`unknown_field` with clap's suggestion, or
/// `invalid_input`) and exit 2, like every other wrong call.
pub fn usage_error(error: clap::Error) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    match error.kind() {
        ErrorKind::DisplayVersion => error.exit(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let words: Vec<String> = std::env::args().collect();
            if help::as_text(&words) {
                error.exit()
            }
            let command = super::command();
            let sub = help_subcommand(&command, &words);
            return help::print_command_help(&command, sub.as_deref(), layout_from_args());
        }
        _ => {}
    }
    let context = |kind| match error.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    // clap's first paragraph, on one line, without its `error: ` prefix.
    let rendered = error.render().to_string();
    let summary = rendered
        .split("\n\n")
        .next()
        .unwrap_or("invalid command line")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let summary = summary.trim_start_matches("error: ").to_owned();
    let tool_error = match error.kind() {
        ErrorKind::UnknownArgument => {
            let flag = context(ContextKind::InvalidArg).join("");
            ToolError::new(ErrorCode::UnknownField, format!("{summary}."))
                .detail("field", flag.trim_start_matches('-'))
                .suggest(
                    context(ContextKind::SuggestedArg)
                        .into_iter()
                        .map(|s| s.trim_start_matches('-').to_owned()),
                )
        }
        ErrorKind::MissingRequiredArgument => {
            let missing = context(ContextKind::InvalidArg).join(", ");
            let field = missing
                .trim_matches(|c| c == '<' || c == '>')
                .to_lowercase();
            ToolError::new(ErrorCode::MissingField, format!("{summary}.")).detail("field", field)
        }
        // `--tools <SET>`: the flag names the field.
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            let flag = context(ContextKind::InvalidArg).join("");
            let field = flag
                .trim_start_matches('-')
                .split([' ', '='])
                .next()
                .unwrap_or_default()
                .replace('-', "_");
            if field.is_empty() {
                ToolError::invalid_input("arguments", summary)
            } else {
                ToolError::invalid_input(&field, summary)
            }
        }
        _ => ToolError::invalid_input("arguments", summary),
    };
    // clap did not get as far as reading `--dense`; honour it all the same.
    print_envelope(failure("cli", tool_error), layout_from_args())
}

/// The fixed command whose help was asked for (`cairn serve --help`,
/// `cairn help serve`), if any.
fn help_subcommand(command: &clap::Command, words: &[String]) -> Option<String> {
    words
        .iter()
        .skip(1)
        .filter(|w| !w.starts_with('-') && *w != "help")
        .find(|w| command.find_subcommand(w.as_str()).is_some())
        .cloned()
}

/// `cairn call <tool> '<json>'` (`-` reads the JSON from stdin).
pub fn run_call_command(global: &GlobalArgs, layout: Layout, tool: &str, json: &str) -> ExitCode {
    let Some(def) = registry::find(tool) else {
        return print_envelope(failure(tool, registry::unknown_tool(tool)), layout);
    };
    let text = if json == "-" {
        let mut input = String::new();
        if std::io::Read::read_to_string(&mut std::io::stdin(), &mut input).is_err() {
            let error = ToolError::new(ErrorCode::InvalidJson, "Standard input is not UTF-8.");
            return print_envelope(failure(tool, error), layout);
        }
        input
    } else {
        json.to_owned()
    };
    match parse_arguments(&text) {
        Ok(arguments) => run(global, def, arguments, layout),
        Err(error) => print_envelope(failure(tool, error), layout),
    }
}

fn parse_arguments(text: &str) -> Result<Value, ToolError> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        ToolError::new(ErrorCode::InvalidJson, "The arguments are not valid JSON.")
            .detail("line", e.line())
            .detail("column", e.column())
    })?;
    if !value.is_object() {
        return Err(ToolError::invalid_input(
            "arguments",
            "expected a JSON object of field names to values",
        ));
    }
    Ok(value)
}

/// Where a tool command runs.
enum Target {
    /// The store `--db` names, opened by this process.
    Local(crate::tools::Cairn),
    /// A running cairn (`--url`).
    Remote(Remote),
}

/// Calls the tool (on the local store, or on the cairn at `--url`) and prints its envelope.
fn run(global: &GlobalArgs, def: &'static ToolDef, arguments: Value, layout: Layout) -> ExitCode {
    let request_id = envelope::new_request_id();
    let failed = |error: ToolError| {
        let meta = Meta::new(def.name, def.module.layer(), &request_id);
        print_envelope(Envelope::failure(error, meta), layout)
    };
    let target = match global.url.as_deref().filter(|u| !u.is_empty()) {
        Some(url) => Remote::parse_in(url, std::env::var("CAIRN_TOKEN").ok(), &global.project)
            .map(Target::Remote),
        None => global.open_cairn().map(Target::Local),
    };
    let target = match target {
        Ok(target) => target,
        Err(error) => return failed(error),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            tracing::error!(%error, "cannot start the async runtime");
            return failed(ToolError::internal());
        }
    };
    let span = tracing::info_span!("cli_call", tool = def.name, request_id = %request_id);
    let call = async {
        match &target {
            Target::Remote(remote) => remote.call(def, arguments, &request_id).await,
            Target::Local(cairn) => cairn.call(def.name, arguments, &request_id).await,
        }
    };
    let envelope = runtime.block_on(tracing::Instrument::instrument(call, span));
    print_envelope(envelope, layout)
}

fn failure(tool: &str, error: ToolError) -> Envelope {
    let layer = registry::find(tool).map_or("", |d| d.module.layer());
    Envelope::failure(error, Meta::new(tool, layer, &envelope::new_request_id()))
}

/// Parses `--field value` words into the tool's arguments.
pub fn parse_invocation(name: &str, words: &[String]) -> Result<Invocation, ToolError> {
    let def = registry::find(name).ok_or_else(|| registry::unknown_tool(name))?;
    let fields = input_fields(def);
    let mut call = Invocation {
        tool: def,
        arguments: Map::new(),
        dense: false,
        pretty: false,
        db: None,
        disable: None,
        url: None,
    };
    let mut positionals = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        i += 1;
        let Some(flag) = word.strip_prefix("--") else {
            positionals.push(word.clone());
            continue;
        };
        let (key, inline) = match flag.split_once('=') {
            Some((k, v)) => (k, Some(v.to_owned())),
            None => (flag, None),
        };
        let key = key.replace('-', "_");
        let field = fields.iter().find(|f| f.name == key);
        if field.is_none() && GLOBAL_FLAGS.contains(&key.as_str()) {
            let mut value = || {
                inline.clone().or_else(|| {
                    let next = words.get(i).filter(|w| !w.starts_with("--")).cloned();
                    i += usize::from(next.is_some());
                    next
                })
            };
            match key.as_str() {
                "dense" => call.dense = true,
                "pretty" => call.pretty = true,
                "json" => {}
                "db" => {
                    call.db = Some(value().ok_or_else(|| needs_value("db"))?);
                }
                "url" => {
                    call.url = Some(value().ok_or_else(|| needs_value("url"))?);
                }
                _ => {
                    let list = value().ok_or_else(|| needs_value("disable"))?;
                    call.disable = Some(parse_modules(&list)?);
                }
            }
            continue;
        }
        let Some(field) = field else {
            return Err(unknown_flag(def, &key, &fields));
        };
        let raw = match inline {
            Some(v) => Some(v),
            None => {
                let next = words.get(i).filter(|w| !w.starts_with("--")).cloned();
                i += usize::from(next.is_some());
                next
            }
        };
        let value = match raw {
            Some(raw) => field.parse(&raw)?,
            // A bare `--flag` is `true` for a boolean field.
            None if field.shape == Shape::Boolean => Value::Bool(true),
            None => return Err(needs_value(&field.name)),
        };
        match (call.arguments.get_mut(&field.name), value) {
            // A repeated array flag appends: `--tags a --tags b`.
            (Some(Value::Array(items)), Value::Array(more))
                if matches!(field.shape, Shape::Array(_)) =>
            {
                items.extend(more)
            }
            (_, value) => {
                call.arguments.insert(field.name.clone(), value);
            }
        }
    }
    fill_positional(def, &fields, positionals, &mut call.arguments)?;
    Ok(call)
}

/// One bare word names the target: the tool's `id` field when it has one
/// (`cairn task_claim abc123 --agent ann`), else its only required field
/// (`cairn search migrat*`).
fn fill_positional(
    def: &ToolDef,
    fields: &[InputField],
    positionals: Vec<String>,
    arguments: &mut Map<String, Value>,
) -> Result<(), ToolError> {
    if positionals.is_empty() {
        return Ok(());
    }
    let target: Vec<&InputField> = match fields.iter().find(|f| f.name == "id") {
        Some(id) => vec![id],
        None => fields.iter().filter(|f| f.required).collect(),
    };
    match (positionals.as_slice(), target.as_slice()) {
        ([word], [field]) if !arguments.contains_key(&field.name) => {
            let value = field.parse(word)?;
            arguments.insert(field.name.clone(), value);
            Ok(())
        }
        _ => Err(ToolError::invalid_input(
            "arguments",
            format!(
                "unexpected argument `{}`; pass fields as `--name value` (see `cairn {} --help`)",
                positionals[0], def.name
            ),
        )),
    }
}

fn parse_modules(list: &str) -> Result<Vec<Module>, ToolError> {
    list.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            Module::from_str(s.trim(), true).map_err(|_| {
                let names = Module::value_variants()
                    .iter()
                    .map(|m| m.name())
                    .collect::<Vec<_>>();
                ToolError::invalid_input("disable", format!("no module named `{s}`"))
                    .suggest(registry::nearest(s, names.into_iter()))
            })
        })
        .collect()
}

fn needs_value(field: &str) -> ToolError {
    ToolError::invalid_input(
        field,
        format!("`--{field}` needs a value (use `--{field}=VALUE` for a value starting with `--`)"),
    )
}

fn unknown_flag(def: &ToolDef, key: &str, fields: &[InputField]) -> ToolError {
    let names = fields.iter().map(|f| f.name.as_str());
    ToolError::new(
        ErrorCode::UnknownField,
        format!("`{}` has no field `{key}`.", def.name),
    )
    .detail("field", key)
    .suggest(registry::nearest(key, names))
}
