//! `host`: the command line. Parses it and dispatches to the subcommand; the options, their
//! checks and the exit statuses live in [`cli`].

mod cli;

use std::process::ExitCode;

use cli::Command;

fn main() -> ExitCode {
    let (cli, given) = match cli::parse() {
        Ok(parsed) => parsed,
        Err(status) => return status,
    };
    if let Err(e) = cli::handle_signals() {
        return cli::finish(Err(e));
    }
    cli::finish(match cli.command {
        Command::Grayscott(args) => cli::grayscott::run(*args, &given),
        Command::Heat(args) => cli::heat::run(*args, &given),
        Command::Physarum(args) => cli::physarum::run(*args, &given),
        Command::Bench { what } => cli::bench::run(what),
    })
}
