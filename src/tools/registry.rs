//! The one list of tools. The MCP tool list, the CLI, the tool manual
//! (docs/tools.md) and the module gate are all made from [`REGISTRY`]; adding
//! a tool is one entry here plus its function.

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::{Ctx, bounds, changes, graph, notes, search, system, tasks};
use crate::envelope::{ErrorCode, ToolError};
use crate::store::{Edge, Note, NoteWritten, Task};

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
    Changes,
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
            Module::Changes => "changes",
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Module::Tasks => "tasks",
            Module::Notes => "notes",
            Module::Graph => "graph",
            Module::Search => "search",
            Module::System => "system",
            Module::Changes => "changes",
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

/// What a call does to the store; MCP clients read it as tool annotations
/// (a read-only tool may be called without asking, a deleting one warrants care).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Changes nothing.
    Reads,
    /// Creates or changes tasks, notes or links.
    Writes,
    /// Removes a note or a link for good.
    Deletes,
}

impl Effect {
    pub const fn as_str(self) -> &'static str {
        match self {
            Effect::Reads => "reads",
            Effect::Writes => "writes",
            Effect::Deletes => "deletes",
        }
    }
}

/// Type-erased handler: JSON arguments in, JSON data out.
pub type Handler = fn(&Ctx<'_>, Value) -> Result<Value, ToolError>;

/// One tool, as every surface sees it.
pub struct ToolDef {
    pub name: &'static str,
    /// One line telling an agent when to use it.
    pub description: &'static str,
    pub module: Module,
    pub effect: Effect,
    pub input_schema: fn() -> schemars::Schema,
    pub output_schema: fn() -> schemars::Schema,
    pub handler: Handler,
    /// Decodes the arguments without running the tool: the same refusal
    /// (`unknown_field`, `missing_field`, `invalid_input`) the tool would give.
    /// A CLI that calls a remote cairn checks a call with it before sending.
    pub check: fn(Value) -> Result<(), ToolError>,
    /// A read of one entity by id, cheap enough to run on the surface's own
    /// thread when the store can answer it at once (see [`crate::store::nowait`]).
    pub point_read: bool,
    /// Writes once, as its last store call, and answers from that write:
    /// it may run on the store's writer thread ([`crate::store::Store::queue_write`]).
    pub one_write: bool,
}

/// Declares one registry entry from a typed tool function.
macro_rules! tool {
    (point_read $($entry:tt)*) => {
        ToolDef {
            point_read: true,
            ..tool!($($entry)*)
        }
    };
    (one_write $($entry:tt)*) => {
        ToolDef {
            one_write: true,
            ..tool!($($entry)*)
        }
    };
    ($name:ident, $module:ident, $effect:ident, $func:path, $input:ty => $output:ty, $description:literal) => {
        ToolDef {
            name: stringify!($name),
            description: $description,
            module: Module::$module,
            effect: Effect::$effect,
            input_schema: input_schema_of::<$input>,
            output_schema: schema_of::<$output>,
            handler: |ctx, args| {
                let input: $input = decode(args)?;
                encode($func(ctx, input)?)
            },
            check: |args| decode::<$input>(args).map(drop),
            point_read: false,
            one_write: false,
        }
    };
}

pub static REGISTRY: &[ToolDef] = &[
    tool!(one_write task_create, Tasks, Writes, tasks::task_create, tasks::TaskCreateInput => Task,
        "Create a task on the board when you find work that someone (you or another agent) should do."),
    tool!(task_list, Tasks, Reads, tasks::task_list, tasks::TaskListInput => tasks::TaskPage,
        "List tasks, filtered by status, tag, claimant or text, most recently updated first; use it to find work."),
    tool!(point_read task_get, Tasks, Reads, tasks::task_get, tasks::TaskIdInput => Task,
        "Read one task (status, live claim, version) before acting on it."),
    tool!(one_write task_update, Tasks, Writes, tasks::task_update, tasks::TaskUpdateInput => Task,
        "Change a task's title, description, tags or priority; pass expected_version to avoid overwriting someone else's change."),
    tool!(one_write task_claim, Tasks, Writes, tasks::task_claim, tasks::TaskClaimInput => Task,
        "Claim a task before working on it so no other agent does the same work (expires after ttl_minutes)."),
    tool!(one_write task_renew, Tasks, Writes, tasks::task_renew, tasks::TaskAgentInput => Task,
        "Extend your claim on a task you are still working on (another 60 minutes from now)."),
    tool!(one_write task_release, Tasks, Writes, tasks::task_release, tasks::TaskAgentInput => Task,
        "Give up your claim on a task you will not finish, so another agent can take it."),
    tool!(one_write task_complete, Tasks, Writes, tasks::task_complete, tasks::TaskTransitionInput => Task,
        "Mark a task done when its work is finished; releases the claim."),
    tool!(one_write task_cancel, Tasks, Writes, tasks::task_cancel, tasks::TaskTransitionInput => Task,
        "Cancel a task that should no longer be done; releases the claim."),
    tool!(one_write task_reopen, Tasks, Writes, tasks::task_reopen, tasks::TaskTransitionInput => Task,
        "Reopen a done or cancelled task when its work turns out to be needed again."),
    tool!(task_board, Tasks, Reads, tasks::task_board, tasks::TaskBoardInput => tasks::TaskBoard,
        "See the whole board at a glance: open, claimed, done and cancelled columns with each card's claim."),
    tool!(note_write, Notes, Writes, notes::note_write, notes::NoteWriteInput => NoteWritten,
        "Save knowledge as a note (no id creates, an id replaces); [[Title]] in content links to other notes."),
    tool!(point_read note_read, Notes, Reads, notes::note_read, notes::NoteReadInput => Note,
        "Read a note's full content by id, id prefix or slug."),
    tool!(note_list, Notes, Reads, notes::note_list, notes::NoteListInput => notes::NotePage,
        "List notes (without content), filtered by tag or text, most recently updated first."),
    tool!(note_delete, Notes, Deletes, notes::note_delete, notes::NoteDeleteInput => notes::NoteDeleted,
        "Delete a note that is wrong or obsolete; its links go with it."),
    tool!(link_add, Graph, Writes, graph::link_add, graph::LinkAddInput => graph::LinkAdded,
        "Record how two tasks or notes relate (relates_to, depends_on, derived_from, blocks)."),
    tool!(link_remove, Graph, Deletes, graph::link_remove, graph::LinkRemoveInput => Edge,
        "Remove a link you added by mistake or that no longer holds."),
    tool!(graph_neighbours, Graph, Reads, graph::graph_neighbours, graph::NeighboursInput => graph::Subgraph,
        "See what a task or note is connected to, up to 3 hops away, before changing it."),
    tool!(graph_path, Graph, Reads, graph::graph_path, graph::PathInput => graph::GraphPath,
        "Find how two tasks or notes are connected (shortest chain of links)."),
    tool!(graph_export, Graph, Reads, graph::graph_export, graph::ExportInput => graph::Subgraph,
        "Export the link graph (or the part around one node) as nodes and edges, e.g. to draw it."),
    tool!(graph_doctor, Graph, Writes, graph::graph_doctor, graph::DoctorInput => graph::DoctorReport,
        "Check the link graph for dangling edges, self loops, duplicates and orphans; fix: true repairs edges."),
    tool!(search, Search, Reads, search::search, search::SearchInput => search::SearchResults,
        "Search every task and note by words, best matches first, with highlighted snippets."),
    tool!(changes_since, Changes, Reads, changes::changes_since, changes::ChangesSinceInput => changes::ChangesPage,
        "Learn what changed since you last looked: events after your cursor, oldest first; keep next_cursor for next time."),
    tool!(health, System, Reads, system::health, system::HealthInput => system::HealthReport,
        "Report version, store kind, schema version, counts and whether search works; use it to check cairn is up."),
];

/// The JSON Schema of a tool's input or output, as MCP and the CLI show it:
/// only standard `format` values (see [`bounds::standard_formats`]).
pub fn schema_of<T: schemars::JsonSchema>() -> schemars::Schema {
    let mut schema = schemars::schema_for!(T);
    bounds::standard_formats(&mut schema);
    schema
}

/// A tool input's JSON Schema: [`schema_of`], and no string may hold a NUL
/// (see [`bounds::no_nul_strings`]).
pub fn input_schema_of<T: schemars::JsonSchema>() -> schemars::Schema {
    let mut schema = schema_of::<T>();
    bounds::no_nul_strings(&mut schema);
    schema
}

/// The tool's input JSON Schema as a value, built once per process (surfaces
/// read it per request to type query values and flags).
pub fn input_schema_value(def: &ToolDef) -> &'static Value {
    static SCHEMAS: std::sync::OnceLock<std::collections::HashMap<&'static str, Value>> =
        std::sync::OnceLock::new();
    let schemas = SCHEMAS.get_or_init(|| {
        REGISTRY
            .iter()
            .map(|def| (def.name, (def.input_schema)().to_value()))
            .collect()
    });
    static EMPTY: Value = Value::Null;
    schemas.get(def.name).unwrap_or(&EMPTY)
}

