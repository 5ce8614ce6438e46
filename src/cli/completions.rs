//! `cairn completions bash|zsh|fish`: a completion script for the commands,
//! the global options and every tool with its fields (from the registry, as
//! the tool commands themselves parse them).

use std::process::ExitCode;

use clap::{Arg, ArgAction};
use clap_complete::Shell;

use super::output::print_text;
use crate::tools::REGISTRY;
use crate::tools::fields::{Shape, input_fields};

/// The shells a script is made for.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

impl From<CompletionShell> for Shell {
    fn from(shell: CompletionShell) -> Self {
        match shell {
            CompletionShell::Bash => Shell::Bash,
            CompletionShell::Zsh => Shell::Zsh,
            CompletionShell::Fish => Shell::Fish,
        }
    }
}

/// The clap command with one subcommand per tool, so the script completes
/// tool names and their `--field` flags.
pub fn completion_command() -> clap::Command {
    let mut command = super::command();
    for def in REGISTRY {
        let mut tool = clap::Command::new(def.name).about(def.description);
        for field in input_fields(def) {
            let mut arg = Arg::new(field.name.clone())
                .long(field.name.clone())
                .value_name(field.display.clone())
                .help(field.description.clone())
                .action(ArgAction::Set);
            if field.shape == Shape::Boolean {
                arg = arg.num_args(0..=1).value_parser(["true", "false"]);
            } else if let Some(values) = choices(&field.display) {
                arg = arg.value_parser(clap::builder::PossibleValuesParser::new(values));
            }
            tool = tool.arg(arg);
        }
        command = command.subcommand(tool);
    }
    command
}

/// The values of an enum field displayed as `"a" | "b"`.
fn choices(display: &str) -> Option<Vec<String>> {
    let values: Option<Vec<String>> = display
        .split(" | ")
        .map(|v| {
            v.strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .map(str::to_owned)
        })
        .collect();
    values.filter(|v| v.len() > 1)
}

/// Prints the script for `shell`.
pub fn completions_command(shell: CompletionShell) -> ExitCode {
    let mut command = completion_command();
    let mut script = Vec::new();
    clap_complete::generate(Shell::from(shell), &mut command, "cairn", &mut script);
    print_text(&String::from_utf8_lossy(&script));
    ExitCode::SUCCESS
}
