//! The `rust-gpu-sim` command as a library: the command line ([`cli`]: subcommands, the option
//! groups they share, exit statuses) and the live view ([`serve`]), on the `simulations`
//! library, and the settings document both write ([`settings_document`]). The binary
//! (`src/main.rs`) only dispatches; a model crate reuses these pieces.

// The simulations' kernel images, linked into whatever links this crate (simulations/src/cuda/images.rs).
use simulations_images as _;

pub mod cli;
pub mod serve;
pub mod settings_document;
