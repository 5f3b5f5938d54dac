//! `serve`: watch and steer simulations from a browser.
//!
//! The server ([`server`]) runs the models of a [`Registry`]: the built-in ones
//! ([`Registry::builtin`]), and any model that implements [`LiveModel`] (a model crate
//! registers its own and calls [`run`]). Each session is a thread of its own ([`session`])
//! that owns its simulation; values from the page are checked by the server and the model
//! ([`settings`]).

pub mod builtin;
pub mod model;
pub mod protocol;
pub mod registry;
mod server;
pub mod session;
pub mod settings;

pub use model::{Control, ControlKind, Demand, LiveModel, ParameterMapImage, PresetInfo, Recorded, Start};
pub use registry::Registry;
pub use server::{CONNECTIONS, CONNECTIONS_PER_CLIENT, run};
