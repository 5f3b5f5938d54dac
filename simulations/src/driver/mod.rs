//! One driver for every simulation, built in or written outside this crate: the output and
//! state options every simulation shares ([`OutputOptions`], [`StateOptions`]: plain values a
//! command fills in, e.g. from `host_cli::cli::driver_args`' clap twins), their checks, and
//! the one step loop ([`StepLoop`]: chunks up to what is due, frames when due, the state
//! outputs when due, with [`LoopHooks`] between chunks), and a command's run through it
//! ([`Driver`]) that takes a [`DrivenSimulation`] to its total step count with frames (GIF, MP4,
//! PNG frames, the final PNG), `--save`, checkpoints and `--resume`, a progress bar, and
//! signals that remove unfinished outputs ([`handle_signals`]). `serve`'s sessions step
//! through the same [`StepLoop`] (`host_cli::serve::session`).

mod console;
mod frames;
mod run;
mod simulation;
mod state;
mod step_loop;

pub use console::{await_signal_exit, destination, handle_signals, progress_bar, rate};
pub use frames::{
    Derived, FrameDefaults, Frames, MAX_FPS, MP4_MIN_SIDE, OutputOptions, Target, check_targets, palette,
};
pub use run::{Driver, Finishing, Report};
pub use simulation::DrivenSimulation;
pub use state::{State, StateOptions, resumed};
pub use step_loop::{FramesDue, LoopHooks, StepLoop};