pub fn find(name: &str) -> Option<&'static ToolDef> {
    REGISTRY.iter().find(|t| t.name == name)
}

/// `invalid_input` for a tool name that is not registered, with the nearest names.
pub fn unknown_tool(name: &str) -> ToolError {
    let suggestions = nearest(name, REGISTRY.iter().map(|t| t.name));
    ToolError::invalid_field(
        "tool",
        format!("There is no tool named `{name}`."),
        format!("no tool named `{name}`"),
    )
    .suggest(suggestions)
}

/// Up to three candidates closest to `word` by edit distance (Levenshtein
/// counting a swap of two neighbouring letters as one edit, so `opne` names
/// `open` before `done`).
pub fn nearest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(usize, &str)> = candidates
        .map(|c| (strsim::osa_distance(word, c), c))
        .filter(|(d, c)| *d <= (c.len().max(word.len()) / 2).max(2))
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_owned())
        .collect()
}

/// Decodes tool arguments: an unknown key is `unknown_field` (with the nearest
/// valid names), a missing required key `missing_field`, a wrong type or value
/// `invalid_input` naming the field. No arguments at all count as `{}`.
///
/// Messages are plain sentences saying what the field expects (read from the
/// input's JSON Schema); serde's own wording stays in `details.reason`.
pub fn decode<T: DeserializeOwned + schemars::JsonSchema + 'static>(
    args: Value,
) -> Result<T, ToolError> {
    let mut args = match args {
        Value::Null => Value::Object(Default::default()),
        Value::Object(map) => Value::Object(map),
        other => {
            let given = json_type(&other);
            return Err(ToolError::invalid_field(
                "arguments",
                format!("The arguments must be a JSON object, not {given}."),
                format!("must be a JSON object, not {given}"),
            ));
        }
    };
    refuse_nul(&args, ".")?;
    bounds::integral_numbers(&mut args);
    let decoded = serde_path_to_error::deserialize(&args).map_err(|e| {
        let path = e.path().to_string();
        let reason = e.inner().to_string();
        argument_error(&path, &reason, || schemars::schema_for!(T).to_value())
    })?;
    bounds::check(&args, checked_schema::<T>())?;
    Ok(decoded)
}

