//! The simulations' kernel images: the `kernels` crate's PTX modules (one per simulation, and
//! `common`), each with its cubins, and the table of every kernel, built by `build.rs` and
//! embedded here.
//!
//! The `simulations` library reads them through one linked symbol instead of depending on this
//! crate, so that a kernel edit recompiles this crate and relinks the program, not the library
//! (docs/startup.md, the edit-to-run loop). A program (or test, example, Python module) that
//! uses `simulations` therefore depends on this crate too and names it once:
//! ```ignore
//! use simulations_images as _;
//! ```
//! Without it the link fails with an undefined `simulations_images_kernel_images` symbol.

#![no_std]

// The kernel table (in `include_kernels!`) names each kernel's host handle by its path in the
// host build of `kernels`, which gives its parameters.
use kernels as _;

/// Every kernel image of the simulations, under the symbol `simulations::cuda::IMAGES` links
/// to.
#[unsafe(export_name = "simulations_images_kernel_images")]
pub static KERNEL_IMAGES: ptxkit_host::KernelImages = ptxkit_host::include_kernels!("kernels");
