//! GPU simulations with kernels written in Rust: the library under the `rust-gpu-sim`
//! command (packages `host` and `host-cli`), usable by any crate (`examples/barkley`, docs/models.md).
//!
//! - [`driver`]: the one step loop any simulation runs through, with every output,
//!   checkpoints and `--resume`, and the options a command parses into (`host` parses them
//!   with clap).
//! - [`choice`]: named choices (`--backend`, `--variant`, `--init`, ...) without an argument
//!   parser: their names and help, for a command line, settings files and `serve`.
//! - [`cuda`]: the embedded kernels and the GPU opened with them (the toolkit's `ptxkit-host`).
//! - [`split`]: a grid split into bands, in parts on several GPUs or one per process (NCCL):
//!   bands, halos, placement, launcher ranks, and the one engine every model's split runs on.
//! - [`grayscott`]: Gray-Scott reaction-diffusion (CPU and CUDA backends).
//! - [`heat`]: 3-D heat diffusion with RK4.
//! - [`physarum`]: Physarum agents and trail, and its sensitivity analysis.
//! - [`input`]: input images read whole (regular files, FIFOs, `<(...)`) and decoded.
//! - [`render`]: palettes, the CPU colormap, GIF, PNG and MP4 writers.
//! - [`export`]: raw fields as NumPy `.npy`/`.npz` and VTK `.vti`.
//! - [`outfile`]: the rule every output file follows: written whole or not at all, nothing left
//!   behind by an interrupted run.
//! - [`checkpoint`]: versioned checkpoint files for bit-identical restarts.
//! - [`timeline`]: where a run's start-up time goes (`RUST_GPU_SIM_TIMELINE=1`).
//! - [`view`]: where a running simulation's fields live, for zero-copy access (DLPack).
//!
//! A simulation is a value: build it with a [`Setup`](grayscott::Setup) and a [`Device`],
//! step it, and ask it for frames. The CLI, tests and examples all use this API.

// The kernel images, for the unit tests (programs link them themselves: src/cuda/images.rs).
#[cfg(test)]
use simulations_images as _;

pub mod autotune;
pub mod bench;
pub mod checkpoint;
pub mod choice;
pub mod cuda;
pub mod driver;
pub mod error;
pub mod export;
pub mod faults;
pub mod grayscott;
pub mod heat;
pub mod input;
pub mod memory;
pub mod outfile;
pub mod physarum;
pub mod render;
pub mod resources;
pub mod rng;
pub mod settings;
pub mod split;
pub mod timeline;
pub mod view;

use std::sync::Arc;

pub use choice::Choice;
pub use error::{Error, Result};

/// Where a simulation runs.
#[derive(Clone, Debug)]
pub enum Device {
    /// All CPU cores, through rayon.
    Cpu,
    /// A CUDA GPU.
    Cuda(Arc<cuda::Gpu>),
}

crate::choice! {
    /// The `--backend` choice.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub enum BackendChoice {
        /// The GPU if one is usable, else the CPU (with a notice).
        #[default]
        Auto = "auto",
        /// The GPU; an error if there is none.
        Cuda = "cuda",
        /// The CPU.
        Cpu = "cpu",
    }
}

impl Device {
    /// Resolves a `--backend` choice. With `Auto` and no usable GPU, returns the CPU and a
    /// one-line notice saying why.
    pub fn select(choice: BackendChoice) -> Result<(Device, Option<String>)> {
        match choice {
            BackendChoice::Cpu => Ok((Device::Cpu, None)),
            BackendChoice::Cuda => Ok((Device::Cuda(cuda::open()?), None)),
            BackendChoice::Auto => match cuda::open() {
                Ok(gpu) => Ok((Device::Cuda(gpu), None)),
                Err(e) => Ok((Device::Cpu, Some(format!("{e}; running on the CPU (much slower)")))),
            },
        }
    }
}
