//! Gray-Scott reaction-diffusion.
//!
//! dU/dt = Du·∇²U − U·V² + F·(1−U),  dV/dt = Dv·∇²V + U·V² − (F+k)·V
//!
//! Explicit Euler with step `dt`, the 5-point Laplacian (−4 centre + 4 neighbours) on a
//! periodic grid, U and V clamped to [0, 1] after each step, float32. Fields are row-major
//! `width × height` arrays, index `y * width + x`.
//!
//! The kernels follow the reference write-up's progression, and go past it:
//! 1. [`gray_scott_laplacian`] + [`gray_scott_update`]: two launches per step, the
//!    Laplacians go through device memory (the write-up's "v0" runs only the Laplacian on the
//!    GPU, "v1" both).
//! 2. [`gray_scott_fused`]: one launch per step, Laplacian and update in registers, ping-pong
//!    buffers (the write-up's final step; the default); [`gray_scott_fused_x4`] is the same
//!    with four columns per thread through `float4` loads and stores.
//! 3. [`gray_scott_tiled`]: fused, with the block's cells and halo staged in shared memory.
//! 4. [`gray_scott_temporal`]: several steps per launch on a tile held in registers, so a
//!    step costs a fraction of the 16 bytes per cell that any single-step kernel must move.
//! 5. [`gray_scott_streaming_s8`] (and `_s1` .. `_s7`): temporal blocking by 2.5-D streaming,
//!    blocks marching down strips with a wavefront of time levels, so redundant halo work is
//!    only at the strip's sides.
//!
//! Beside the progression, [`gray_scott_map`] steps many small tiles with their own (F, k)
//! in one launch, for the parameter map.
//!
//! The kernels are four PTX modules, each in a file of its own so that an edit of one
//! recompiles only its module: [`progression`] (steps 1 to 4 and the map: the `grayscott`
//! module) and [`streaming`] (step 5's instances, most of the PTX: `grayscott_streaming`,
//! `grayscott_streaming_c1`, and `grayscott_pdl`, the one-cell instances for Hopper's
//! programmatic dependent launch, an `sm_90` module). [`common`], which all of them load,
//! holds the rates, the per-cell math and the kernels' tile shapes.

pub mod common;
#[cfg(feature = "grayscott")]
pub mod progression;
#[cfg(any(feature = "grayscott_streaming", feature = "grayscott_streaming_c1", feature = "grayscott_pdl"))]
pub mod streaming;

pub use common::*;
#[cfg(feature = "grayscott")]
pub use progression::*;
#[cfg(any(
    feature = "grayscott_streaming",
    feature = "grayscott_streaming_c1",
    feature = "grayscott_pdl"
))]
pub use streaming::*;
