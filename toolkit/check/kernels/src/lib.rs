//! One small kernel per intrinsic of `ptxkit-device`: each writes what the intrinsic returned
//! to an output buffer, so the GPU tests compare it with the expected values, and the PTX
//! tests find the instruction it promises in the kernel's body. One module per area.
//!
//! Two PTX modules (features): `classic` (the default; sm_80 PTX) and `hopper` (clusters,
//! distributed shared memory, `mbarrier` phases; sm_90 PTX with ISA 8.1, built by `../build.rs`
//! as its own module). The check crate's build of this crate has both, for the kernels'
//! handles.

#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

#[cfg(feature = "hopper")]
pub mod cluster;
#[cfg(feature = "classic")]
pub mod constant;
#[cfg(feature = "classic")]
pub mod debug;
#[cfg(feature = "classic")]
pub mod generic;
#[cfg(feature = "classic")]
pub mod host_api;
#[cfg(feature = "classic")]
pub mod math;
#[cfg(feature = "classic")]
pub mod memory;
#[cfg(feature = "classic")]
pub mod safe;
#[cfg(feature = "classic")]
pub mod thread_warp;
