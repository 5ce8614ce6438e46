#![forbid(unsafe_code)]

use std::process::ExitCode;

/// mimalloc for the whole process: see the comment at its line in Cargo.toml.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cairn::cli::main()
}
