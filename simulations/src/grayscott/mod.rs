//! Gray-Scott reaction-diffusion: parameters and presets, initial conditions, and the
//! simulation value that the CLI, tests and examples drive.
//!
//! ```no_run
//! use simulations::grayscott::{GrayScott, Setup};
//! use simulations::Device;
//! let setup = Setup::new(256, 256, simulations::grayscott::preset("coral").unwrap().rates());
//! let mut sim = GrayScott::new(&setup, &Device::Cpu, simulations::grayscott::Variant::Cpu)?;
//! sim.step(1000)?;
//! let mut levels = vec![0u8; 256 * 256];
//! sim.levels(&mut levels)?;
//! # Ok::<(), simulations::Error>(())
//! ```
//!
//! The presets live in `presets.rs`, the [`Setup`] in `setup.rs`, the [`Variant`] choice and
//! [`select`] in `variant.rs`, the [`GrayScott`] value in `simulation.rs`, the [`Engine`] trait
//! in `engine.rs` and the brush's [`disc_cells`] in `brush.rs`.

mod brush;
pub mod cpu;
pub mod cuda;
mod driven;
mod engine;
pub mod init;
mod launch;
pub mod map;
pub mod parts;
mod piece;
mod presets;
mod settings;
mod setup;
mod simulation;
mod variant;

pub use brush::disc_cells;
pub use driven::GrayScottFrames;
pub use engine::Engine;
pub use init::{Init, initial_fields};
pub use kernels::grayscott::Rates;
pub use presets::{DEFAULT_DT, DEFAULT_DU, DEFAULT_DV, PRESETS, Preset, preset};
pub use settings::{Choices, DEFAULT_PRESET, DEFAULT_SIZE, MAX_RATE, named_preset};
pub use setup::{MAX_SIDE, Setup};
pub use simulation::{GrayScott, StartFields};
pub use variant::{Variant, select};
