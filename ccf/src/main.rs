//! The `ccf` binary: parses the arguments, runs the command, turns an error into a message and
//! an exit status.

use std::io::Write;
use std::process::ExitCode;

use ccf::cli::Cli;
use ccf::error::{CliError, EXIT_ERROR};
use clap::Parser;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help, the version, or a usage error; help or the version not written is an error too.
        Err(parse) => {
            let status = match parse.print() {
                Ok(()) => parse.exit_code(),
                Err(error) => {
                    let _ = writeln!(std::io::stderr(), "ccf: {}", CliError::from(error));
                    EXIT_ERROR
                }
            };
            return ExitCode::from(status as u8);
        }
    };
    let status = match ccf::run(cli.command) {
        Ok(status) => status,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "ccf: {error}");
            EXIT_ERROR
        }
    };
    ExitCode::from(status as u8)
}
