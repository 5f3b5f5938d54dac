//! Physarum: setup and validation, initial agents and trail, the rendering of the trail, and
//! the simulation value that the CLI, tests, sensitivity analysis and bench drive. The model
//! itself (per-agent and per-cell math) lives in `kernels::physarum`, shared by every backend.
//!
//! Each in a file of its own: the setup, its limits and choices (`setup.rs`), the presets
//! (`presets.rs`), the variants (`variant.rs`), the agents (`agents.rs`), the trail
//! (`trail.rs`), the backends' trait (`engine.rs`), the simulation (`simulation.rs`) and the
//! linear toy model (`toy_model.rs`).

mod agents;
pub mod cpu;
pub mod cuda;
pub mod driven;
mod engine;
mod presets;
pub mod sensitivity;
mod settings;
mod setup;
mod simulation;
mod toy_model;
mod trail;
mod variant;

pub use agents::{Agents, initial_agents};
pub use driven::PhysarumFrames;
pub use engine::PhysarumEngine;
pub use kernels::physarum::Params;
pub use presets::{PHYSARUM_PRESETS, PhysarumPreset, physarum_preset};
pub use settings::{
    DEFAULT_AGENTS, DEFAULT_PRESET, DEFAULT_SIZE, DEFAULT_STEPS, MAX_TRAIL, PhysarumChoices,
    named_physarum_preset,
};
pub use setup::{AgentInit, MAX_AGENTS, MAX_SIDE, PhysarumSetup, Sensing};
pub use simulation::Physarum;
pub use toy_model::{ToyAnalysis, ToyModel};
pub use trail::{initial_trail, luminance, trail_from_luminance, trail_levels};
pub use variant::PhysarumVariant;
