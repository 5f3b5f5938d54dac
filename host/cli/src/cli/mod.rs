//! The command line, in one place: the subcommands, the option groups they share
//! ([`options`], with the library driver's groups in [`driver_args`]), the library's named
//! choices as clap values ([`choice`]), how errors, output and signals end the program.
//!
//! Exit statuses: 0 on success (and for `--help`, `--version`); 1 with one `error:` line on
//! stderr for any refusal or failure, argument-parser errors included; 128 + the signal for
//! SIGINT (130), SIGTERM (143) and SIGHUP (129), after removing the run's temporary files; a
//! closed standard output ends the program quietly, as SIGPIPE ends other tools.
//!
//! The program's name, the subcommands and their parsing are in `command.rs`; the exit
//! status, `error:`/`note:` lines, standard output and signals in `console.rs`.

pub mod bench;
pub mod choice;
mod command;
mod console;
pub mod driver_args;
pub mod grayscott;
pub mod heat;
pub mod options;
pub mod physarum;
pub mod serve;
pub mod settings;

pub use command::{Cli, Command, PROGRAM, one_process_only, parse, parse_as};
pub use console::{StdoutError, finish, handle_signals, note, print, rank_error};
pub use simulations::driver::{destination, progress_bar, rate};
