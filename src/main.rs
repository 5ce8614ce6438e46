use std::process::ExitCode;

fn main() -> ExitCode {
    cairn::cli::main()
}
