//! The `rust-gpu-sim` command as a library: the command line ([`cli`]: subcommands, the option
//! groups they share, exit statuses) and the live view ([`serve`]), on the `simulations`
//! library, and the settings document both write ([`settings_document`]). The binary
//! (`src/main.rs`) only dispatches; a model crate reuses these pieces.

pub mod cli;
pub mod serve;
pub mod settings_document;
