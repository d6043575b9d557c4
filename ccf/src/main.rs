//! The `ccf` binary: parses the arguments, runs the command, turns an error into a message and
//! an exit status.

use std::io::Write;
use std::process::ExitCode;

use ccf::cli::Cli;
use ccf::error::EXIT_ERROR;
use clap::Parser;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match ccf::run(cli.command) {
        Ok(status) => status,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "ccf: {error}");
            EXIT_ERROR
        }
    };
    ExitCode::from(status as u8)
}
