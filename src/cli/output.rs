//! What the CLI prints: one envelope per command at the agent tier, or a
//! text, on stdout (or stderr when stdout carries data), and the exit code.

use std::io::Write;
use std::process::ExitCode;

use crate::envelope::{self, Envelope, Form, Layout, Tier};

use super::exit_code;

/// Prints the envelope at the agent tier, in `layout`, and picks the exit code.
pub fn print_envelope(envelope: Envelope, layout: Layout) -> ExitCode {
    print_envelope_to(Stream::Stdout, envelope, layout)
}

/// Where an envelope goes: stdout, or stderr when stdout carries data (`dump`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// [`print_envelope`] on `stream`.
pub fn print_envelope_to(stream: Stream, envelope: Envelope, layout: Layout) -> ExitCode {
    let code = exit_code(&envelope);
    let text = envelope::render_printed(envelope, Tier::Agent, Form::Envelope, layout);
    write_text(stream, &text);
    code
}

/// The one place the CLI writes to stdout: the text and a newline. A reader
/// that hung up (`cairn ... | head -c 10`) is a normal end, not a failure.
pub fn print_text(text: &str) {
    write_text(Stream::Stdout, text);
}

fn write_text(stream: Stream, text: &str) {
    let mut out: Box<dyn Write> = match stream {
        Stream::Stdout => Box::new(std::io::stdout().lock()),
        Stream::Stderr => Box::new(std::io::stderr().lock()),
    };
    let written = writeln!(out, "{}", text.trim_end()).and_then(|()| out.flush());
    if let Err(error) = written
        && error.kind() != std::io::ErrorKind::BrokenPipe
    {
        tracing::warn!(%error, "cannot write to stdout");
    }
}
