//! `fpdb` binary: everything lives in [`cli`]; this only hands over.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
