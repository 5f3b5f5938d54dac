//! `host`: the command line. Parses it and dispatches to the subcommand; the options, their
//! checks and the exit statuses live in [`cli`].

mod cli;

use std::process::ExitCode;

use cli::Command;

fn main() -> ExitCode {
    let cli = match cli::parse() {
        Ok(cli) => cli,
        Err(status) => return status,
    };
    if let Err(e) = cli::handle_signals() {
        return cli::finish(Err(e));
    }
    cli::finish(match cli.command {
        Command::Grayscott(args) => cli::grayscott::run(*args),
        Command::Heat(args) => cli::heat::run(*args),
        Command::Physarum(args) => cli::physarum::run(*args),
        Command::Bench { what } => cli::bench::run(what),
    })
}