/// [`schema_of`] `T` as a value, made once per type and process: every
/// decoding checks its arguments against it, and making it costs more than
/// the rest of a small call.
fn checked_schema<T: schemars::JsonSchema + 'static>() -> &'static Value {
    use std::any::TypeId;
    use std::collections::HashMap;
    use std::sync::{LazyLock, PoisonError, RwLock};

    static SCHEMAS: LazyLock<RwLock<HashMap<TypeId, &'static Value>>> =
        LazyLock::new(RwLock::default);
    let id = TypeId::of::<T>();
    let known = SCHEMAS
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&id)
        .copied();
    known.unwrap_or_else(|| {
        // One per input type: a bounded set, kept for the process's life.
        let made: &'static Value = Box::leak(Box::new(schema_of::<T>().to_value()));
        *SCHEMAS
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(id)
            .or_insert(made)
    })
}

/// No text a tool stores or searches may hold a NUL character: PostgreSQL
/// text cannot, FTS5 reads it as the end of its query, and every backend must
/// answer the same. Refused at decoding, on every surface, naming the field.
fn refuse_nul(value: &Value, path: &str) -> Result<(), ToolError> {
    match value {
        Value::String(s) if s.contains('\0') => Err(ToolError::invalid_input(
            path.trim_start_matches('.'),
            "must not contain a NUL character (U+0000)",
        )),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| refuse_nul(v, &format!("{path}[{i}]"))),
        Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            if k.contains('\0') {
                return Err(ToolError::invalid_input(
                    "arguments",
                    "must not contain a NUL character (U+0000) in a key",
                ));
            }
            refuse_nul(v, &join(path, k))
        }),
        _ => Ok(()),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The first backticked word of a serde message.
