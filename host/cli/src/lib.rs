//! The `rust-gpu-sim` command as a library: the command line ([`cli`]: subcommands, the option
//! groups they share, exit statuses) and the live view ([`serve`]), on the `simulations`
//! library, and the settings document both write ([`settings_document`]). The binary
//! (package `host`, `host/src/main.rs`) only dispatches; a model crate reuses these pieces.

// The simulations' kernel images: linked by the binary (package `host`) and by whatever else
// links this crate, not by it, so that a kernel edit rebuilds it beside them; the unit tests
// link them here (simulations/src/cuda/images.rs).
#[cfg(test)]
use simulations_images as _;

pub mod cli;
pub mod serve;
pub mod settings_document;
