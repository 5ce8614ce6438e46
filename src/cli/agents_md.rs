//! The tool manual for agents (`docs/tools.md`), generated from the registry:
//! how to call cairn, how to read its answers, and every tool with its input
//! fields. A test fails when the committed file drifts from what this renders.

use std::fmt::Write;

use clap::ValueEnum;

use crate::envelope::ErrorCode;
use crate::tools::fields::input_fields;
use crate::tools::{Effect, Module, REGISTRY};

/// The command that rewrites the committed file.
pub const REGENERATE: &str = "cargo run -q -- agents-md > docs/tools.md";

/// The whole text of `docs/tools.md`.
pub fn render() -> String {
    let mut out = String::new();
    out.push_str(HEADER);
    out.push_str(&format!(
        "<!-- Generated from the tool registry by `cairn agents-md`; do not edit by hand.\n     Regenerate with: {REGENERATE} -->\n\n"
    ));
    out.push_str(ENVELOPE_RULES);
    out.push_str(&error_codes());
    out.push_str(&crate::mcp::agents_md_section());
    out.push_str(&tools());
    out
}

const HEADER: &str = "# cairn tool manual for agents

cairn is a coordination hub for AI agents: a task board with claims, notes, a link
graph over both, and full-text search. Every capability is one tool, served the same
way on three surfaces:

- **MCP**: `cairn mcp` (stdio), or streamable HTTP at `/mcp` on a running `cairn serve`.
  `--tools core` (or `/mcp?tools=core`, `CAIRN_TOOLS`) lists only the tools that find,
  claim and finish tasks and read and write notes; a call outside the session's set is
  `tool_not_in_set`.
- **CLI**: `cairn <tool> [--field value ...]` or `cairn call <tool> '<json>'`
  (`-` reads the JSON from stdin). A flag value is parsed by the field's type:
  strings stay strings, arrays take `a,b,c` or JSON, a bare boolean flag means `true`.
  Answers are indented on a terminal and compact when piped; `--dense` drops nulls
  too, `--pretty` forces indentation, and the budget counts the bytes printed.
  `cairn <tool> --help` lists the fields (an envelope with types, bounds,
  defaults and each enumerated field's values as an `enum` array when piped, or with
  `--json`; `cairn help` lists the tools).
  A single bare word is the target `id` (`cairn task_claim 3f9a1c --agent ann`), or
  else fills a tool's only required field (`cairn search migrat*`).
  With `--url http://host:port` (or `CAIRN_URL`; token in `CAIRN_TOKEN`) every tool
  command calls a running cairn instead of a local store, with the same answers.
- **REST**: `/api/v1/...` for browsers and scripts (see `openapi/openapi.json` and
  [the contract](contract.md)).

";

const ENVELOPE_RULES: &str = "## Reading an answer

Every answer is one JSON envelope: `{\"ok\": true, \"data\": ..., \"meta\": ...}` or
`{\"ok\": false, \"error\": ..., \"meta\": ...}`.

1. Branch on `ok`, then on `error.code`; never on `error.message`. `error.details`
   and `error.suggestions` say how to fix the call (e.g. the nearest valid field name).
   A value a failure echoes back that is longer than 200 characters is cut, ending
   in `…[truncated]`, so every failure is small.
2. Retry only when `error.retryable` is true, after `error.retry_after_ms` when given.
   Otherwise change the call: the same call will fail the same way.
3. When `meta.truncated` is true the answer was cut to fit the agent budget (32,000
   size units). Each `meta.trimmed` entry names one cut: `path` (a JSON Pointer into
   `data`), `kind` (`list`, `string`, `subgraph`), `from` (length produced) and `to`
   (length kept). Kept list items are the first ones, in order. Narrow the query
   (filters, a smaller `limit`, a cursor) rather than repeating it.

Ids accept the full id or a unique prefix of at least 6 characters; an ambiguous
prefix answers `ambiguous_id_prefix` with `details.candidates`. Writes accept
`expected_version`; a mismatch answers `version_conflict` with
`details.current_version` and writes nothing.

CLI exit codes: `0` success; `2` the call is wrong (validation, not found,
conflict, too large: fix the call); `1` a runtime failure (store, permission,
internal: fix the store or environment).

";

fn error_codes() -> String {
    let mut out =
        String::from("## Error codes\n\n| code | category | retryable |\n|---|---|---|\n");
    for code in ErrorCode::ALL {
        let spec = code.spec();
        let retryable = if spec.retryable { "yes" } else { "no" };
        let _ = writeln!(
            out,
            "| `{}` | `{}` | {retryable} |",
            code.as_str(),
            spec.category.as_str()
        );
    }
    out.push('\n');
    out
}

fn tools() -> String {
    let mut out = String::from("## Tools\n");
    for &module in Module::value_variants() {
        let tools: Vec<_> = REGISTRY.iter().filter(|t| t.module == module).collect();
        if tools.is_empty() {
            continue;
        }
        let _ = write!(out, "\n### Module `{}`\n", module.name());
        for tool in tools {
            let effect = match tool.effect {
                Effect::Reads => "Reads only.",
                Effect::Writes => "Writes.",
                Effect::Deletes => "Deletes for good.",
            };
            let _ = write!(
                out,
                "\n#### `{}`\n\n{} {effect}\n",
                tool.name, tool.description
            );
            let fields = input_fields(tool);
            if fields.is_empty() {
                out.push_str("\nNo input fields.\n");
                continue;
            }
            out.push_str("\n| field | type | required | description |\n|---|---|---|---|\n");
            for f in fields {
                let mut description = f.description.replace('|', "\\|");
                if let Some(default) = f.default.as_ref().filter(|d| !d.is_null()) {
                    let _ = write!(description, " (default `{default}`)");
                }
                let _ = writeln!(
                    out,
                    "| `{}` | `{}` | {} | {} |",
                    f.name,
                    f.display.replace('|', "\\|"),
                    if f.required { "yes" } else { "no" },
                    description.trim()
                );
            }
        }
    }
    out
}
