//! `rust-gpu-sim bench`: times each GPU variant with device events against the device-to-device copy
//! bandwidth measured in the same run (the practical roofline of a memory-bound stencil).
//!
//! Method: warm up (module load, JIT, graph capture), run a fixed number of steps between two
//! events, repeat, take the median ([`time_per_step`], the one timing loop of every bench).
//! Each simulation's bench ([`grayscott`], [`heat`], [`physarum`]) returns a [`Report`]: the
//! [`Machine`] and what was measured, printed as a table and serialised as JSON.
//!
//! The shared pieces live in `machine.rs` ([`Machine`], the copy bandwidth, the date),
//! `report.rs` ([`Report`], [`Measurements`]) and `timing.rs` ([`time_per_step`], [`Timing`]).

pub mod encode;
pub mod grayscott;
pub mod heat;
mod machine;
pub mod physarum;
mod report;
pub mod scaling;
mod timing;

pub use machine::{Machine, copy_bandwidth, today};
pub use report::{Measurements, Report};
use timing::median;
pub use timing::{Timing, time_per_step};