fn quoted(reason: &str) -> Option<&str> {
    let start = reason.find('`')? + 1;
    let len = reason[start..].find('`')?;
    Some(&reason[start..start + len])
}

/// Joins a parent path (`.` at the top) and a key.
fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() || parent == "." {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

fn argument_error(path: &str, reason: &str, input_schema: impl FnOnce() -> Value) -> ToolError {
    if let Some(rest) = reason.strip_prefix("unknown field ") {
        let field = quoted(rest).unwrap_or_default();
        // serde_path_to_error ends the path with the unknown key itself.
        let parent = path
            .strip_suffix(field)
            .map(|p| p.trim_end_matches('.'))
            .unwrap_or(path);
        let valid: Vec<&str> = rest
            .split_once("expected ")
            .map(|(_, list)| list.split('`').skip(1).step_by(2).collect())
            .unwrap_or_default();
        let full = join(parent, field);
        let suggestions = nearest(field, valid.iter().copied());
        return ToolError::new(
            ErrorCode::UnknownField,
            if suggestions.is_empty() {
                format!("Unknown field `{full}`.")
            } else {
                format!("Unknown field `{full}`; did you mean `{}`?", suggestions[0])
            },
        )
        .detail("field", full)
        .suggest(suggestions);
    }
    if let Some(rest) = reason.strip_prefix("missing field ") {
        let field = join(path, quoted(rest).unwrap_or_default());
        return ToolError::new(
            ErrorCode::MissingField,
            format!("Missing required field `{field}`."),
        )
        .detail("field", field);
    }
    let field = if path.is_empty() || path == "." {
        "arguments"
    } else {
        path
    };
    let schema = input_schema();
    let expects = field_schema(&schema, field).and_then(|f| expectation(&schema, f));
    if let Some(rest) = reason.strip_prefix("unknown variant ") {
        let given = quoted(rest).unwrap_or_default();
        let valid: Vec<&str> = rest
            .split_once("expected ")
            .map(|(_, list)| list.split('`').skip(1).step_by(2).collect())
            .unwrap_or_default();
        let suggestions = nearest(given, valid.iter().copied());
        let expects = expects.unwrap_or_else(|| one_of(&valid));
        let message = match suggestions.first() {
            Some(s) => format!("`{field}` must be {expects}; did you mean `{s}`?"),
            None => format!("`{field}` must be {expects}."),
        };
        return ToolError::invalid_field(field, message, reason).suggest(suggestions);
    }
    let expects = expects.or_else(|| serde_expectation(reason));
    let message = match (expects, given_kind(reason)) {
        // A number too large for the field's integer type.
        _ if reason.starts_with("invalid value: integer") => format!("`{field}` is out of range."),
        (Some(expects), Some(given)) => format!("`{field}` must be {expects}, not {given}."),
        (Some(expects), None) => format!("`{field}` must be {expects}."),
        (None, _) => format!("`{field}` does not have a value of the expected type."),
    };
    ToolError::invalid_field(field, message, reason)
}

/// The schema of the field at a serde path (`cursors.open`, `columns[0]`).
fn field_schema<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    let mut at = root;
    for part in path.split('.') {
        let (key, indexes) = part.split_once('[').unwrap_or((part, ""));
        if !key.is_empty() {
            at = alternatives(root, at)
                .into_iter()
                .find_map(|s| s.get("properties")?.get(key))?;
        }
        // `tags[0]`, `a[0][1]`: one step into `items` per index.
        for _ in indexes.matches(']') {
            at = alternatives(root, at)
                .into_iter()
                .find_map(|s| s.get("items"))?;
        }
    }
    Some(at)
}

/// The schemas a value may match, `$ref`s followed, `null` (an omitted option) left out.
fn alternatives<'a>(root: &'a Value, schema: &'a Value) -> Vec<&'a Value> {
    let schema = deref(root, schema);
    let branches = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array);
    match branches {
        Some(list) => list
            .iter()
            .map(|s| deref(root, s))
            .filter(|s| s.get("type") != Some(&Value::String("null".into())))
            .collect(),
        None => vec![schema],
    }
}

