//! The CUDA backend: device buffers and CUDA-graph replay of the per-step launches
//! ([`engine`]), the GPU variants of the progression, one unit each ([`schemes`]), the frame
//! pipeline ([`frames`]), the launch shapes and their tuning ([`tuning`]), and the per-kernel
//! launchers ([`launch`]), public so GPU tests can run each kernel alone against its CPU
//! reference.

mod engine;
mod frames;
mod launch;
pub(crate) mod schemes;
mod tuning;

#[cfg(test)]
mod tests;

pub use engine::*;
use frames::*;
pub use launch::*;
pub use tuning::*;
