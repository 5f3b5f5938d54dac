//! GPU kernels for the simulations, written in Rust and compiled to PTX.
//!
//! Layout (one file per simulation, kernels in the order of the optimisation story):
//! - [`grayscott`], [`heat`], [`physarum`]: each simulation's per-cell math, then its kernels.
//! - [`colormap`]: per-frame min/max reduction and the colormap that turns a field into
//!   8-bit palette levels.
//! - [`diagnostics`]: kernels that exercise the device layer in the GPU tests.
//! - [`halo`]: the halo copy between GPUs of a split run.
//! - [`math`]: per-cell helpers that several of them use.
//!
//! The kernels are compiled as seven PTX modules, each of its own cargo feature (all on by
//! default): `heat`, `grayscott` (Gray-Scott's kernels up to the temporal one, the map, and
//! `diagnostics`), `grayscott_streaming` and `grayscott_streaming_c1` (the streaming kernels'
//! instances, most of Gray-Scott's PTX), `grayscott_pdl` (the one-cell streaming kernels
//! again, for Hopper's programmatic dependent launch: the one `sm_90` module), `physarum`, and
//! `common` (`colormap`, `halo`), so
//! that a kernel edit recompiles only the modules that load its file and reassembles only
//! those whose PTX changed (Gray-Scott's files: `grayscott/progression.rs` is the `grayscott`
//! module, `grayscott/streaming.rs` the three streaming ones, `grayscott/common.rs` all four).
//!
//! Everything GPU-specific comes from the toolkit's device crate, `ptxkit_device` (thread
//! indices, barriers, shared tiles, atomics, `ld.global.nc`, `device_assert!`, `#[kernel]`
//! and the `Kernel` trait of the generated handles), exactly as an outside kernel crate uses
//! it.
//!
//! The per-cell math is plain `#[inline(always)]` functions that compile for the host too, so
//! the CPU backend computes with exactly the same expressions. Structs passed to kernels by
//! value derive `bytemuck::Pod`.
//!
//! ## One kernel, from declaration to launch
//!
//! ```ignore
//! // kernels/src/grayscott/progression.rs
//! /// One Gray-Scott step. Thread mapping: ... Bytes per cell: 16.
//! #[kernel]
//! pub unsafe fn gray_scott_fused(
//!     u: *const f32, v: *const f32, u_next: *mut f32, v_next: *mut f32,
//!     width: u32, height: u32, rates: Rates, rows: u32,
//! ) { ... }
//! ```
//! In the PTX build this is the entry point `gray_scott_fused`; in the host build
//! `#[kernel]` leaves a unit struct of the same name implementing [`ptxkit_device::Kernel`], which the
//! host launches like a function call, the tuple checked against the parameters at compile
//! time:
//! ```ignore
//! // simulations/src/grayscott/cuda/launch.rs
//! use kernels::grayscott::gray_scott_fused;
//! gpu.launch(gray_scott_fused, cfg, (&u, &v, &mut u_next, &mut v_next, width, height, rates, rows))?;
//! ```
//! `#[kernel(launch_bounds(256, 2))]` adds CUDA C's `__launch_bounds__`, and
//! `#[kernel(dynamic_shared = BYTES)]` declares the dynamic shared memory every block gets.
//! The host's table of kernels (`simulations::cuda::kernels()`) is generated from the PTX by
//! `ptxkit-build`: there is no list to keep by hand.

#![cfg_attr(not(test), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, stdarch_nvptx, asm_experimental_arch))]
// Kernel bodies compile for the host too (`#[kernel]` checks them there), so the features
// their code uses are on in both builds.
#![feature(core_float_math, stmt_expr_attributes)]

// One PTX module per cargo feature (simulations/images/build.rs builds each with only its feature on; the
// host's build of this crate has them all): rustc reads only the files a module's `mod` items
// load, so an edit of `heat.rs` rebuilds the heat module alone. Files every module loads
// (this one, `math.rs`) rebuild them all. A kernel belongs to exactly one module (in
// `grayscott/streaming.rs`, a `#[cfg(feature = ...)]` on each kernel says which).
#[cfg(feature = "common")]
pub mod colormap;
#[cfg(feature = "grayscott")]
pub mod diagnostics;
#[cfg(any(
    feature = "grayscott",
    feature = "grayscott_streaming",
    feature = "grayscott_streaming_c1",
    feature = "grayscott_pdl"
))]
pub mod grayscott;
#[cfg(feature = "common")]
pub mod halo;
#[cfg(feature = "heat")]
pub mod heat;
pub mod math;
#[cfg(feature = "physarum")]
pub mod physarum;

pub use ptxkit_device::kernel;