fn deref<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| root.get("$defs")?.get(name))
        .unwrap_or(schema)
}

/// The allowed string values when the schema is an enumeration.
fn enum_values(root: &Value, schema: &Value) -> Option<Vec<String>> {
    let mut values = Vec::new();
    for alt in alternatives(root, schema) {
        if let Some(list) = alt.get("enum").and_then(Value::as_array) {
            values.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
        } else if let Some(c) = alt.get("const").and_then(Value::as_str) {
            values.push(c.to_owned());
        } else if alt.get("anyOf").is_some() || alt.get("oneOf").is_some() {
            values.extend(enum_values(root, alt)?);
        } else {
            return None;
        }
    }
    (!values.is_empty()).then_some(values)
}

/// What a field's schema expects, in words: "a string", "one of `a` or `b`".
fn expectation(root: &Value, schema: &Value) -> Option<String> {
    if let Some(values) = enum_values(root, schema) {
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        return Some(one_of(&values));
    }
    let [alt] = alternatives(root, schema)[..] else {
        return None;
    };
    let types: Vec<&str> = match alt.get("type")? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    let [kind] = types
        .into_iter()
        .filter(|t| *t != "null")
        .collect::<Vec<_>>()[..]
    else {
        return None;
    };
    Some(match kind {
        "array" => match alt.get("items") {
            Some(items) => match enum_values(root, items) {
                Some(values) => {
                    let values: Vec<&str> = values.iter().map(String::as_str).collect();
                    format!("a list of values from {}", all_of(&values))
                }
                None => match expectation(root, items).as_deref() {
                    Some("a string") => "a list of strings".to_owned(),
                    Some("an integer") => "a list of integers".to_owned(),
                    _ => "a list".to_owned(),
                },
            },
            None => "a list".to_owned(),
        },
        other => type_words(other)?.to_owned(),
    })
}

fn type_words(json_type: &str) -> Option<&'static str> {
    Some(match json_type {
        "string" => "a string",
        "integer" => "an integer",
        "number" => "a number",
        "boolean" => "true or false",
        "object" => "an object",
        "array" => "a list",
        _ => return None,
    })
}

/// "one of `a`, `b` or `c`" (or just "`a`").
fn one_of(values: &[&str]) -> String {
    match values {
        [] => "a valid value".to_owned(),
        [one] => format!("`{one}`"),
        _ => format!("one of {}", joined(values, "or")),
    }
}

/// "`a`, `b` and `c`".
fn all_of(values: &[&str]) -> String {
    joined(values, "and")
}

fn joined(values: &[&str], last: &str) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
    match quoted.split_last() {
        Some((tail, head)) if !head.is_empty() => format!("{} {last} {tail}", head.join(", ")),
        Some((tail, _)) => tail.clone(),
        None => String::new(),
    }
}

/// What serde says was expected, in words, when the schema could not tell.
fn serde_expectation(reason: &str) -> Option<String> {
    let (_, expected) = reason.rsplit_once(", expected ")?;
    let words = match expected.trim() {
        "a string" | "string" => "a string",
        "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" | "usize" | "isize" => {
            "an integer"
        }
        "f32" | "f64" => "a number",
        "a boolean" | "bool" => "true or false",
        "a sequence" => "a list",
        e if e.starts_with("a map") || e.starts_with("struct ") => "an object",
        _ => return None,
    };
    Some(words.to_owned())
}

/// What was given instead, in words, from serde's `invalid type: <given>, expected ...`.
fn given_kind(reason: &str) -> Option<&'static str> {
    let given = reason.strip_prefix("invalid type: ")?;
    Some(match given {
        g if g.starts_with("integer") => "a number",
        g if g.starts_with("floating point") => "a decimal number",
        g if g.starts_with("string") => "a string",
        g if g.starts_with("boolean") => "true or false",
        g if g.starts_with("sequence") => "a list",
        g if g.starts_with("map") => "an object",
        g if g.starts_with("null") || g.starts_with("unit") => "null",
        _ => return None,
    })
}

fn encode<T: Serialize>(output: T) -> Result<Value, ToolError> {
    serde_json::to_value(output).map_err(|_| ToolError::internal())
}
