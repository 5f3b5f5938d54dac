//! 3-D heat diffusion with RK4: setup and validation, initial conditions, the exact solution
//! of the sine eigenmode, and the simulation value that the CLI, tests and bench drive.
//!
//! Each in a file of its own: the part limits and RK4's stability bound (`limits.rs`), the
//! setup (`setup.rs`), the variants (`variant.rs`), the starting field (`initial.rs`), the
//! exact solution (`exact.rs`), the backends' trait (`engine.rs`) and the simulation
//! (`simulation.rs`).

pub mod cpu;
pub mod cuda;
mod driven;
mod engine;
mod exact;
mod initial;
mod limits;
mod overlap;
pub mod parts;
mod settings;
mod setup;
mod simulation;
mod slab;
mod variant;

pub use driven::HeatFrames;
pub use engine::HeatEngine;
pub use exact::{has_exact_solution, sine_error};
pub use initial::{initial_field, initial_range, initial_slab};
pub use limits::{MAX_SIDE, MAX_Z, RK4_REAL_STABILITY, check_part};
pub use settings::{
    DEFAULT_ALPHA, DEFAULT_H, DEFAULT_INIT, DEFAULT_SIZE, DEFAULT_STEPS, HeatChoices, MAX_COEFFICIENT, MAX_H,
    MAX_VALUE, MIN_H,
};
pub use setup::{HeatInit, HeatSetup};
pub use simulation::Heat;
pub use variant::HeatVariant;
