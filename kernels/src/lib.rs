//! GPU kernels for the simulations, written in Rust and compiled to PTX.
//!
//! Layout (one file per simulation, kernels in the order of the optimisation story):
//! - [`cuda_std`]: the device-support layer (thread indices, barrier, shared tiles, atomics),
//!   our counterpart of rust-cuda's `cuda_std`. Exists only in the PTX build.
//! - [`grayscott`]: Gray-Scott reaction-diffusion: per-cell math, then the `laplacian`,
//!   `update` and `fused` kernels.
//! - [`colormap`]: per-frame min/max reduction and the colormap that turns a field into
//!   8-bit palette levels.
//!
//! The per-cell math is plain `#[inline(always)]` functions that compile for the host too, so
//! the CPU backend computes with exactly the same expressions. Kernel entry points carry
//! [`kernel`] and exist only when compiling for `nvptx64`.
//!
//! Adding a kernel: write `#[kernel] pub unsafe fn my_kernel(...)` in the simulation's file,
//! then give its name to the host's kernel table (`host/src/cuda/kernels.rs`).

#![cfg_attr(not(test), no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_ptx, stdarch_nvptx, asm_experimental_arch, stmt_expr_attributes)
)]
#![feature(core_float_math)]

#[cfg(target_arch = "nvptx64")]
pub mod cuda_std;

// `#[kernel]`'s host handles name `::kernels::abi`, which must resolve inside this crate too.
extern crate self as kernels;

pub mod abi;
pub mod colormap;
pub mod diagnostics;
pub mod grayscott;
pub mod heat;
pub mod physarum;

pub use kernel_macros::kernel;

/// A fault inside a kernel (an impossible branch, a failed `debug_assert`) traps: the launch
/// fails with `CUDA_ERROR_ILLEGAL_INSTRUCTION`, which the host reports.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; nothing after it runs.
    unsafe { core::arch::nvptx::trap() }
}
